/**
 * The fuzz suite's runner, shared by __tests__/fuzz/fuzz.test.ts and `npm run fuzz`: two real
 * routers on loopback (bare, and behind the full middleware preset), an agent that answers with
 * messages, tasks and streams, a sender with bounded concurrency, and the checks every reply passes.
 */
import http from 'node:http';
import {
  ListTasksResponseSchema,
  SendMessageResponseSchema,
  StreamResponseSchema,
  TaskSchema,
  fromVerify,
  header,
  type AgentExecutor,
  type Logger,
} from '../../lib';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { STACK_KEY, STACK_KEY_HEADER, generateCase, type FuzzCase, type Target, type TaskPool } from './generator';

// ---------------------------------------------------------------------------
// The agent
// ---------------------------------------------------------------------------

/** Replies by the message's text (the generator's AGENT_WORDS); anything else completes. */
export const fuzzExecutor: AgentExecutor = {
  async execute(ctx, events) {
    switch (ctx.userText) {
      case 'message':
        // A Message reply ends a turn only when no task exists yet.
        return ctx.task ? events.complete('a message') : events.reply('a message');
      case 'park':
        await events.start();
        return events.requireInput('more input, please');
      case 'auth':
        await events.start();
        return events.requireAuth('authorize, please');
      case 'stream':
        await events.start('starting');
        for (let i = 0; i < 3; i++) await events.progress(`step ${i}`);
        await events.artifact({ artifactId: 'a', text: 'chunk 1' });
        await events.artifact({ artifactId: 'a', text: 'chunk 2', append: true, lastChunk: true });
        return events.complete('done');
      case 'echo':
        // What the client sent goes back through the store and the wire: metadata, data parts, odd keys.
        await events.start();
        await events.artifact({
          parts: ctx.userMessage.parts,
          metadata: { request: ctx.metadata ?? null, message: ctx.userMessage.metadata ?? null },
        });
        return events.complete();
      case 'fail':
        await events.start();
        return events.fail('failed on purpose');
      case 'reject':
        return events.reject('rejected on purpose');
      case 'throw':
        // Internal text that must never reach a client.
        throw new Error('Error: secret at /work/main/lib/secret.ts:1 (node_modules/x)');
      default:
        return events.complete('ok');
    }
  },
};

// ---------------------------------------------------------------------------
// The servers
// ---------------------------------------------------------------------------

export interface LogRecord {
  readonly level: 'error' | 'warn';
  readonly message: string;
  readonly err?: string;
}

/** Error lines the agent causes on purpose; any other error line is a finding. */
const EXPECTED_ERRORS = [/^execute\(\) threw; the task is failed$/];

/** Records warn and error lines (with the error's own text, which never goes to clients). */
function recordingLogger(records: LogRecord[]): Logger {
  const record = (level: LogRecord['level']) => (obj: unknown, msg?: string) => {
    const message = typeof obj === 'string' ? obj : (msg ?? '');
    const err = (obj as { err?: unknown } | null)?.err;
    records.push({ level, message, ...(err !== undefined ? { err: err instanceof Error ? (err.stack ?? err.message) : String(err) } : {}) });
  };
  return { debug: () => {}, info: () => {}, warn: record('warn'), error: record('error') };
}

export interface Harness {
  readonly servers: Readonly<Record<Target, TestServer>>;
  readonly pools: Readonly<Record<Target, TaskPool>>;
  readonly logs: LogRecord[];
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const logs: LogRecord[] = [];
  const logger = recordingLogger(logs);
  const router = await startAgent(fuzzExecutor, { logger, heartbeatIntervalMs: 0 });
  const stack = await startAgent(fuzzExecutor, {
    logger,
    heartbeatIntervalMs: 0,
    security: true,
    tracing: true,
    auth: {
      // No key: anonymous; the right key: one caller; any other key: 401.
      user: fromVerify((req) => {
        const key = req.headers[STACK_KEY_HEADER];
        if (key === undefined) return undefined;
        return key === STACK_KEY ? { id: 'fuzzer' } : false;
      }),
      allowAnonymous: true,
    },
    tenant: { from: header('x-tenant-id'), required: false },
    // Push on here (off on `router`): only the fuzz webhook host, which the lookup below maps to
    // loopback, is accepted; every other URL is refused without a DNS query or a connection.
    pushNotifications: {
      allow: ['hooks.fuzz.test'],
      publicAddresses: false,
      lookup: async (hostname: string) => {
        if (hostname === 'hooks.fuzz.test') return [{ address: '127.0.0.1', family: 4 as const }];
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      },
      maxAttempts: 1,
      timeoutMs: 1_000,
    },
  });
  const servers = { router, stack };
  const pools = { router: await createPool(router), stack: await createPool(stack) };
  return {
    servers,
    pools,
    logs,
    close: async () => {
      await router.close();
      await stack.close();
    },
  };
}

/** Parked and finished tasks for the generator to refer to. */
async function createPool(server: TestServer): Promise<TaskPool> {
  const send = async (text: string): Promise<{ id: string; contextId: string }> => {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendMessage',
      params: { message: { messageId: `pool-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] } },
    });
    const reply = await post(
      server,
      '/agent',
      { 'content-type': 'application/json', 'a2a-version': '1.0', [STACK_KEY_HEADER]: STACK_KEY },
      Buffer.from(body),
    );
    const task = JSON.parse(reply.body.toString()).result.task;
    return { id: task.id, contextId: task.contextId };
  };
  const parked: string[] = [];
  const finished: string[] = [];
  const contextIds = new Set<string>();
  for (const word of [
    'park',
    'park',
    'park',
    'park',
    'park',
    'park',
    'park',
    'park',
    'auth',
    'auth',
    'complete',
    'complete',
    'fail',
    'reject',
    'stream',
    'throw',
  ]) {
    const task = await send(word);
    (word === 'park' || word === 'auth' ? parked : finished).push(task.id);
    contextIds.add(task.contextId);
  }
  return { parked, finished, contextIds: [...contextIds] };
}

// ---------------------------------------------------------------------------
// Sending
// ---------------------------------------------------------------------------

export interface Reply {
  /** Set when no HTTP response was read (connection reset, timeout). */
  readonly transportError?: string;
  readonly status: number;
  readonly rawHeaders: string;
  readonly contentType: string;
  readonly body: Buffer;
  /** The client cut a stream that was still open (SubscribeToTask on a parked task). */
  readonly cut: boolean;
}

const INTERRUPTED = /"state":"TASK_STATE_(INPUT|AUTH)_REQUIRED"/;

/**
 * Pooled sockets idle longer than this are closed by the client. Node's Agent ignores the server's
 * `Keep-Alive: timeout=5` hint unless `timeout` is set, and then reuses an idle socket up to the
 * moment the server closes it: a request written just then is reset (ECONNRESET, no reply), which
 * is the client's race, not the server's. 2 s stays well clear of the server's 5 s.
 */
const IDLE_SOCKET_MS = 2_000;
const keepAliveAgent = (maxSockets: number) => new http.Agent({ keepAlive: true, maxSockets, timeout: IDLE_SOCKET_MS });

let agent = keepAliveAgent(16);

/** One POST; streams that stay open after an interrupted state are cut after `linger` ms. */
function post(
  server: TestServer,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  options: { chunked?: boolean; timeoutMs?: number; lingerMs?: number } = {},
): Promise<Reply> {
  const { chunked = false, timeoutMs = 15_000, lingerMs = 200 } = options;
  const url = new URL(server.baseUrl);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (reply: Reply) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(reply);
    };
    const fail = (transportError: string) =>
      finish({ transportError, status: 0, rawHeaders: '', contentType: '', body: Buffer.alloc(0), cut: false });
    const req = http.request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        agent,
        headers: chunked ? headers : { ...headers, 'content-length': String(body.length) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        const rawHeaders = res.rawHeaders.join('\n');
        const contentType = String(res.headers['content-type'] ?? '');
        const done = (cut: boolean) => finish({ status: res.statusCode ?? 0, rawHeaders, contentType, body: Buffer.concat(chunks), cut });
        let linger: NodeJS.Timeout | undefined;
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (!linger && contentType.startsWith('text/event-stream') && INTERRUPTED.test(chunk.toString())) {
            linger = setTimeout(() => {
              done(true);
              res.destroy();
            }, lingerMs);
          }
        });
        res.on('end', () => {
          clearTimeout(linger);
          done(false);
        });
        res.on('error', (err) => {
          clearTimeout(linger);
          const received = chunks.reduce((sum, c) => sum + c.length, 0);
          fail(
            `response: ${(err as NodeJS.ErrnoException).code ?? err.message} after HTTP ${res.statusCode} ${contentType} and ${received} bytes of body`,
          );
        });
      },
    );
    const timer = setTimeout(() => {
      fail(`no complete reply within ${timeoutMs} ms`);
      req.destroy();
    }, timeoutMs);
    req.on('error', (err) => fail(`request: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    if (chunked) {
      // A few chunks, so the parser sees a body without Content-Length in pieces.
      const step = Math.max(1, Math.ceil(body.length / 3));
      for (let offset = 0; offset < body.length; offset += step) req.write(body.subarray(offset, offset + step));
      req.end();
    } else req.end(body);
  });
}

/** Sends one case to its server. */
export function sendCase(harness: Harness, c: FuzzCase): Promise<Reply> {
  return post(harness.servers[c.target], c.path, c.headers, c.body, { chunked: c.chunked });
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

/** JSON-RPC 2.0's codes and A2A's (digest §11). */
export const SPEC_CODES = new Set([-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003, -32004, -32005, -32006, -32007, -32008, -32009]);

/** Text that would show internals: stack frames, source paths, error class names. */
const FORBIDDEN = ['/work', 'node_modules', '.ts:', '.js:', 'Error:', '\n    at ', 'at Object.', 'at async '];

const RESULT_SCHEMAS: Record<
  string,
  { safeParse(value: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } } }
> = {
  SendMessage: SendMessageResponseSchema,
  GetTask: TaskSchema,
  CancelTask: TaskSchema,
  ListTasks: ListTasksResponseSchema,
};

const describeIssues = (result: { error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
  (result.error?.issues ?? [])
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.')}: ${i.message}`)
    .join('; ');

/** Problems with one JSON-RPC envelope (a reply body or an SSE event). */
function checkEnvelope(c: FuzzCase, status: number, value: unknown, where: string, schema?: (typeof RESULT_SCHEMAS)[string]): string[] {
  const problems: string[] = [];
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${where}: not a JSON-RPC object`];
  const envelope = value as Record<string, unknown>;
  if (envelope.jsonrpc !== '2.0') problems.push(`${where}: jsonrpc is ${JSON.stringify(envelope.jsonrpc)}`);
  if (!Object.hasOwn(envelope, 'id')) problems.push(`${where}: no id member`);
  const id = envelope.id;
  if (!(id === null || typeof id === 'string' || typeof id === 'number')) problems.push(`${where}: id of type ${typeof id}`);
  // A middleware rejects before the body is read, with id null (and its own HTTP status).
  if (c.echoId !== undefined && id !== c.echoId && !(status !== 200 && id === null))
    problems.push(`${where}: id ${JSON.stringify(id)?.slice(0, 40)} instead of ${JSON.stringify(c.echoId)?.slice(0, 40)}`);
  const hasResult = Object.hasOwn(envelope, 'result');
  const hasError = Object.hasOwn(envelope, 'error');
  if (hasResult === hasError) problems.push(`${where}: must have exactly one of result, error`);
  if (hasError) {
    const error = envelope.error as { code?: unknown; message?: unknown; data?: unknown } | null;
    if (typeof error !== 'object' || error === null) problems.push(`${where}: error is not an object`);
    else {
      if (!SPEC_CODES.has(error.code as number)) problems.push(`${where}: error code ${JSON.stringify(error.code)} is not in the spec's table`);
      if (error.code === -32603) problems.push(`${where}: internal error (-32603 "${String(error.message)}") on this input`);
      if (typeof error.message !== 'string' || error.message === '') problems.push(`${where}: error without a message`);
      if (error.data !== undefined && !Array.isArray(error.data)) problems.push(`${where}: error.data is not an array of details`);
    }
  }
  if (hasResult && schema) {
    const parsed = schema.safeParse(envelope.result);
    if (!parsed.success) problems.push(`${where}: result does not match the schema (${describeIssues(parsed)})`);
  }
  return problems;
}

/** Every problem with `reply` to `c`; an empty list means the reply is acceptable. */
export function checkReply(c: FuzzCase, reply: Reply): string[] {
  if (reply.transportError) return [`no reply: ${reply.transportError}`];
  const problems: string[] = [];
  if (reply.status >= 500) problems.push(`HTTP ${reply.status}`);
  else if (reply.status !== 200 && (reply.status < 400 || reply.status > 499)) problems.push(`unexpected HTTP ${reply.status}`);

  const requestText = c.body.toString('latin1') + c.body.toString('utf8') + Object.values(c.headers).join('\n');
  const replyText = `${reply.rawHeaders}\n\n${reply.body.toString('utf8')}`;
  for (const token of FORBIDDEN) {
    if (replyText.includes(token) && !requestText.includes(token)) problems.push(`reply contains ${JSON.stringify(token)}`);
  }

  const text = reply.body.toString('utf8');
  if (reply.contentType.startsWith('text/event-stream')) {
    if (reply.status !== 200) problems.push(`event stream with HTTP ${reply.status}`);
    const frames = text.split('\n\n').filter((f) => f.trim() !== '');
    let events = 0;
    for (const [n, frame] of frames.entries()) {
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart());
      for (const line of frame.split('\n')) {
        if (!/^(data:|event:|id:|retry:|:)/.test(line)) problems.push(`SSE frame ${n}: unexpected line ${JSON.stringify(line.slice(0, 60))}`);
      }
      if (data.length === 0) continue;
      events++;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.join('\n'));
      } catch {
        problems.push(`SSE frame ${n}: data is not JSON`);
        continue;
      }
      problems.push(...checkEnvelope(c, reply.status, parsed, `SSE event ${n}`, StreamResponseSchema));
    }
    if (events === 0) problems.push('event stream without any event');
    if (!reply.cut && !text.endsWith('\n\n')) problems.push('event stream ends mid-frame');
    return problems;
  }
  if (!reply.contentType.startsWith('application/json')) {
    problems.push(`content type ${JSON.stringify(reply.contentType)} (body ${JSON.stringify(text.slice(0, 80))})`);
    return problems;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return [...problems, `body is not JSON: ${JSON.stringify(text.slice(0, 80))}`];
  }
  problems.push(
    ...checkEnvelope(c, reply.status, parsed, 'reply', c.method && Object.hasOwn(RESULT_SCHEMAS, c.method) ? RESULT_SCHEMAS[c.method] : undefined),
  );
  if (reply.status !== 200 && !Object.hasOwn(parsed as object, 'error')) problems.push(`HTTP ${reply.status} without a JSON-RPC error`);
  return problems;
}

// ---------------------------------------------------------------------------
// Global state
// ---------------------------------------------------------------------------

const PROTOTYPES: Record<string, object> = {
  Object: Object.prototype,
  Array: Array.prototype,
  Function: Function.prototype,
  String: String.prototype,
  Number: Number.prototype,
  Boolean: Boolean.prototype,
};

/** Own property names of the built-in prototypes (to compare after the run). */
export function prototypeSnapshot(): Record<string, string[]> {
  return Object.fromEntries(Object.entries(PROTOTYPES).map(([name, proto]) => [name, Reflect.ownKeys(proto).map(String).sort()]));
}

/** Keys added to (or removed from) the built-in prototypes since `before`. */
export function prototypeChanges(before: Record<string, string[]>): string[] {
  const after = prototypeSnapshot();
  const changes: string[] = [];
  for (const name of Object.keys(before)) {
    for (const key of after[name]) if (!before[name].includes(key)) changes.push(`${name}.prototype.${key} added`);
    for (const key of before[name]) if (!after[name].includes(key)) changes.push(`${name}.prototype.${key} removed`);
  }
  const probe = {} as Record<string, unknown>;
  for (const key of ['polluted', 'isAdmin', '__fuzz_polluted__']) if (probe[key] !== undefined) changes.push(`({}).${key} is ${String(probe[key])}`);
  return changes;
}

// ---------------------------------------------------------------------------
// A run
// ---------------------------------------------------------------------------

export interface Finding {
  readonly index: number;
  readonly label: string;
  readonly target: Target;
  readonly problems: string[];
  readonly status: number;
  /** The start of the request and reply bodies. */
  readonly request: string;
  readonly reply: string;
}

export interface FuzzReport {
  readonly seed: number;
  readonly requests: number;
  readonly durationMs: number;
  readonly findings: Finding[];
  /** Error log lines the agent did not cause on purpose. */
  readonly unexpectedErrorLogs: LogRecord[];
  readonly prototypeChanges: string[];
  /** Unhandled rejections and uncaught exceptions seen during the run. */
  readonly processErrors: string[];
  /** Executions or observers still live a few seconds after the run. */
  readonly leaks: string[];
  /** Replies by JSON-RPC code (or HTTP status / transport error), for the summary. */
  readonly outcomes: Record<string, number>;
  readonly cutStreams: number;
}

export interface FuzzOptions {
  readonly seed: number;
  readonly requests: number;
  readonly concurrency?: number;
  /** Only these case indexes (to replay a finding). */
  readonly only?: readonly number[];
  /** Called every `progressEvery` requests. */
  readonly onProgress?: (done: number, findings: number) => void;
  readonly progressEvery?: number;
  /** Stop collecting after this many findings (the run goes on). */
  readonly maxFindings?: number;
  /** Cases per pair of servers: each batch starts fresh ones (default 10,000). */
  readonly batch?: number;
}

const snippet = (bytes: Buffer, max = 300) => {
  const text = bytes.toString('utf8');
  return text.length > max ? `${text.slice(0, max)}… (${bytes.length} bytes)` : text;
};

function outcomeOf(reply: Reply): string {
  if (reply.transportError) return `transport: ${reply.transportError}`;
  const code = /"error":\{"code":(-?\d+)/.exec(reply.body.toString('utf8', 0, 4096))?.[1];
  if (reply.contentType.startsWith('text/event-stream')) return `HTTP ${reply.status} stream${reply.cut ? ' (cut)' : ''}`;
  return `HTTP ${reply.status} ${code ?? 'result'}`;
}

/** Runs `requests` cases of `seed` (fresh servers every `batch` cases) and reports everything that went wrong. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const { seed, requests, concurrency = 16, only, onProgress, progressEvery = 1_000, maxFindings = 50, batch = 10_000 } = options;
  agent = keepAliveAgent(concurrency);
  const processErrors: string[] = [];
  const onRejection = (reason: unknown) => processErrors.push(`unhandledRejection: ${reason instanceof Error ? reason.stack : String(reason)}`);
  const onException = (error: Error) => processErrors.push(`uncaughtException: ${error.stack}`);
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  const before = prototypeSnapshot();
  const started = Date.now();
  const findings: Finding[] = [];
  const logs: LogRecord[] = [];
  const leaks: string[] = [];
  const outcomes: Record<string, number> = {};
  let cutStreams = 0;
  let done = 0;
  const indexes = only ?? Array.from({ length: requests }, (_, i) => i);
  const record = (finding: Finding) => void (findings.length < maxFindings && findings.push(finding));
  try {
    // The stores keep every task (some hold near-1 MB strings): long runs get fresh servers per batch.
    for (let from = 0; from < indexes.length; from += batch) {
      const harness = await startHarness();
      try {
        const slice = indexes.slice(from, from + batch);
        let next = 0;
        const worker = async () => {
          while (next < slice.length) {
            const index = slice[next++];
            try {
              const c = generateCase(seed, index, harness.pools);
              const reply = await sendCase(harness, c);
              const problems = checkReply(c, reply);
              const outcome = outcomeOf(reply);
              outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
              if (reply.cut) cutStreams++;
              if (problems.length)
                record({
                  index,
                  label: c.label,
                  target: c.target,
                  problems,
                  status: reply.status,
                  request: snippet(c.body),
                  reply: snippet(reply.body),
                });
            } catch (error) {
              // A bug of the fuzzer itself: reported like a finding rather than abandoning the run.
              record({
                index,
                label: 'fuzzer error',
                target: 'router',
                problems: [String((error as Error).stack)],
                status: 0,
                request: '',
                reply: '',
              });
            }
            if (++done % progressEvery === 0) onProgress?.(done, findings.length);
          }
        };
        await Promise.all(Array.from({ length: concurrency }, worker));
        await checkServers(harness, record, leaks);
      } finally {
        logs.push(...harness.logs);
        await harness.close();
      }
    }
    return {
      seed,
      requests: indexes.length,
      durationMs: Date.now() - started,
      findings,
      unexpectedErrorLogs: logs.filter((l) => l.level === 'error' && !EXPECTED_ERRORS.some((re) => re.test(l.message))),
      prototypeChanges: prototypeChanges(before),
      processErrors,
      leaks,
      outcomes,
      cutStreams,
    };
  } finally {
    agent.destroy();
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  }
}

/** After a batch: both servers still complete a plain SendMessage, and nothing is left running. */
async function checkServers(harness: Harness, record: (finding: Finding) => void, leaks: string[]): Promise<void> {
  const alive = Buffer.from(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 'alive',
      method: 'SendMessage',
      params: { message: { messageId: 'alive', role: 'ROLE_USER', parts: [{ text: 'complete' }] } },
    }),
  );
  for (const target of ['router', 'stack'] as const) {
    const probe = await post(
      harness.servers[target],
      '/agent',
      { 'content-type': 'application/json', 'a2a-version': '1.0', [STACK_KEY_HEADER]: STACK_KEY },
      alive,
    );
    if (!/"state":"TASK_STATE_COMPLETED"/.test(probe.body.toString())) {
      record({
        index: -1,
        label: 'liveness probe',
        target,
        problems: ['the server no longer completes a plain SendMessage'],
        status: probe.status,
        request: snippet(alive),
        reply: snippet(probe.body),
      });
    }
  }
  for (const target of ['router', 'stack'] as const) {
    const router = harness.servers[target].router;
    const deadline = Date.now() + 5_000;
    while ((router.liveExecutions > 0 || router.liveObservers > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (router.liveExecutions > 0 || router.liveObservers > 0)
      leaks.push(`${target}: ${router.liveExecutions} live executions, ${router.liveObservers} live observers 5 s after the run`);
  }
}

/** A report as text: the summary line, then every finding with what reproduces it. */
export function formatReport(report: FuzzReport): string {
  const lines = [
    `fuzz: seed ${report.seed} (FUZZ_SEED=${report.seed}), ${report.requests} requests in ${(report.durationMs / 1000).toFixed(1)} s, ` +
      `${report.findings.length} findings, ${report.unexpectedErrorLogs.length} unexpected error logs, ${report.cutStreams} open streams cut by the client`,
    `outcomes: ${Object.entries(report.outcomes)
      .sort((a, b) => b[1] - a[1])
      .map(([k, v]) => `${k}: ${v}`)
      .join(', ')}`,
  ];
  for (const f of report.findings) {
    lines.push('', `case ${f.index} (${f.target}; ${f.label}) → HTTP ${f.status}; replay: npm run fuzz -- --seed ${report.seed} --case ${f.index}`);
    for (const p of f.problems) lines.push(`  - ${p}`);
    lines.push(`  request: ${f.request}`, `  reply:   ${f.reply}`);
  }
  for (const l of report.unexpectedErrorLogs.slice(0, 10)) lines.push('', `error log: ${l.message}`, `  ${l.err ?? ''}`);
  for (const c of report.prototypeChanges) lines.push(`prototype: ${c}`);
  for (const e of report.processErrors) lines.push(`process: ${e}`);
  for (const l of report.leaks) lines.push(`leak: ${l}`);
  return lines.join('\n');
}
