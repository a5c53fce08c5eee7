/**
 * The task store contract. Every call takes the caller's scope: a task is visible only to the
 * (tenant, owner) that created it, and a task of another scope looks exactly like a missing one.
 * Implementations clone on the way in and out, so callers never share objects with the store.
 */
import type { Task, TaskState } from '../../protocol/schemas.js';

/** Who is asking: tasks are partitioned by tenant, then owned by one caller. */
export interface TaskScope {
  readonly tenant: string;
  readonly owner: string;
}

export interface ListTasksQuery {
  readonly contextId?: string;
  readonly status?: TaskState;
  /** 1..100, already validated. */
  readonly pageSize: number;
  /** Opaque token from a previous page; a malformed one rejects with InvalidPageTokenError. */
  readonly pageToken?: string;
  /** Inclusive lower bound on status.timestamp (RFC 3339). */
  readonly statusTimestampAfter?: string;
}

export interface TaskPage {
  readonly tasks: Task[];
  /** '' on the last page. */
  readonly nextPageToken: string;
  /** Matches before paging. */
  readonly totalSize: number;
}

export interface TaskStore {
  /** The task when it exists in `scope`; undefined when missing or in another scope. */
  get(scope: TaskScope, taskId: string): Promise<Task | undefined>;
  /** Stores a new task in `scope`. Rejects when the id is taken (in any scope). */
  create(scope: TaskScope, task: Task): Promise<void>;
  /** Replaces a task of `scope`. Rejects when no such task exists in `scope`. */
  update(scope: TaskScope, task: Task): Promise<void>;
  /** Tasks of `scope` matching the filters, newest status timestamp first. */
  list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage>;
}

/** Thrown by list() for a page token the store did not issue. */
export class InvalidPageTokenError extends Error {
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
