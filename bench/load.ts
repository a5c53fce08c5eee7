/**
 * Load generator, run by bench/run.ts as its own process (so it never shares an event loop with a
 * server): autocannon against one server for one workload, a warm-up run first, then a measured run
 * of fixed duration, with the server's CPU time read just before and just after the measured run.
 * Prints one line `RESULT <json>` on stdout. The runner starts one per (workload, server, round).
 *
 *   tsx bench/load.ts '{"url":"http://127.0.0.1:1234/","workload":"send-task","connections":50,
 *                       "warmupSec":1.5,"durationSec":2.5,"getTaskPool":500}'
 *
 * Every request carries a fresh messageId (setupRequest); responses are checked (onResponse) so a
 * server answering JSON-RPC errors with HTTP 200 cannot look fast.
 */
import autocannon from 'autocannon';
import { processTreeCpuMicros } from './db-cpu.js';
import { getJson, pool, rpcClient } from './http.js';
import {
  A2A_JSON,
  REST_HEADERS,
  RPC_HEADERS,
  STREAM_EVENTS_PER_REQUEST,
  countSseEvents,
  extractTask,
  restSendMessageBody,
  sendMessageBody,
  taskIdBody,
  type WorkloadId,
} from './workloads.js';

export interface LoadOptions {
  url: string;
  /**
   * Several replicas of one server (ours-2replicas): every replica's URL, `url` being the first.
   * autocannon spreads the connections over them round-robin (its own multi-URL support: one run,
   * one latency histogram); the server CPU is the sum of the replicas'; GetTask's tasks are created
   * through the first replica and read through all; a two-turn follow-up goes to another replica
   * than the one that parked its task (see crossReplicaTwoTurn).
   */
  urls?: string[];
  workload: WorkloadId;
  connections: number;
  warmupSec: number;
  durationSec: number;
  /** Number of tasks created before the GetTask workload (requests pick among them). */
  getTaskPool: number;
  /** REST workloads: the server's `message:send` path (e.g. `/message:send`, `/rest/message:send`). */
  restSendPath?: string;
  /** The database server the server uses (redis-server, PostgreSQL's postmaster): its CPU counts too. */
  dbPid?: number;
}

export interface LoadResult {
  workload: WorkloadId;
  durationSec: number;
  requests: number;
  /**
   * requests / duration of the measured run. Not a median of per-sample rates: runs are a few
   * seconds, and short samples mostly measure the load generator's timer lateness. The runner's
   * median over interleaved rounds is what absorbs foreign load.
   */
  reqPerSec: number;
  /** SSE events received (streaming workload only). */
  events: number;
  /** reqPerSec × SSE events per response. */
  eventsPerSec: number;
  latencyMs: { p50: number; p99: number; mean: number };
  /** CPU time (user + system) of the server and of its database server during the measured run / requests completed in it. */
  cpuMicrosPerRequest: number;
  /** The database server's share of cpuMicrosPerRequest (redis-server, PostgreSQL's processes). */
  dbCpuMicrosPerRequest?: number;
  /** Responses that were not the expected A2A result (JSON-RPC error, wrong state, short stream...). */
  bad: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  firstBadSample?: string;
  /**
   * Two-turn on several replicas: follow-ups sent to another replica than the one that parked
   * their task (`cross`), to the same one because no task parked elsewhere was waiting (`same`).
   */
  followUps?: { cross: number; same: number };
}

interface Counters {
  ok: number;
  bad: number;
  events: number;
  firstBad?: string;
  crossFollowUps: number;
  sameFollowUps: number;
}

/**
 * Two-turn across replicas: the tasks parked by turn 1 on each replica and not yet followed up,
 * oldest first (kept from the warm-up to the measured run: they are still parked).
 */
type ParkedByReplica = string[][];

type SendResult = { message?: { messageId?: unknown; role?: unknown }; task?: { id?: string; status?: { state?: string } } };
type RpcResult = {
  result?: SendResult & { id?: string };
  error?: unknown;
};

function parse(body: string): RpcResult | undefined {
  try {
    return JSON.parse(body) as RpcResult;
  } catch {
    return undefined;
  }
}

/**
 * A REST SendMessage answer: 2xx, `application/a2a+json`, a body that parses to `{ message }` or
 * `{ task }` (a google.rpc.Status error body has neither, and `error`); undefined when it is not one.
 */
function restSendResult(status: number, body: string, headers: object | undefined): SendResult | undefined {
  if (status < 200 || status > 299) return undefined;
  let type: unknown;
  for (const [key, value] of Object.entries(headers ?? {})) if (key.toLowerCase() === 'content-type') type = value;
  if (typeof type !== 'string' || !type.toLowerCase().startsWith(A2A_JSON)) return undefined;
  let parsed: (SendResult & { error?: unknown }) | undefined;
  try {
    parsed = JSON.parse(body) as SendResult & { error?: unknown };
  } catch {
    return undefined;
  }
  return parsed && typeof parsed === 'object' && parsed.error === undefined ? parsed : undefined;
}

type Ctx = { taskId?: string; replica?: number };

/** The replicas' ports, in the order of `opts.urls` (undefined: one server). */
function replicaPorts(opts: LoadOptions): string[] | undefined {
  return opts.urls && opts.urls.length > 1 ? opts.urls.map((u) => new URL(u).port) : undefined;
}

/**
 * Two-turn across replicas. autocannon keeps a connection on one replica, and a connection's turn 2
 * is built right after its turn-1 answer, so the follow-up cannot wait for "its" task to reach
 * another connection. Instead every replica has a queue of parked tasks: turn 1 on replica r
 * appends its task to r's queue; turn 2 on r takes the oldest task parked on another replica
 * (a cross-replica follow-up: loaded from the shared store, run under a lease taken on r). The
 * queues are primed before the run with `connections` parked tasks per replica, so with the
 * replicas going at about the same pace a task parked elsewhere is always waiting; when none is
 * (one replica ran ahead), turn 2 takes the oldest task of its own replica's queue instead and
 * counts it as a same-replica follow-up (reported). Every parked task is followed up exactly once.
 */
function crossReplicaTwoTurn(
  ports: string[],
  parked: ParkedByReplica,
  counters: Counters,
  post: (
    makeBody: (context: Ctx, req: autocannon.Request) => string,
    check: (status: number, body: string, context: Ctx) => boolean,
  ) => autocannon.Request,
): autocannon.Request[] {
  const replicaOf = (req: autocannon.Request) => {
    const i = ports.indexOf(String((req as { port?: unknown }).port));
    if (i === -1) throw new Error(`two-turn: request to an unknown replica (port ${String((req as { port?: unknown }).port)})`);
    return i;
  };
  return [
    post(
      (context, req) => {
        context.taskId = undefined;
        context.replica = replicaOf(req);
        return sendMessageBody('input');
      },
      (s, b, context) => {
        const task = parse(b)?.result?.task;
        if (s === 200 && task?.status?.state === 'TASK_STATE_INPUT_REQUIRED' && task.id && context.replica !== undefined) {
          parked[context.replica].push(task.id);
          return true;
        }
        return false;
      },
    ),
    post(
      (_context, req) => {
        const here = replicaOf(req);
        for (let step = 1; step < ports.length; step += 1) {
          const id = parked[(here + step) % ports.length].shift();
          if (id !== undefined) {
            counters.crossFollowUps += 1;
            return sendMessageBody('more', { taskId: id });
          }
        }
        const own = parked[here].shift();
        if (own !== undefined) {
          counters.sameFollowUps += 1;
          return sendMessageBody('more', { taskId: own });
        }
        // Nothing parked anywhere (turn 1 failed, and was counted as bad): a follow-up to an
        // unknown task, counted as bad as well.
        return sendMessageBody('more', { taskId: 'missing-task-from-turn-1' });
      },
      (s, b) => s === 200 && parse(b)?.result?.task?.status?.state === 'TASK_STATE_COMPLETED',
    ),
  ];
}

function buildRequests(opts: LoadOptions, counters: Counters, taskIds: string[], parked: ParkedByReplica): autocannon.Request[] {
  const verdict = (good: boolean, body: string) => {
    if (good) counters.ok += 1;
    else {
      counters.bad += 1;
      if (counters.firstBad === undefined) counters.firstBad = body.slice(0, 300);
    }
  };
  const post = (makeBody: (context: Ctx, req: autocannon.Request) => string, check: (status: number, body: string, context: Ctx) => boolean) => ({
    method: 'POST' as const,
    setupRequest: (req: autocannon.Request, context: object) => ({ ...req, body: makeBody(context as Ctx, req) }),
    onResponse: (status: number, body: string, context: object) => verdict(check(status, body, context as Ctx), body),
  });
  const taskState = (body: string) => parse(body)?.result?.task?.status?.state;
  const restPost = (makeBody: () => string, check: (result: SendResult) => boolean) => {
    if (!opts.restSendPath) throw new Error(`${opts.workload}: the server has no REST path (restSendPath)`);
    return {
      method: 'POST' as const,
      path: opts.restSendPath,
      headers: { ...REST_HEADERS },
      setupRequest: (req: autocannon.Request) => ({ ...req, body: makeBody() }),
      onResponse: (status: number, body: string, _context: object, headers?: object) => {
        const result = restSendResult(status, body, headers);
        verdict(result !== undefined && check(result), `${status} ${body}`);
      },
    };
  };

  switch (opts.workload) {
    case 'send-message':
      return [
        post(
          () => sendMessageBody('message'),
          (s, b) => s === 200 && parse(b)?.result?.message !== undefined,
        ),
      ];
    case 'send-task':
      return [
        post(
          () => sendMessageBody('complete'),
          (s, b) => s === 200 && taskState(b) === 'TASK_STATE_COMPLETED',
        ),
      ];
    case 'send-message-rest':
      return [
        restPost(
          () => restSendMessageBody('message'),
          (r) => r.task === undefined && typeof r.message?.messageId === 'string' && r.message.role === 'ROLE_AGENT',
        ),
      ];
    case 'send-task-rest':
      return [
        restPost(
          () => restSendMessageBody('complete'),
          (r) => r.message === undefined && r.task?.status?.state === 'TASK_STATE_COMPLETED',
        ),
      ];
    case 'stream':
      return [
        post(
          () => sendMessageBody('stream', { streaming: true }),
          (s, b) => {
            const n = countSseEvents(b);
            counters.events += n;
            return s === 200 && n === STREAM_EVENTS_PER_REQUEST && b.includes('TASK_STATE_COMPLETED') && !b.includes('"error"');
          },
        ),
      ];
    case 'two-turn': {
      const ports = replicaPorts(opts);
      if (ports) return crossReplicaTwoTurn(ports, parked, counters, post);
      return [
        post(
          (context) => {
            context.taskId = undefined;
            return sendMessageBody('input');
          },
          (s, b, context) => {
            const parsed = parse(b)?.result?.task;
            if (s === 200 && parsed?.status?.state === 'TASK_STATE_INPUT_REQUIRED' && parsed.id) {
              context.taskId = parsed.id;
              return true;
            }
            return false;
          },
        ),
        post(
          // Turn 2: a follow-up on the parked task. If turn 1 failed there is no task: send a
          // follow-up to an unknown task, which is counted as bad as well.
          (context) => sendMessageBody('more', { taskId: context.taskId ?? 'missing-task-from-turn-1' }),
          (s, b) => s === 200 && taskState(b) === 'TASK_STATE_COMPLETED',
        ),
      ];
    }
    case 'get-task': {
      let i = 0;
      return [
        post(
          () => {
            i = (i + 1) % taskIds.length;
            return taskIdBody('GetTask', taskIds[i]);
          },
          (s, b) => s === 200 && typeof parse(b)?.result?.id === 'string',
        ),
      ];
    }
    default:
      throw new Error(`unknown workload ${String(opts.workload)}`);
  }
}

/** `count` tasks created through `url`: completed (GetTask), or parked in input-required (two-turn across replicas). */
async function createTasks(url: string, count: number, text: 'complete' | 'input' = 'complete'): Promise<string[]> {
  const client = rpcClient(url, 16);
  try {
    const ids = await pool(count, 16, async () => {
      const res = await client.post(sendMessageBody(text));
      const task = extractTask(res.body);
      if (!task || (text === 'input' && !res.body.includes('TASK_STATE_INPUT_REQUIRED'))) {
        throw new Error(`could not create a task for ${text === 'input' ? 'two-turn' : 'GetTask'}: ${res.status} ${res.body.slice(0, 200)}`);
      }
      return task.id;
    });
    return ids;
  } finally {
    client.close();
  }
}

/**
 * autocannon only stops on a sample tick: with its default 1 s interval a 2.5 s run lasts 3 s and a
 * 0.5 s warm-up 1 s. Quarter-second ticks keep short runs at their nominal length.
 */
const SAMPLE_MS = 250;

async function cannon(
  opts: LoadOptions,
  seconds: number,
  counters: Counters,
  taskIds: string[],
  parked: ParkedByReplica,
): Promise<autocannon.Result> {
  return autocannon({
    // Several replicas: autocannon's own multi-URL mode (connection i goes to urls[i % urls.length]).
    url: (opts.urls && opts.urls.length > 1 ? opts.urls : opts.url) as string,
    connections: opts.connections,
    duration: seconds,
    headers: { ...RPC_HEADERS },
    requests: buildRequests(opts, counters, taskIds, parked),
    timeout: 20,
    sampleInt: SAMPLE_MS,
  });
}

/** The server's own CPU time so far (µs), from its private /__bench/cpu endpoint. */
async function serverCpu(url: string): Promise<number> {
  const { cpu } = await getJson<{ cpu: number }>(url, '/__bench/cpu');
  if (typeof cpu !== 'number') throw new Error('/__bench/cpu: no cpu number in the answer');
  return cpu;
}

/** The CPU time of every replica, summed (one server: its own). */
async function serversCpu(opts: LoadOptions): Promise<number> {
  const cpus = await Promise.all((opts.urls && opts.urls.length > 0 ? opts.urls : [opts.url]).map((url) => serverCpu(url)));
  return cpus.reduce((a, b) => a + b, 0);
}

const newCounters = (): Counters => ({ ok: 0, bad: 0, events: 0, crossFollowUps: 0, sameFollowUps: 0 });

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  // GetTask: tasks created through the first replica (several replicas: read through all of them).
  const taskIds = opts.workload === 'get-task' ? await createTasks(opts.url, opts.getTaskPool) : [];
  const ports = replicaPorts(opts);
  const parked: ParkedByReplica = (ports ?? []).map(() => []);
  if (ports && opts.workload === 'two-turn') {
    // Primed: tasks parked on every replica, waiting for a follow-up from another one.
    const urls = opts.urls as string[];
    const primed = await Promise.all(urls.map((url) => createTasks(url, opts.connections, 'input')));
    primed.forEach((ids, i) => parked[i].push(...ids));
  }
  if (opts.warmupSec > 0) {
    await cannon(opts, opts.warmupSec, newCounters(), taskIds, parked);
  }
  const counters = newCounters();
  // Around the measured run only: the warm-up's JIT work must not count.
  const dbCpu = () => (opts.dbPid === undefined ? 0 : processTreeCpuMicros(opts.dbPid));
  const [cpuBefore, dbBefore] = [await serversCpu(opts), dbCpu()];
  const result = await cannon(opts, opts.durationSec, counters, taskIds, parked);
  const [cpuAfter, dbAfter] = [await serversCpu(opts), dbCpu()];
  const duration = result.duration > 0 ? result.duration : opts.durationSec;
  const requests = result.requests.total;
  const reqPerSec = requests / duration;
  const responses = counters.ok + counters.bad;
  const eventsPerRequest = responses > 0 ? counters.events / responses : 0;
  return {
    workload: opts.workload,
    durationSec: duration,
    requests,
    reqPerSec,
    events: counters.events,
    eventsPerSec: reqPerSec * eventsPerRequest,
    latencyMs: { p50: result.latency.p50, p99: result.latency.p99, mean: result.latency.mean },
    cpuMicrosPerRequest: requests > 0 ? (cpuAfter - cpuBefore + dbAfter - dbBefore) / requests : Number.NaN,
    ...(opts.dbPid === undefined ? {} : { dbCpuMicrosPerRequest: requests > 0 ? (dbAfter - dbBefore) / requests : Number.NaN }),
    bad: counters.bad,
    errors: result.errors,
    timeouts: result.timeouts,
    non2xx: result.non2xx,
    ...(counters.firstBad !== undefined ? { firstBadSample: counters.firstBad } : {}),
    ...(ports && opts.workload === 'two-turn' ? { followUps: { cross: counters.crossFollowUps, same: counters.sameFollowUps } } : {}),
  };
}

if (require.main === module) {
  const opts = JSON.parse(process.argv[2] ?? '{}') as LoadOptions;
  runLoad(opts).then(
    (result) => {
      process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
      process.exit(0);
    },
    (error: unknown) => {
      process.stderr.write(`load failed: ${error instanceof Error ? error.stack : String(error)}\n`);
      process.exit(1);
    },
  );
}
