/** One task's events folded by the reducer and written compare-and-set on the version last seen; a conflict re-reads and folds again. */
import { A2AError, taskNotFound } from '../errors.js';
import type { Logger } from '../options.js';
import type { Message, StreamResponse, Task } from '../protocol/schemas.js';
import {
  TaskExistsError,
  TaskNotFoundInStoreError,
  TaskStoreError,
  TaskVersionConflictError,
  type TaskChange,
  type TaskScope,
  type TaskStore,
  type VersionedTask,
} from './seams/task-store.js';
import { immediateWritesOf, type ImmediateWrites } from './immediate-writes.js';
import { foldTaskInPlace, type ReduceContext, type TaskEvent } from './task-reducer.js';
import { isTerminal } from './task-state.js';

export type Commit =
  | {
      readonly kind: 'committed';
      /** The writer's own copy: its status is final, but later events append to its parts and history in place. */
      readonly task: Task;
      /** The same object as `task` after an artifact event (folded in place). */
      readonly previous: Task | undefined;
      readonly event: StreamResponse;
      readonly version: number;
    }
  | { readonly kind: 'refused'; readonly reason: string }
  | { readonly kind: 'ended'; readonly task: Task };

/**
 * A failed write as the caller is told it: not found, internal (id collision, unsettled conflicts) or
 * unavailable. Everything but an A2AError is logged here and never sent as such.
 */
export function writeFailure(error: unknown, taskId: string, logger: Logger, failed = 'the task store failed'): A2AError {
  if (error instanceof A2AError) return error;
  if (error instanceof TaskNotFoundInStoreError) return taskNotFound(taskId);
  if (error instanceof TaskExistsError) logger.error({ err: error, taskId }, 'task id collision in the store');
  // StoreOutage logs an outage once; here one debug line per request.
  else logger.debug({ err: error, taskId }, failed);
  return error instanceof TaskExistsError || error instanceof TaskVersionConflictError ? new A2AError('Internal') : new A2AError('Unavailable');
}

/** A literal per kind: spreading the reducer's change would clone an object on every event. */
function changeWithEvent(change: TaskChange, event: StreamResponse): TaskChange {
  switch (change.kind) {
    case 'status':
      return { kind: 'status', update: change.update, event };
    case 'artifact':
      return { kind: 'artifact', update: change.update, event };
    default:
      return { kind: 'replace', event };
  }
}

const MAX_CONFLICT_RETRIES = 8;

export class TaskWriter {
  readonly #store: TaskStore;
  readonly #scope: TaskScope;
  readonly #taskId: string;
  readonly #contextId: string;
  #committed: VersionedTask | undefined;
  /** A fold whose write failed is in the copy: re-read before folding on it. */
  #stale = false;
  /** A create failed without a store's answer: it may have committed, so a later "exists" is this task. */
  #createUnsure = false;
  readonly #immediate: ImmediateWrites | undefined;
  readonly #ids: ReduceContext;

  constructor(store: TaskStore, scope: TaskScope, taskId: string, contextId: string, stored?: VersionedTask) {
    this.#store = store;
    this.#scope = scope;
    this.#taskId = taskId;
    this.#contextId = contextId;
    this.#committed = stored;
    this.#immediate = immediateWritesOf(store);
    this.#ids = { taskId, contextId };
  }

  #reduceContext(openingMessage: Message | undefined): ReduceContext {
    return openingMessage ? { taskId: this.#taskId, contextId: this.#contextId, openingMessage } : this.#ids;
  }

  get task(): Task | undefined {
    return this.#committed?.task;
  }

  /** Folds and writes `event`; after a conflict it re-reads and `recheck` may refuse on the fresh task. */
  async commit(event: TaskEvent, openingMessage: Message | undefined, recheck?: (fresh: Task) => A2AError | undefined): Promise<Commit> {
    if (this.#stale) await this.reload();
    const immediate = this.#immediate;
    for (let attempt = 0; ; attempt++) {
      const base = this.#committed;
      if (base && isTerminal(base.task.status.state)) return { kind: 'ended', task: base.task };
      const reduced = foldTaskInPlace(base?.task, event, this.#reduceContext(openingMessage));
      if (!reduced.ok) return { kind: 'refused', reason: reduced.reason };
      let version: number;
      try {
        const change = base && changeWithEvent(reduced.change, reduced.event);
        if (immediate)
          version = base ? immediate.updateNow(this.#scope, reduced.task, base.version, change!) : immediate.createNow(this.#scope, reduced.task);
        else
          version = base
            ? await this.#store.update(this.#scope, reduced.task, base.version, change!)
            : await this.#store.create(this.#scope, reduced.task);
      } catch (error) {
        // Folded in place: the copy now has an event the store does not.
        if (base && reduced.change.kind !== 'replace') this.#stale = true;
        const ownCreate = !base && error instanceof TaskExistsError && this.#createUnsure;
        if (!base && !(error instanceof TaskStoreError)) this.#createUnsure = true;
        if (!(error instanceof TaskVersionConflictError || ownCreate) || attempt >= MAX_CONFLICT_RETRIES) throw error;
        await this.reload();
        const refusal = recheck?.(this.#committed!.task);
        if (refusal) throw refusal;
        continue;
      }
      this.#committed = { task: reduced.task, version };
      return { kind: 'committed', task: reduced.task, previous: base?.task, event: reduced.event, version };
    }
  }

  get version(): number | undefined {
    return this.#committed?.version;
  }

  /** TaskNotFound when the task is gone from this scope. */
  async reload(): Promise<Task> {
    const stored = await this.#store.get(this.#scope, this.#taskId);
    if (!stored) throw taskNotFound(this.#taskId);
    this.#committed = stored;
    this.#stale = false;
    return stored.task;
  }
}
