/**
 * The default task store: a Map per (tenant, owner) partition. Tasks are kept as JSON text, which is the clone on the way in (cheaper than
 * structuredClone) and parsed into a fresh object on the way out; listing filters and sorts on the few fields it needs without parsing.
 */
import type { Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent } from '../../protocol/schemas.js';
import { isTerminal } from '../../engine/task-state.js';
import { foldTaskInPlace } from '../../engine/task-reducer.js';
import { IMMEDIATE_WRITES, type ImmediateWrites } from '../../engine/immediate-writes.js';
import {
  TaskExistsError,
  TaskNotFoundInStoreError,
  TaskVersionConflictError,
  compareForListing,
  decodePageToken,
  encodePageToken,
  isAfterCursor,
  type ListTasksQuery,
  type TaskChange,
  type TaskPage,
  type TaskScope,
  type TaskStore,
  type VersionedTask,
} from '../../engine/seams/task-store.js';

interface Entry {
  readonly scopeKey: string;
  readonly id: string;
  /** The task as of its last replace or read. */
  json: string;
  /** Artifact and status updates written since (their JSON), oldest first. */
  pending: Array<{ readonly kind: 'artifact' | 'status'; readonly json: string }>;
  version: number;
  contextId: string | undefined;
  state: TaskState;
  timestamp: string;
  /** The trace context of the request that started the task (tracing), beside it. */
  traceparent?: string;
}

type Pending = Entry['pending'][number];

/** The pending list of an entry with none (shared, never appended to: see pend). */
const NO_PENDING: Pending[] = [];

/** Appends an update to the entry's pending list, giving it a list of its own on the first one. */
function pend(entry: Entry, update: Pending): void {
  if (entry.pending === NO_PENDING) entry.pending = [update];
  else entry.pending.push(update);
}

const scopeKeyOf = (scope: TaskScope): string => `${scope.tenant.length}:${scope.tenant}${scope.owner}`;

/**
 * An artifact or status write keeps only its update's JSON, folded into the task's text when the task is next read, so a streamed chunk costs what
 * the chunk costs however long the task already is.
 */
export class InMemoryTaskStore implements TaskStore {
  readonly #byId = new Map<string, Entry>();
  readonly #byScope = new Map<string, Map<string, Entry>>();
  #immediate: ImmediateWrites | undefined;

  /** Number of tasks held, all scopes together. */
  get size(): number {
    return this.#byId.size;
  }

  /** Drops every task. */
  clear(): void {
    this.#byId.clear();
    this.#byScope.clear();
  }

  async get(scope: TaskScope, taskId: string): Promise<VersionedTask | undefined> {
    return this.#getNow(scope, taskId);
  }

  async create(scope: TaskScope, task: Task): Promise<number> {
    return this.#createNow(scope, task);
  }

  async update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): Promise<number> {
    return this.#updateNow(scope, task, expectedVersion, change);
  }

  /** The same writes made within the call (the engine's writer skips a promise per event with them). */
  get [IMMEDIATE_WRITES](): ImmediateWrites | undefined {
    // Read through an object that only inherits from a store (a wrapper): none, it is not the store.
    if (!(#byId in this)) return undefined;
    return (this.#immediate ??= {
      create: InMemoryTaskStore.prototype.create,
      update: InMemoryTaskStore.prototype.update,
      createNow: (scope, task) => this.#createNow(scope, task),
      updateNow: (scope, task, expectedVersion, change) => this.#updateNow(scope, task, expectedVersion, change),
      get: InMemoryTaskStore.prototype.get,
      getNow: (scope, taskId) => this.#getNow(scope, taskId),
    });
  }

  #getNow(scope: TaskScope, taskId: string): VersionedTask | undefined {
    const entry = this.#byId.get(taskId);
    if (!entry || entry.scopeKey !== scopeKeyOf(scope)) return undefined;
    return { task: materialize(entry), version: entry.version };
  }

  #createNow(scope: TaskScope, task: Task): number {
    if (this.#byId.has(task.id)) throw new TaskExistsError(task.id);
    const scopeKey = scopeKeyOf(scope);
    let partition = this.#byScope.get(scopeKey);
    if (!partition) this.#byScope.set(scopeKey, (partition = new Map()));
    // One literal of fixed shape (no spread of an intermediate object); no pending array until an update.
    const entry: Entry = {
      scopeKey,
      id: task.id,
      version: 1,
      pending: NO_PENDING,
      json: JSON.stringify(task),
      contextId: task.contextId,
      state: task.status.state,
      timestamp: task.status.timestamp ?? '',
    };
    this.#byId.set(task.id, entry);
    partition.set(task.id, entry);
    return 1;
  }

  #updateNow(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): number {
    const entry = this.#byId.get(task.id);
    if (!entry || entry.scopeKey !== scopeKeyOf(scope)) throw new TaskNotFoundInStoreError(task.id);
    if (entry.version !== expectedVersion || isTerminal(entry.state)) {
      throw new TaskVersionConflictError(task.id, expectedVersion, entry.version);
    }
    if (change?.kind === 'artifact') {
      // Listing keys do not change with an artifact; the update is the clone on the way in.
      pend(entry, { kind: 'artifact', json: JSON.stringify(change.update) });
    } else if (change?.kind === 'status') {
      const status = change.update.status;
      pend(entry, { kind: 'status', json: JSON.stringify(change.update) });
      entry.state = status.state;
      entry.timestamp = status.timestamp ?? '';
    } else {
      entry.json = JSON.stringify(task);
      entry.contextId = task.contextId;
      entry.state = task.status.state;
      entry.timestamp = task.status.timestamp ?? '';
      entry.pending = NO_PENDING;
    }
    return ++entry.version;
  }

  async saveTraceContext(scope: TaskScope, taskId: string, traceparent: string): Promise<void> {
    const entry = this.#byId.get(taskId);
    if (entry && entry.scopeKey === scopeKeyOf(scope)) entry.traceparent = traceparent;
  }

  async loadTraceContext(scope: TaskScope, taskId: string): Promise<string | undefined> {
    const entry = this.#byId.get(taskId);
    return entry && entry.scopeKey === scopeKeyOf(scope) ? entry.traceparent : undefined;
  }

  async list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage> {
    const cursor = query.pageToken ? decodePageToken(query.pageToken) : undefined;
    const partition = this.#byScope.get(scopeKeyOf(scope));
    const matches: Entry[] = [];
    for (const entry of partition?.values() ?? []) {
      if (query.contextId !== undefined && entry.contextId !== query.contextId) continue;
      if (query.status !== undefined && entry.state !== query.status) continue;
      if (query.statusTimestampAfter !== undefined && !(entry.timestamp >= query.statusTimestampAfter)) continue;
      matches.push(entry);
    }
    matches.sort(compareForListing);
    const from = cursor ? matches.findIndex((e) => isAfterCursor(e, cursor)) : 0;
    const start = from < 0 ? matches.length : from;
    const page = matches.slice(start, start + query.pageSize).map(materialize);
    const more = start + page.length < matches.length;
    return { tasks: page, nextPageToken: more ? encodePageToken(page[page.length - 1]) : '', totalSize: matches.length };
  }

  /**
   * Retention: the terminal tasks finished before the cutoff, oldest first, up to `limit`. A scan of every task (no ordered index is kept for it, so
   * writes cost nothing extra): a sweep every minute over 100k tasks costs a few ms.
   */
  async removeFinished(finishedBefore: string, limit: number): Promise<number> {
    const expired: Entry[] = [];
    for (const entry of this.#byId.values()) {
      if (isTerminal(entry.state) && entry.timestamp < finishedBefore) expired.push(entry);
    }
    if (expired.length > limit) expired.sort((a, b) => (a.timestamp < b.timestamp ? -1 : a.timestamp > b.timestamp ? 1 : 0));
    const removed = expired.slice(0, Math.max(0, limit));
    for (const entry of removed) {
      this.#byId.delete(entry.id);
      const partition = this.#byScope.get(entry.scopeKey);
      partition?.delete(entry.id);
      if (partition?.size === 0) this.#byScope.delete(entry.scopeKey);
    }
    return removed.length;
  }
}

/** A fresh Task: the stored text with the updates written since folded in (and kept so). */
function materialize(entry: Entry): Task {
  let task = JSON.parse(entry.json) as Task;
  if (entry.pending.length === 0) return task;
  const ctx = { taskId: task.id, contextId: task.contextId ?? '' };
  for (const { kind, json } of entry.pending) {
    const event =
      kind === 'artifact'
        ? { artifactUpdate: JSON.parse(json) as TaskArtifactUpdateEvent }
        : { statusUpdate: JSON.parse(json) as TaskStatusUpdateEvent };
    const folded = foldTaskInPlace(task, event, ctx);
    if (folded.ok) task = folded.task;
  }
  // Compacted: the next read parses one text again.
  entry.json = JSON.stringify(task);
  entry.pending = NO_PENDING;
  return task;
}
