/**
 * Every Redis key and channel name the seams use, in one place. Each name is the prefix, a literal kind, then the variable parts; user text (tenant,
 * owner, context id) is length-prefixed, so two different (tenant, owner, context) triples can never produce the same name.
 */
import type { TaskState } from '../../protocol/schemas.js';
import type { TaskScope } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/seams/task-store.js';

export const DEFAULT_KEY_PREFIX = 'a2a:';

/** `<length>:<text>`: unambiguous however the parts are joined. */
const part = (text: string): string => `${text.length}:${text}`;

/** Identifies a scope inside key names and in the task hash. */
export const scopeId = (scope: TaskScope): string => part(scope.tenant) + part(scope.owner);

export class RedisKeys {
  constructor(readonly prefix: string = DEFAULT_KEY_PREFIX) {}

  /** Hash: the task's scope, version, JSON, terminal flag and the index entries it is listed under. */
  task(taskId: string): string {
    return `${this.prefix}task:${taskId}`;
  }

  /**
   * List: the artifact and status updates written since the task's JSON in its hash was last written, as `a<artifact update JSON>` or `s<status
   * update JSON>`, oldest first; folded in on read.
   */
  taskDeltas(taskId: string): string {
    return `${this.prefix}task-deltas:${taskId}`;
  }

  /**
   * Sorted sets listing a scope's tasks (all of them; by context; by state; by both), members in ListTasks order. One is read per query, whichever
   * matches its filters.
   */
  taskIndex(scope: TaskScope, contextId?: string, state?: TaskState): string {
    const base = `${this.prefix}tasks:${scopeId(scope)}`;
    if (contextId === undefined) return state === undefined ? `${base}all` : `${base}state:${state}`;
    return state === undefined ? `${base}ctx:${part(contextId)}` : `${base}ctx-state:${part(contextId)}${state}`;
  }

  /**
   * The by-context sets a task without a context id is kept in: no query names them (a contextId filter never matches such a task), but every task
   * has the same four entries to maintain.
   */
  noContextIndex(scope: TaskScope, state?: TaskState): string {
    const base = `${this.prefix}tasks:${scopeId(scope)}`;
    return state === undefined ? `${base}no-ctx` : `${base}no-ctx-state:${state}`;
  }

  /**
   * Sorted set of every finished task (score 0), member `<status timestamp> NUL <taskKey>`: byte order is finishing order, so retention reads the
   * oldest with one ZRANGEBYLEX.
   */
  finishedTasks(): string {
    return `${this.prefix}tasks-finished`;
  }

  /** Stream: the task's recent committed events, entry id `<version>-0`. Task keys are taskKey(). */
  events(key: string): string {
    return `${this.prefix}events:${key}`;
  }

  /** Channel: the same events, live, for the processes following the task. */
  eventsChannel(key: string): string {
    return `${this.prefix}events:${key}`;
  }

  /** The stream and channel of a task's events by scope and id: the names the bus uses for taskKey(scope, taskId). */
  taskEvents(scope: TaskScope, taskId: string): { readonly stream: string; readonly channel: string } {
    const key = taskKey(scope, taskId);
    return { stream: this.events(key), channel: this.eventsChannel(key) };
  }

  /** Channel: cancel requests for whichever process runs the task's turn. */
  cancelChannel(key: string): string {
    return `${this.prefix}cancel:${key}`;
  }

  /** String and stream: how many cancel requests were sent; the latest ones, entry id `<number>-0`, field `k` the task key. */
  cancels(): { readonly count: string; readonly log: string } {
    return { count: `${this.prefix}cancels:count`, log: `${this.prefix}cancels` };
  }

  /** String: the holder of the task's lease, with the lease's time to live. */
  lease(key: string): string {
    return `${this.prefix}lease:${key}`;
  }

  /** Channel: a notice that the task's lease was released, for processes waiting to take it. */
  leaseReleasedChannel(key: string): string {
    return `${this.prefix}lease-released:${key}`;
  }

  /** Set: every task mid-turn (SUBMITTED or WORKING), as its member of the live-lease set. */
  midTurnTasks(): string {
    return `${this.prefix}tasks-mid-turn`;
  }

  /** Sorted set: every held lease, scored by when it expires (Redis server time, ms). */
  leases(): string {
    return `${this.prefix}leases`;
  }

  /** Hash: the task's push configs (`c:<id>`), failing flags (`f:`), cursors (`d:`) and attempts (`a:`). */
  pushConfigs(key: string): string {
    return `${this.prefix}push:${key}`;
  }

  /** Sorted set: the task's push config ids, scored in the order they were added. */
  pushOrder(key: string): string {
    return `${this.prefix}push-order:${key}`;
  }

  /** Set: every task with push configs, as JSON `[tenant, owner, taskId]` (what the sweep reads). */
  pushTasks(): string {
    return `${this.prefix}push-tasks`;
  }

  /** String: the replica delivering the task's push notifications now, with a time to live. */
  pushClaim(key: string): string {
    return `${this.prefix}push-claim:${key}`;
  }
}

/** A task's member of the live-lease and mid-turn sets: what the lease sweep returns for it. */
export const leaseMember = (key: string, scope: TaskScope, taskId: string): string => JSON.stringify([key, scope.tenant, scope.owner, taskId]);
