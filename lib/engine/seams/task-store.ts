/**
 * The task store contract. Every call takes the caller's scope: a task is visible only to the (tenant, owner) that created it, and a task of another
 * scope looks exactly like a missing one.
 */
import type { StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent } from '../../protocol/schemas.js';

/** Who is asking: tasks are partitioned by tenant, then owned by one caller. */
export interface TaskScope {
  readonly tenant: string;
  readonly owner: string;
}

/** A task as stored, with the version its next write must name. */
export interface VersionedTask {
  readonly task: Task;
  /** 1 after create(), +1 per successful update(). */
  readonly version: number;
}

/**
 * The committed change a write records: how `task` differs from the stored version, and the event it is. The write produces version `expectedVersion
 * + 1`. A store may ignore it and replace the task; the stored result must equal `task` either way.
 *
 * For `kind: 'artifact'` a store should write only the update (an appended chunk is an append: a row, a list entry), never re-serialize or copy
 * `task`: the engine folds its own copy in place, so `task` is the very object that holds every earlier chunk too. A store that writes the update
 * alone materializes the task when it is read (compacting what it appended as it goes), so a write costs what the event costs, not what the task
 * holds.
 */
export type TaskChange =
  /**
   * An artifact (or a chunk of one) was added: the task's artifacts are the stored ones with this update folded in as reduceTask does (a new
   * artifactId goes last; `append` adds the parts to the artifact with that id and its other fields replace the stored ones; otherwise it replaces
   * it).
   */
  (
    | { readonly kind: 'artifact'; readonly update: TaskArtifactUpdateEvent }
    /**
     * The status moved to `update.status` (its timestamp in the stored form) and its message, when it has one, joined the end of the history; nothing
     * else changed. A store may write this alone too (the listing keys change with it): the task's artifacts are as stored. Stores that know only
     * 'artifact' treat it as 'replace', as every kind they do not know.
     */
    | { readonly kind: 'status'; readonly update: TaskStatusUpdateEvent }
    /** Anything else (a created task, a follow-up joining the history): replace the task. */
    | { readonly kind: 'replace' }
  ) & {
    /**
     * The committed event this write records, when the engine writes it. Optional: a store that keeps an event log (SQLite for durable push, Redis
     * for the bus's streams) writes it in the same transaction or script; the others ignore it.
     */
    readonly event?: StreamResponse;
  };

export interface ListTasksQuery {
  readonly contextId?: string;
  readonly status?: TaskState;
  /** 1..100, already validated. */
  readonly pageSize: number;
  /** Opaque token from a previous page; a malformed one rejects with InvalidPageTokenError. */
  readonly pageToken?: string;
  /** Inclusive lower bound on status.timestamp (UTC, `YYYY-MM-DDTHH:mm:ss.sssZ`). */
  readonly statusTimestampAfter?: string;
}

export interface TaskPage {
  readonly tasks: Task[];
  /** '' on the last page. */
  readonly nextPageToken: string;
  /** Matches before paging. */
  readonly totalSize: number;
}

/**
 * Errors, and what the engine does with each:
 * - `TaskExistsError` from create(): the id is taken (in any scope). The client gets -32603.
 * - `TaskVersionConflictError` from update(): the task changed since `expectedVersion` was read, or it is terminal. The engine re-reads and decides
 *   again (never overwrites).
 * - `TaskNotFoundInStoreError` from update(): no such task in `scope`. The client gets TaskNotFound.
 * - Anything else (a lost connection, a timeout): the store is unavailable. The client gets -32603 (HTTP 503 on HTTP+JSON); nothing is half-written
 *   by the engine.
 *
 * Every stored task has a version; writes are compare-and-set on it, so a writer that acted on an old copy is refused instead of overwriting what
 * another request or process wrote (no last write wins). Implementations clone on the way in and out, so callers never share objects with the store.
 */
export interface TaskStore {
  /** The task and its version when it exists in `scope`; undefined when missing or in another scope. */
  get(scope: TaskScope, taskId: string): Promise<VersionedTask | undefined>;
  /** Stores a new task in `scope` at version 1. Rejects with TaskExistsError when the id is taken in any scope. */
  create(scope: TaskScope, task: Task): Promise<number>;
  /**
   * Replaces the task of `scope` if its stored version is `expectedVersion` and its stored state is not terminal; resolves with the new version
   * (`expectedVersion + 1`). Rejects with TaskVersionConflictError otherwise, and TaskNotFoundInStoreError when it is not in `scope`. With an
   * artifact or status `change` the store may write only that change (see TaskChange); the caller does not change `task` before the returned promise
   * settles.
   */
  update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): Promise<number>;
  /** Tasks of `scope` matching the filters, newest status timestamp first, then by id. */
  list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage>;
  /**
   * Optional, for a store one process owns (SQLite in a local file): every task in any scope whose state is SUBMITTED or WORKING. On start-up the
   * engine settles them (their turns died with the previous process) as a shutdown would. Stores shared by several processes leave it out: their
   * orphans are found through expired leases instead.
   */
  findUnfinished?(): Promise<Array<{ readonly scope: TaskScope; readonly taskId: string }>>;
  /**
   * Optional, for retention (startRetention): removes up to `limit` terminal tasks, of every scope, whose status timestamp is before `finishedBefore`
   * (UTC, `YYYY-MM-DDTHH:mm:ss.sssZ`; strictly before), oldest first, with everything the store keeps for them (artifact rows or deltas, event logs,
   * push configs and cursors). A task leaves get() and list() (and totalSize) at the same moment. Resolves with how many it removed: fewer than
   * `limit` means none is left before the cutoff, or another sweeper took some. Safe to run from several processes at once (each task is removed
   * once, and counted by the call that removed it). A store without it keeps every task.
   */
  removeFinished?(finishedBefore: string, limit: number): Promise<number>;
  /**
   * Optional, for tracing (the router's `traces` option): keeps beside the task, never in its JSON, the W3C `traceparent` of the request that started
   * it, so that a turn run by another replica (a follow-up, a resume) links to that trace. Called once per task, after create(); removed with the
   * task. A store without it links within one process only.
   */
  saveTraceContext?(scope: TaskScope, taskId: string, traceparent: string): Promise<void>;
  /** Optional, with saveTraceContext: what it kept for the task of `scope`, undefined when nothing. */
  loadTraceContext?(scope: TaskScope, taskId: string): Promise<string | undefined>;
  /** Optional: closes connections or files (router.close() does not call it; the owner does). */
  close?(): Promise<void>;
}

/** Base class of the store errors the engine understands. */
export class TaskStoreError extends Error {}

/** create(): the task id is already in use (in some scope). */
export class TaskExistsError extends TaskStoreError {
  constructor(readonly taskId: string) {
    super(`task ${taskId} already exists`);
    this.name = 'TaskExistsError';
  }
}

/** update(): the stored version is not the expected one, or the stored task is terminal. */
export class TaskVersionConflictError extends TaskStoreError {
  constructor(
    readonly taskId: string,
    readonly expectedVersion: number,
    /** The stored version, when the store knows it. */
    readonly actualVersion?: number,
  ) {
    super(`task ${taskId} is no longer at version ${expectedVersion}${actualVersion === undefined ? '' : ` (stored: ${actualVersion})`}`);
    this.name = 'TaskVersionConflictError';
  }
}

/** update(): no task with this id in this scope. */
export class TaskNotFoundInStoreError extends TaskStoreError {
  constructor(readonly taskId: string) {
    super(`task ${taskId} does not exist in this scope`);
    this.name = 'TaskNotFoundInStoreError';
  }
}

/** Thrown by list() for a page token the store did not issue. */
export class InvalidPageTokenError extends TaskStoreError {
  constructor() {
    super('pageToken is not a token this server issued');
    this.name = 'InvalidPageTokenError';
  }
}

/** What ListTasks orders by: the status timestamp (UTC text), then the id. */
export interface ListingKey {
  readonly id: string;
  readonly timestamp: string;
}

/** ListTasks order: newest status timestamp first, then id for a stable order. */
export function compareForListing(a: ListingKey, b: ListingKey): number {
  if (a.timestamp !== b.timestamp) return a.timestamp < b.timestamp ? 1 : -1;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Keyset page token: the last (timestamp, id) served. */
export function encodePageToken(task: Task): string {
  return Buffer.from(JSON.stringify([task.status.timestamp ?? '', task.id])).toString('base64url');
}

export function decodePageToken(token: string): ListingKey {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === 'string' && typeof parsed[1] === 'string') {
      return { timestamp: parsed[0], id: parsed[1] };
    }
  } catch {
    // fall through
  }
  throw new InvalidPageTokenError();
}

/** Whether `key` sorts strictly after the cursor position. */
export function isAfterCursor(key: ListingKey, cursor: ListingKey): boolean {
  if (key.timestamp !== cursor.timestamp) return key.timestamp < cursor.timestamp;
  return key.id > cursor.id;
}

/**
 * A string key for (tenant, owner, taskId). The owner is part of it: a request of another owner can
 * never reach a live execution or a subscription, even by a task id it guessed.
 */
export const taskKey = (scope: TaskScope, taskId: string): string =>
  `${scope.tenant.length}:${scope.tenant}${scope.owner.length}:${scope.owner}${taskId}`;
