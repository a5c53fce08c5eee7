/**
 * Reads a task in the caller's scope for a request: after start-up settlement, with a store failure
 * answered as unavailable, and another owner's or tenant's task answered as a missing one.
 */
import { A2AError, taskNotFound } from '../errors.js';
import type { Logger } from '../options.js';
import { immediateReadOf } from './immediate-writes.js';
import type { EngineLifecycle } from './lifecycle.js';
import type { TaskScope, TaskStore, VersionedTask } from './seams/task-store.js';

export class TaskReader {
  readonly #store: TaskStore;
  readonly #lifecycle: EngineLifecycle;
  readonly #logger: Logger;
  /** The store's reads made within the call, when it has them: no deadline promise or timer per read. */
  readonly #readNow: ((scope: TaskScope, taskId: string) => VersionedTask | undefined) | undefined;

  constructor(store: TaskStore, lifecycle: EngineLifecycle, logger: Logger) {
    this.#store = store;
    this.#lifecycle = lifecycle;
    this.#logger = logger;
    this.#readNow = immediateReadOf(store);
  }

  /** Resolves once start-up settlement is over (undefined when there is none to wait for). */
  get recovering(): Promise<void> | undefined {
    return this.#lifecycle.recovering;
  }

  /** The task if `scope` may see it; TaskNotFound otherwise (same answer as a missing id). */
  async read(scope: TaskScope, taskId: string): Promise<VersionedTask> {
    const recovering = this.#lifecycle.recovering;
    if (recovering) await recovering;
    let stored: VersionedTask | undefined;
    try {
      const readNow = this.#readNow;
      stored = readNow ? readNow(scope, taskId) : await this.#store.get(scope, taskId);
    } catch (error) {
      throw this.storeFailure(error);
    }
    if (!stored) throw taskNotFound(taskId);
    return stored;
  }

  /** A store that failed: logged, and answered as unavailable (never its own text). */
  storeFailure(error: unknown): A2AError {
    if (error instanceof A2AError) return error;
    // An outage is logged once by the engine's StoreOutage account; here one debug line per request.
    this.#logger.debug({ err: error }, 'the task store failed');
    return new A2AError('Unavailable');
  }
}
