/** The task store contract. Every call takes the caller's scope; a task of another scope looks exactly like a missing one. */
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
 * How `task` differs from the stored version, and the event the write records. A store may ignore it and replace the task; the result must equal
 * `task` either way. For 'artifact' a store should write only the update, never copy `task` (the engine folds it in place), so a write costs what
 * the event costs.
 */
export type TaskChange =
  /** An artifact or chunk, folded in as reduceTask does (`append` adds parts to the artifact with that id; otherwise it replaces it or goes last). */
  (
    | { readonly kind: 'artifact'; readonly update: TaskArtifactUpdateEvent }
    /**
     * The status moved to `update.status` and its message, if any, joined the history; nothing else changed. A store may write it alone
     * too. Stores that know only 'artifact' treat it, as every kind they do not know, as 'replace'.
     */
    | { readonly kind: 'status'; readonly update: TaskStatusUpdateEvent }
    /** A created task, a follow-up joining the history: replace the task. */
    | { readonly kind: 'replace' }
  ) & {
    /** The committed event: a store with an event log (SQLite, Redis) writes it in the same transaction; others ignore it. */
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
 * - `TaskVersionConflictError` from update(): the task changed since `expectedVersion` or is terminal. The engine re-reads and decides again.
 * - `TaskNotFoundInStoreError` from update(): no such task in `scope`. The client gets TaskNotFound.
 * - Anything else: the store is unavailable. The client gets -32603 (HTTP 503).
 *
 * Writes are compare-and-set on the version, so a writer acting on an old copy is refused (no last write wins). Implementations clone on the way in
 * and out.
 */
export interface TaskStore {
  /** Undefined when missing or in another scope. */
  get(scope: TaskScope, taskId: string): Promise<VersionedTask | undefined>;
  /** At version 1. Rejects with TaskExistsError when the id is taken in any scope. */
  create(scope: TaskScope, task: Task): Promise<number>;
  /**
   * Writes if the stored version is `expectedVersion` and the state not terminal; resolves with `expectedVersion + 1`. Rejects with
   * TaskVersionConflictError otherwise, TaskNotFoundInStoreError when not in `scope`. The caller does not change `task` before it settles.
   */
  update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): Promise<number>;
  /** Tasks of `scope` matching the filters, newest status timestamp first, then by id. */
  list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage>;
  /**
   * Optional, for a store one process owns (SQLite): every task in SUBMITTED or WORKING, which the engine settles on start-up. Shared stores
   * leave it out: their orphans are found through expired leases.
   */
  findUnfinished?(): Promise<Array<{ readonly scope: TaskScope; readonly taskId: string }>>;
  /**
   * Optional, for retention: removes up to `limit` terminal tasks of every scope whose status timestamp is strictly before `finishedBefore`,
   * oldest first, with everything kept for them; a task leaves get() and list() at once. Resolves with the count (fewer than `limit`: none
   * left, or another sweeper took some). Safe from several processes at once. Without it every task is kept.
   */
  removeFinished?(finishedBefore: string, limit: number): Promise<number>;
  /**
   * Optional, for tracing: keeps the `traceparent` of the request that started the task beside it (never in its JSON), so a turn on another
   * replica links to that trace. Called once after create(); removed with the task.
   */
  saveTraceContext?(scope: TaskScope, taskId: string, traceparent: string): Promise<void>;
  /** Optional, with saveTraceContext: what it kept for the task of `scope`, undefined when nothing. */
  loadTraceContext?(scope: TaskScope, taskId: string): Promise<string | undefined>;
  /** Optional; router.close() does not call it, the owner does. */
  close?(): Promise<void>;
}

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

/** Newest status timestamp first, then id for a stable order. */
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

/** A key for (tenant, owner, taskId): with the owner in it, a guessed task id never reaches another owner's execution. */
export const taskKey = (scope: TaskScope, taskId: string): string =>
  `${scope.tenant.length}:${scope.tenant}${scope.owner.length}:${scope.owner}${taskId}`;
