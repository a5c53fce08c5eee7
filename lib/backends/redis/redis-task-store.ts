/**
 * A TaskStore on Redis, shared by every replica. A task is one hash; each write is one Lua script that checks the scope, the version and the terminal
 * flag and then writes the task and its listing entries together, so a stale writer or another scope never changes anything.
 */
import { z } from 'zod';
import type { StreamResponse, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from '../../protocol/schemas.js';
import { foldTaskInPlace } from '../../engine/task-reducer.js';
import { parseOptions } from '../../options.js';
import { endsTurn, isInterrupted, isTerminal } from '../../engine/task-state.js';
import {
  TaskExistsError,
  TaskNotFoundInStoreError,
  TaskVersionConflictError,
  decodePageToken,
  encodePageToken,
  type ListTasksQuery,
  type TaskChange,
  type TaskPage,
  type TaskScope,
  type TaskStore,
  type VersionedTask,
} from '../../engine/seams/task-store.js';
import { type RedisClient, clientSchema, keyPrefixSchema, RedisScript } from './redis-client.js';
import { RedisTaskEventBus, taskEventStreams } from './redis-event-bus.js';
import type { TaskEventStreams } from './redis-event-stream.js';
import { leaseMember, RedisKeys, scopeId } from './redis-keys.js';
import { APPEND_ARTIFACT, APPEND_STATUS, CREATE, UPDATE } from './redis-task-scripts.js';
import { finishedMember, removeFinishedTasks } from './redis-retention.js';
import { taskKey } from '../../engine/seams/task-store.js';

export interface RedisTaskStoreOptions {
  /** A connected node-redis client; the store does not close it. */
  readonly client: RedisClient;
  /** Put before every key. Default 'a2a:'. */
  readonly keyPrefix?: string;
  /**
   * The event bus on the same Redis server (createRedisBackend links them): every write that records an event appends it to the bus's task stream and
   * publishes it on the task's channel in the write's own script, so a replica killed right after a write has lost nothing, and the bus's publish()
   * of that event costs nothing. Without it the engine's publish() does both, after the write.
   */
  readonly eventBus?: RedisTaskEventBus;
}

const optionsSchema = z.strictObject({
  client: clientSchema,
  keyPrefix: keyPrefixSchema,
  eventBus: z.custom<RedisTaskEventBus>((v) => v instanceof RedisTaskEventBus, { error: 'must be a RedisTaskEventBus' }).optional(),
});

// KEYS: task hash, delta list. ARGV: scope. Replies false when the task is not in that scope, else {version, JSON, delta...}.
const GET = new RedisScript(`
local stored = redis.call('HMGET', KEYS[1], 's', 'v', 'j')
if stored[1] ~= ARGV[1] or not stored[2] or not stored[3] then return false end
local out = {stored[2], stored[3]}
for _, delta in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do out[#out + 1] = delta end
return out
`);

// KEYS: task hash, delta list. ARGV: the version read, the task's JSON with its deltas folded in. Replaces the JSON and drops the deltas unless the
// task was written since that read.
const COMPACT = new RedisScript(`
if redis.call('HGET', KEYS[1], 'v') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'j', ARGV[2])
redis.call('DEL', KEYS[2])
return 1
`);

// KEYS: one listing set. ARGV: lex range start and end, how many, the task key prefix, the delta list prefix. Replies {matches in the range from its
// start to the set's start, {JSON, delta...}...}. A member is the encoded timestamp, ended by the bytes 255 254 (which occur nowhere else in it),
// then the task id.
const LIST = new RedisScript(`
local total
if ARGV[2] == '+' then total = redis.call('ZCARD', KEYS[1]) else total = redis.call('ZLEXCOUNT', KEYS[1], '-', ARGV[2]) end
local out = {total}
for _, member in ipairs(redis.call('ZRANGEBYLEX', KEYS[1], ARGV[1], ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))) do
  local cut = string.find(member, '\\255\\254', 1, true)
  local id = string.sub(member, cut + 2)
  local json = redis.call('HGET', ARGV[4] .. id, 'j')
  if json then
    local entry = {json}
    for _, delta in ipairs(redis.call('LRANGE', ARGV[5] .. id, 0, -1)) do entry[#entry + 1] = delta end
    out[#out + 1] = entry
  end
end
return out
`);

/** Deltas a read folds before it writes the result back as the task's JSON. */
const COMPACT_AT = 8;

/** A fresh Task: its stored JSON with the artifact deltas written since folded in. */
function materialize(json: string, deltas: readonly string[]): Task {
  let task = JSON.parse(json) as Task;
  const ctx = { taskId: task.id, contextId: task.contextId ?? '' };
  for (const delta of deltas) {
    const text = delta.slice(1);
    const event =
      delta[0] === 'a'
        ? { artifactUpdate: JSON.parse(text) as TaskArtifactUpdateEvent }
        : { statusUpdate: JSON.parse(text) as TaskStatusUpdateEvent };
    const folded = foldTaskInPlace(task, event, ctx);
    if (folded.ok) task = folded.task;
  }
  return task;
}

/**
 * The timestamp so that byte order is newest first: each byte inverted, a zero byte escaped as 255 0, ended by 255 254 (the inverted form of an
 * order-preserving, prefix-free encoding), so a longer timestamp sorts before its own prefix, as in compareForListing. Byte order is UTF-8 order,
 * which equals JavaScript's string order for every timestamp the engine writes.
 */
function newestFirst(timestamp: string): Buffer {
  const bytes = Buffer.from(timestamp, 'utf8');
  const out = Buffer.allocUnsafe(bytes.length * 2 + 2);
  let n = 0;
  for (const byte of bytes) {
    if (byte === 0) {
      out[n++] = 0xff;
      out[n++] = 0x00;
    } else out[n++] = 0xff - byte;
  }
  out[n++] = 0xff;
  out[n++] = 0xfe;
  return out.subarray(0, n);
}

/** A listing member: ListTasks order is the members' byte order (then the id breaks ties). */
const listingMember = (timestamp: string, taskId: string): Buffer => Buffer.concat([newestFirst(timestamp), Buffer.from(taskId, 'utf8')]);

/**
 * Listing reads one sorted set (a scope's tasks, or those of one context, one state, or both) in ListTasks order: a page costs O(log n + page). An
 * artifact or status event is one RPUSH of the update to the task's delta list; a read folds the deltas in and writes the result back (compaction).
 */
export class RedisTaskStore implements TaskStore {
  readonly #client: RedisClient;
  readonly #keys: RedisKeys;
  /** The linked bus's streams, which every write with an event appends to. */
  readonly #streams: TaskEventStreams | undefined;
  /** The finished-tasks set: every write names it (a fixed KEYS position), only a finishing one writes it. */
  readonly #finishedKey: string;
  readonly #midTurnKey: string;

  constructor(options: RedisTaskStoreOptions) {
    const { client, keyPrefix, eventBus } = parseOptions('RedisTaskStore', optionsSchema, options);
    this.#client = client;
    this.#keys = new RedisKeys(keyPrefix);
    this.#streams = eventBus && taskEventStreams(eventBus);
    this.#finishedKey = this.#keys.finishedTasks();
    this.#midTurnKey = this.#keys.midTurnTasks();
  }

  /**
   * Retention: up to `limit` finished tasks older than the cutoff, read from the finished-tasks set and removed with their listing entries, delta
   * list, event stream and push keys in one script (see redis-retention.ts). Tasks that finished before this version kept the set are not in it.
   */
  async removeFinished(finishedBefore: string, limit: number): Promise<number> {
    return removeFinishedTasks(this.#client, this.#keys, finishedBefore, limit);
  }

  saveTraceContext(scope: TaskScope, taskId: string, traceparent: string): Promise<void> {
    return saveTraceContext(this.#client, this.#keys.task(taskId), scopeId(scope), traceparent);
  }

  loadTraceContext(scope: TaskScope, taskId: string): Promise<string | undefined> {
    return loadTraceContext(this.#client, this.#keys.task(taskId), scopeId(scope));
  }

  async get(scope: TaskScope, taskId: string): Promise<VersionedTask | undefined> {
    const keys = [this.#keys.task(taskId), this.#keys.taskDeltas(taskId)];
    const found = await GET.run<[string, string, ...string[]] | null>(this.#client, keys, [scopeId(scope)]);
    if (!found) return undefined;
    const [version, json, ...deltas] = found;
    const task = materialize(json, deltas);
    // The deltas were folded anyway: keep the result, so the next read parses one JSON text.
    if (deltas.length >= COMPACT_AT) await COMPACT.run(this.#client, keys, [version, JSON.stringify(task)]);
    return { task, version: Number(version) };
  }

  // A task is created by its `{ task }` event (the reducer's, whatever the agent published first).
  async create(scope: TaskScope, task: Task): Promise<number> {
    const json = JSON.stringify(task);
    const keys = this.#writeKeys(scope, task);
    const args = this.#writeArgs(scope, task, json);
    keys.push(this.#keys.taskDeltas(task.id), this.#finishedKey, this.#midTurnKey);
    args.push(this.#finishedMember(scope, task), ...midTurnArgs(scope, task));
    const append = this.#streams?.streamArgs(scope, task.id);
    if (append) {
      keys.push(append.stream);
      args.push(...append.args);
    }
    const created = await CREATE.run<number>(this.#client, keys, args);
    if (created !== 1) throw new TaskExistsError(task.id);
    if (append) this.#streams!.appended(scope, task.id, 1);
    return 1;
  }

  // Only the change's event is used: the whole task is one JSON value, replaced in the same script. A write without an event (a follow-up joining the
  // history) appends nothing.
  async update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): Promise<number> {
    if (change?.kind === 'artifact') return this.#appendArtifact(scope, task, expectedVersion, change.update, change.event);
    if (change?.kind === 'status') return this.#appendStatus(scope, task, expectedVersion, change.update, change.event);
    const json = JSON.stringify(task);
    const keys = this.#writeKeys(scope, task);
    keys.push(this.#keys.taskDeltas(task.id), this.#finishedKey, this.#midTurnKey);
    const args: Array<string | Buffer | number> = [
      ...this.#writeArgs(scope, task, json),
      this.#finishedMember(scope, task),
      expectedVersion,
      ...midTurnArgs(scope, task),
    ];
    const event = change?.event;
    const append = event && this.#streams?.streamArgs(scope, task.id);
    if (append) {
      keys.push(append.stream);
      args.push(JSON.stringify(event), ...append.args);
    }
    const [outcome, version] = await UPDATE.run<number[]>(this.#client, keys, args);
    if (outcome === 1) {
      if (append) this.#streams!.appended(scope, task.id, version);
      return version;
    }
    if (outcome === 2) throw new TaskVersionConflictError(task.id, expectedVersion, version);
    throw new TaskNotFoundInStoreError(task.id);
  }

  async list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage> {
    const cursor = query.pageToken ? decodePageToken(query.pageToken) : undefined;
    const start = cursor ? Buffer.concat([Buffer.from('('), listingMember(cursor.timestamp, cursor.id)]) : '-';
    // Inclusive bound: every member of that timestamp is its encoding plus an id, whose UTF-8 bytes are all below 255.
    const end =
      query.statusTimestampAfter === undefined
        ? '+'
        : Buffer.concat([Buffer.from('('), newestFirst(query.statusTimestampAfter), Buffer.from([0xff])]);
    const index = this.#keys.taskIndex(scope, query.contextId, query.status);
    // One more than a page, to know whether another page follows.
    const [matches, ...found] = await LIST.run<[number, ...Array<[string, ...string[]]>]>(
      this.#client,
      [index],
      [start, end, query.pageSize + 1, this.#keys.task(''), this.#keys.taskDeltas('')],
    );
    const more = found.length > query.pageSize;
    const tasks = found.slice(0, query.pageSize).map(([json, ...deltas]) => materialize(json, deltas));
    return { tasks, nextPageToken: more ? encodePageToken(tasks[tasks.length - 1]) : '', totalSize: matches };
  }

  /** An artifact event: its artifact is pushed to the task's delta list; the task is not serialized. */
  async #appendArtifact(
    scope: TaskScope,
    task: Task,
    expectedVersion: number,
    update: TaskArtifactUpdateEvent,
    event: StreamResponse | undefined,
  ): Promise<number> {
    const keys = [this.#keys.task(task.id), this.#keys.taskDeltas(task.id)];
    const args: Array<string | number> = [scopeId(scope), expectedVersion, `a${JSON.stringify(update)}`];
    const append = event && this.#streams?.streamArgs(scope, task.id);
    if (append) {
      keys.push(append.stream);
      // The payload's task without its artifacts: what an artifact event leaves as it was.
      args.push(JSON.stringify(event), JSON.stringify(task.artifacts === undefined ? task : { ...task, artifacts: undefined }), ...append.args);
    }
    const [outcome, version] = await APPEND_ARTIFACT.run<number[]>(this.#client, keys, args);
    if (outcome === 1) {
      if (append) this.#streams!.appended(scope, task.id, version);
      return version;
    }
    if (outcome === 2) throw new TaskVersionConflictError(task.id, expectedVersion, version);
    throw new TaskNotFoundInStoreError(task.id);
  }

  /** A status event: the listing entries move, the status joins the delta list; the task's JSON stays. */
  async #appendStatus(
    scope: TaskScope,
    task: Task,
    expectedVersion: number,
    update: TaskStatusUpdateEvent,
    event: StreamResponse | undefined,
  ): Promise<number> {
    const keys = this.#writeKeys(scope, task);
    keys.push(this.#keys.taskDeltas(task.id), this.#finishedKey, this.#midTurnKey);
    const [scopeArg, , terminal, member] = this.#writeArgs(scope, task, '');
    const args: Array<string | Buffer | number> = [
      scopeArg,
      terminal,
      member,
      expectedVersion,
      `s${JSON.stringify(update)}`,
      this.#finishedMember(scope, task),
      ...midTurnArgs(scope, task),
    ];
    const append = event && this.#streams?.streamArgs(scope, task.id);
    if (append) {
      keys.push(append.stream);
      // Subscribers take the task of a final or interrupted status as the turn's answer: it is whole then. Any other status leaves the artifacts out,
      // like an artifact event.
      const payloadTask = endsTurn(task.status.state) || task.artifacts === undefined ? task : { ...task, artifacts: undefined };
      args.push(JSON.stringify(event), JSON.stringify(payloadTask), ...append.args);
    }
    const [outcome, version] = await APPEND_STATUS.run<number[]>(this.#client, keys, args);
    if (outcome === 1) {
      if (append) this.#streams!.appended(scope, task.id, version);
      return version;
    }
    if (outcome === 2) throw new TaskVersionConflictError(task.id, expectedVersion, version);
    throw new TaskNotFoundInStoreError(task.id);
  }

  #writeKeys(scope: TaskScope, task: Task): string[] {
    const { contextId, status } = task;
    const keys = this.#keys;
    return [
      keys.task(task.id),
      keys.taskIndex(scope),
      contextId === undefined ? keys.noContextIndex(scope) : keys.taskIndex(scope, contextId),
      keys.taskIndex(scope, undefined, status.state),
      contextId === undefined ? keys.noContextIndex(scope, status.state) : keys.taskIndex(scope, contextId, status.state),
    ];
  }

  /** The task's member of the finished-tasks set when its state is terminal; '' (unused) otherwise. */
  #finishedMember(scope: TaskScope, task: Task): string {
    return isTerminal(task.status.state) ? finishedMember(task.status.timestamp ?? '', taskKey(scope, task.id)) : '';
  }

  #writeArgs(scope: TaskScope, task: Task, json: string): Array<string | Buffer | number> {
    return [scopeId(scope), json, isTerminal(task.status.state) ? '1' : '0', listingMember(task.status.timestamp ?? '', task.id)];
  }
}

/** The task's member of the mid-turn set (as the lease's in the live-lease set) and whether it belongs there now. */
const midTurnArgs = (scope: TaskScope, task: Task): [string, string] => [
  leaseMember(taskKey(scope, task.id), scope, task.id),
  isTerminal(task.status.state) || isInterrupted(task.status.state) ? '0' : '1',
];

// KEYS: task hash. ARGV: scope, traceparent.
const SAVE = new RedisScript(`
if redis.call('HGET', KEYS[1], 's') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'tp', ARGV[2])
return 1
`);

async function saveTraceContext(client: RedisClient, taskHash: string, scopeId: string, traceparent: string): Promise<void> {
  await SAVE.run<number>(client, [taskHash], [scopeId, traceparent]);
}

async function loadTraceContext(client: RedisClient, taskHash: string, scopeId: string): Promise<string | undefined> {
  const [scope, traceparent] = await client.sendCommand<Array<string | null>>(['HMGET', taskHash, 's', 'tp']);
  return scope === scopeId && traceparent ? traceparent : undefined;
}
