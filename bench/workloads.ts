/**
 * Workloads and servers of the benchmark, shared by the runner (bench/run.ts), the load generator
 * (bench/load.ts) and the memory driver. Wire formats: A2A v1.0 JSON-RPC (PROTOCOL.md §7) and, for
 * the `-rest` workloads, the HTTP+JSON binding (§11: `POST <base>/message:send` with `{ message }`).
 */

export type WorkloadId = 'send-message' | 'send-message-rest' | 'send-task' | 'send-task-rest' | 'stream' | 'two-turn' | 'get-task';
export type ServerId =
  'ceiling' | 'sdk' | 'ours' | 'stack' | 'ours-latency' | 'ours-sqlite' | 'ours-redis' | 'ours-2replicas' | 'ours-postgres' | 'ours-pg-2replicas';

export interface WorkloadInfo {
  id: WorkloadId;
  title: string;
  /** Unit reported in the table besides req/s (streaming reports SSE events/s). */
  unit: 'req' | 'events';
  /** The binding the requests use. */
  binding: 'jsonrpc' | 'rest';
  /** The servers it runs on (default: every server). */
  servers?: readonly ServerId[];
  /** REST workloads: the JSON-RPC workload sending the same message, for the REST / JSON-RPC ratio. */
  jsonRpcTwin?: WorkloadId;
}

/** Servers of the REST workloads: the SDK's REST handler, ours and ours behind the full stack. */
export const REST_SERVERS: readonly ServerId[] = ['sdk', 'ours', 'stack'];

/**
 * Each REST workload right after its JSON-RPC twin (the report's order); the runner measures the
 * two in the same interleaved rounds.
 */
export const WORKLOADS: readonly WorkloadInfo[] = [
  { id: 'send-message', title: 'SendMessage → Message', unit: 'req', binding: 'jsonrpc' },
  {
    id: 'send-message-rest',
    title: 'REST SendMessage → Message',
    unit: 'req',
    binding: 'rest',
    servers: REST_SERVERS,
    jsonRpcTwin: 'send-message',
  },
  { id: 'send-task', title: 'SendMessage → completed Task', unit: 'req', binding: 'jsonrpc' },
  {
    id: 'send-task-rest',
    title: 'REST SendMessage → completed Task',
    unit: 'req',
    binding: 'rest',
    servers: REST_SERVERS,
    jsonRpcTwin: 'send-task',
  },
  { id: 'stream', title: 'SendStreamingMessage, 10 status updates', unit: 'events', binding: 'jsonrpc' },
  { id: 'two-turn', title: 'Two-turn input-required task', unit: 'req', binding: 'jsonrpc' },
  { id: 'get-task', title: 'GetTask (existing task)', unit: 'req', binding: 'jsonrpc' },
];

export const workloadInfo = (id: WorkloadId): WorkloadInfo => WORKLOADS.find((w) => w.id === id) as WorkloadInfo;

/** Whether `workload` runs on `server`. */
export const runsOn = (workload: WorkloadId, server: ServerId): boolean => {
  const servers = workloadInfo(workload).servers;
  return !servers || servers.includes(server);
};

export interface ServerInfo {
  id: ServerId;
  title: string;
  /** Script under bench/servers/ and its extra argv. */
  script: string;
  args: string[];
  /** Path prefix of the server's HTTP+JSON routes (`<restBase>/message:send`); undefined: no REST. */
  restBase?: string;
  /**
   * Processes of the server (default 1). Several: replicas of `script args` sharing one Redis key
   * prefix (BENCH_REDIS_KEY_PREFIX) or PostgreSQL schema (BENCH_PG_SCHEMA), the load spread over all of them.
   */
  replicas?: number;
}

export const SERVERS: readonly ServerInfo[] = [
  { id: 'ceiling', title: 'bare Express (ceiling)', script: 'ceiling.ts', args: [] },
  // The SDK's restHandler is mounted at /rest, in front of its JSON-RPC handler at /: neither sees the other's requests.
  { id: 'sdk', title: '@a2a-js/sdk 1.3.0', script: 'official-sdk.ts', args: [], restBase: '/rest' },
  { id: 'ours', title: 'createA2ARouter', script: 'ours.ts', args: [], restBase: '' },
  { id: 'stack', title: 'createA2ARouter + full middleware stack', script: 'ours.ts', args: ['--stack'], restBase: '' },
  {
    id: 'ours-latency',
    title: 'createA2ARouter, in-memory store behind `withLatency` (1-5 ms per store call)',
    script: 'ours.ts',
    args: ['--latency'],
    restBase: '',
  },
  {
    id: 'ours-sqlite',
    title: 'createA2ARouter on `openSqliteTaskStore` (a2a-express-kit/sqlite, a fresh temporary file)',
    script: 'ours.ts',
    args: ['--sqlite'],
    restBase: '',
  },
  {
    // The runner starts its own redis-server (loopback, no persistence) and passes its URL in BENCH_REDIS_URL.
    id: 'ours-redis',
    title: 'createA2ARouter on `createRedisBackend()` (a2a-express-kit/redis: store, event bus, leases; a local redis-server)',
    script: 'ours.ts',
    args: ['--redis'],
    restBase: '',
  },
  {
    // Two `ours.ts --redis` processes on the same redis-server and ONE key prefix (the same tasks,
    // event streams and leases): the load generator spreads its connections over both.
    id: 'ours-2replicas',
    title: 'two `ours-redis` replicas (two processes) sharing one Redis and one key prefix; connections spread over both',
    script: 'ours.ts',
    args: ['--redis'],
    replicas: 2,
  },
  {
    // The runner starts its own PostgreSQL (a throwaway cluster on loopback) and passes its URL in BENCH_PG_URL.
    id: 'ours-postgres',
    title: 'createA2ARouter on `createPostgresBackend()` (a2a-express-kit/postgres: store, event bus, leases; a local PostgreSQL)',
    script: 'ours.ts',
    args: ['--postgres'],
    restBase: '',
  },
  {
    // Two `ours.ts --postgres` processes on the same database and ONE schema (BENCH_PG_SCHEMA: the same tasks, events and leases).
    id: 'ours-pg-2replicas',
    title: 'two `ours-postgres` replicas (two processes) sharing one PostgreSQL schema; connections spread over both',
    script: 'ours.ts',
    args: ['--postgres'],
    replicas: 2,
  },
];

/** Servers that may be skipped (with a note) without the run counting as broken. */
export const OPTIONAL_SERVERS: readonly ServerId[] = ['stack', 'ours-redis', 'ours-2replicas', 'ours-postgres', 'ours-pg-2replicas'];

/** Number of SSE events of one "stream" request: task + 10 WORKING updates + COMPLETED. */
export const STREAM_EVENTS_PER_REQUEST = 12;
export const STREAM_PROGRESS_UPDATES = 10;

/** Bearer token the "stack" server's auth middleware accepts without any crypto. */
export const BENCH_BEARER = 'bench-pre-verified-token';

/** Header the "stack" server's tenant middleware reads. */
export const BENCH_TENANT_HEADER = 'x-tenant-id';

/** Sent to every server (same bytes on the wire for all of them; only "stack" looks at auth/tenant). */
export const RPC_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  'a2a-version': '1.0',
  authorization: `Bearer ${BENCH_BEARER}`,
  [BENCH_TENANT_HEADER]: 'bench-tenant',
};

/** The HTTP+JSON binding's media type (§11.1): sent by the REST workloads, expected on their answers. */
export const A2A_JSON = 'application/a2a+json';

/** Headers of the REST workloads: RPC_HEADERS with the binding's media type. */
export const REST_HEADERS: Readonly<Record<string, string>> = { ...RPC_HEADERS, 'content-type': A2A_JSON };

/** Unique ids: a per-process random prefix plus a counter (cheap, unique across runs and processes). */
const prefix = `${process.pid.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
let counter = 0;
export function uniqueId(kind: string): string {
  counter += 1;
  return `${kind}-${prefix}-${counter}`;
}

export function sendMessageBody(text: string, opts: { streaming?: boolean; taskId?: string; contextId?: string } = {}): string {
  const message: Record<string, unknown> = {
    messageId: uniqueId('m'),
    role: 'ROLE_USER',
    parts: [{ text }],
  };
  if (opts.taskId) message.taskId = opts.taskId;
  if (opts.contextId) message.contextId = opts.contextId;
  return JSON.stringify({
    jsonrpc: '2.0',
    id: counter,
    method: opts.streaming ? 'SendStreamingMessage' : 'SendMessage',
    params: { message },
  });
}

/** HTTP+JSON `SendMessageRequest` body (`POST <base>/message:send`): `{ message }`, a fresh messageId. */
export function restSendMessageBody(text: string): string {
  return JSON.stringify({ message: { messageId: uniqueId('m'), role: 'ROLE_USER', parts: [{ text }] } });
}

export function taskIdBody(method: 'GetTask' | 'CancelTask', taskId: string): string {
  counter += 1;
  return JSON.stringify({ jsonrpc: '2.0', id: counter, method, params: { id: taskId } });
}

/** `SubscribeToTask` on `taskId` (the idle-streams phase holds these open). */
export function subscribeBody(taskId: string): string {
  counter += 1;
  return JSON.stringify({ jsonrpc: '2.0', id: counter, method: 'SubscribeToTask', params: { id: taskId } });
}

/** Cheap extraction of result.task.id / result.task.contextId from a JSON-RPC response body. */
export function extractTask(body: string): { id: string; contextId: string } | undefined {
  try {
    const parsed = JSON.parse(body) as { result?: { task?: { id?: string; contextId?: string } } };
    const task = parsed.result?.task;
    if (task && typeof task.id === 'string') return { id: task.id, contextId: String(task.contextId ?? '') };
  } catch {
    /* fall through */
  }
  return undefined;
}

/** Counts SSE `data:` events in a response body. */
export function countSseEvents(body: string): number {
  let n = 0;
  let i = body.indexOf('data:');
  while (i !== -1) {
    n += 1;
    i = body.indexOf('data:', i + 5);
  }
  return n;
}
