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

/** The result of writing one event. */
export type Commit =
  | {
      readonly kind: 'committed';
      /**
       * The writer's own copy as of `version`. Its status is this commit's for good (a status event
       * makes a new object), but later events append to its artifacts' parts and its history in
       * place: copy those if they must outlive the next commit.
       */
      readonly task: Task;
      /** The task before the event; the same object as `task` after an artifact event (folded in place). */
      readonly previous: Task | undefined;
      readonly event: StreamResponse;
      readonly version: number;
    }
  /** The event is not valid on the task as it stands (the reducer's reason). */
  | { readonly kind: 'refused'; readonly reason: string }
  /** The task is terminal: nothing more is written. */
  | { readonly kind: 'ended'; readonly task: Task };

/**
 * What the writer's caller (a client's turn, or a handed-off publisher) is told of a failed write:
 * an A2AError as it is, a task the store no longer has as not found, an id collision or conflicts
 * that did not settle as internal, any other store failure as unavailable. Everything but an
 * A2AError is logged here (`failed` names the writer) and never sent as such.
 */
export function writeFailure(error: unknown, taskId: string, logger: Logger, failed = 'the task store failed'): A2AError {
  if (error instanceof A2AError) return error;
  if (error instanceof TaskNotFoundInStoreError) return taskNotFound(taskId);
  if (error instanceof TaskExistsError) logger.error({ err: error, taskId }, 'task id collision in the store');
  // An outage is logged once by the engine's StoreOutage account; here one debug line per request.
  else logger.debug({ err: error, taskId }, failed);
  return error instanceof TaskExistsError || error instanceof TaskVersionConflictError ? new A2AError('Internal') : new A2AError('Unavailable');
}

/**
 * The change a store is given, with the event it records: a literal per kind rather than a spread
 * of the reducer's change (a clone of an object, then a property added to it, on every event).
 */
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

/** Conflicts in a row before a write gives up (each means another writer won meanwhile). */
const MAX_CONFLICT_RETRIES = 8;

export class TaskWriter {
  readonly #store: TaskStore;
  readonly #scope: TaskScope;
  readonly #taskId: string;
  readonly #contextId: string;
  /** The task as last read or written here, with its store version (undefined until created). */
  #committed: VersionedTask | undefined;
  /** The copy holds a fold whose write failed: read the task again before folding on it. */
  #stale = false;
  /** A create failed without a store's answer: it may have committed, so a later "exists" is this task. */
  #createUnsure = false;
  /** The store's writes made within the call, when it has them (see immediate-writes.ts). */
  readonly #immediate: ImmediateWrites | undefined;
  /** The fold's context of every event but the one that creates the task (built once). */
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

  /** The fold's context: the opening message matters only to the write that creates the task. */
  #reduceContext(openingMessage: Message | undefined): ReduceContext {
    return openingMessage ? { taskId: this.#taskId, contextId: this.#contextId, openingMessage } : this.#ids;
  }

  /** The task as last read or written here. */
  get task(): Task | undefined {
    return this.#committed?.task;
  }

  /**
   * Folds `event` into the task and writes it (a store with immediate writes answers within the
   * call, without a store promise). After a conflict the task is read again and `recheck` may
   * refuse the write on what it now is. Store failures reject as the store's errors.
   */
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
        // Folded in place (an artifact's parts, a status message in the shared history): the copy
        // now has an event the store does not.
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

  /** The store version of that copy (undefined until created). */
  get version(): number | undefined {
    return this.#committed?.version;
  }

  /** Reads the task as stored now; TaskNotFound when it is gone from this scope. */
  async reload(): Promise<Task> {
    const stored = await this.#store.get(this.#scope, this.#taskId);
    if (!stored) throw taskNotFound(this.#taskId);
    this.#committed = stored;
    this.#stale = false;
    return stored.task;
  }
}
