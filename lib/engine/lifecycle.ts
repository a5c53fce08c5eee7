/**
 * The executions live in this process (Executions) and the engine's life around them: settlement of
 * orphaned tasks and owed final writes, reads that wait for start-up settlement, the graceful close.
 */
import { A2AError, shuttingDown, taskNotFound } from '../errors.js';
import type { Logger } from '../options.js';
import { Execution, type ExecutionDeps } from './execution/execution.js';
import type { ResumeReason } from './executor.js';
import { immediateReadOf } from './immediate-writes.js';
import { OwedWrites, type OwedWrite } from './owed-writes.js';
import type { ExecutionRegistry } from './seams/execution-registry.js';
import type { LeasedTask, TaskLeases } from './seams/task-leases.js';
import type { TaskStore, TaskScope, VersionedTask } from './seams/task-store.js';
import { taskKey } from './seams/task-store.js';

/** The executions live in this process, by task key; one is forgotten as soon as it goes idle. */
export class Executions {
  readonly #registry: ExecutionRegistry<Execution>;
  readonly #deps: ExecutionDeps;
  /** The engine's final writes (FAILED, CANCELED) a store outage refused, tried again while the process lives. */
  readonly owed: OwedWrites;
  #drained: (() => void) | undefined;

  constructor(registry: ExecutionRegistry<Execution>, deps: Omit<ExecutionDeps, 'onIdle' | 'owed'>) {
    this.#registry = registry;
    this.owed = new OwedWrites({ logger: deps.logger, leases: deps.leases, settle: (write) => this.#settleOwed(write) });
    this.#deps = { ...deps, owed: this.owed, onIdle: (execution) => this.#forget(execution) };
  }

  get size(): number {
    return this.#registry.size;
  }

  get(key: string): Execution | undefined {
    return this.#registry.get(key);
  }

  values(): Iterable<Execution> {
    return this.#registry.values();
  }

  /** A new execution of the task, registered under `key` (`stored`: the task as read, absent for a new one). */
  open(key: string, scope: TaskScope, taskId: string, contextId: string, stored?: VersionedTask): Execution {
    const execution = new Execution(this.#deps, key, scope, taskId, contextId, stored);
    this.#registry.add(key, execution);
    return execution;
  }

  getOrOpen(key: string, scope: TaskScope, taskId: string, contextId: string, stored?: VersionedTask): Execution {
    return this.#registry.get(key) ?? this.open(key, scope, taskId, contextId, stored);
  }

  /** What the publishers of handed-off work write with (store, bus, logger, hooks). */
  get deps(): ExecutionDeps {
    return this.#deps;
  }

  /** Resolves once no execution is live (at once when none is). */
  drained(): Promise<void> {
    if (this.#registry.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => (this.#drained = resolve));
  }

  #forget(execution: Execution): void {
    this.#registry.remove(execution.key, execution);
    if (this.#registry.size === 0) this.#drained?.();
  }

  /** An owed write, made by a fresh execution unless one is live here (then still owed); rejects while the store fails. */
  async #settleOwed(write: OwedWrite): Promise<void> {
    const { key, scope, taskId, contextId, state, text } = write;
    if (this.#registry.get(key)) {
      this.owed.owe(write);
      return;
    }
    await this.open(key, scope, taskId, contextId).settleOwed(state, text);
  }
}

interface LifecycleDeps {
  readonly store: TaskStore;
  readonly executions: Executions;
  readonly logger: Logger;
  /** Per-task leases (several replicas on one store); none for one process. */
  readonly leases?: TaskLeases;
}

export const RESTARTED_TEXT = 'The server restarted before the agent finished this task.';
export const REPLICA_LOST_TEXT = 'The server running this task stopped before the agent finished it.';

export class EngineLifecycle {
  readonly #deps: LifecycleDeps;
  /** Open SubscribeToTask streams (their end, by the key of the task they follow), so that close() can end them. */
  readonly #subscriptions = new Map<() => void, string>();
  #closing = false;
  /** Start-up settlement of tasks a previous process left mid-turn; requests wait for it. */
  #recovering: Promise<void> | undefined;
  #sweeper: NodeJS.Timeout | undefined;

  /** Starts the lease sweep (with leases) or the start-up settlement (a store that can find unfinished tasks). */
  constructor(deps: LifecycleDeps) {
    this.#deps = deps;
    const { leases, store } = deps;
    if (leases) {
      // A replica that dies leaves its tasks' leases to expire; whichever replica claims one settles it.
      this.#sweeper = setInterval(() => void this.sweepExpiredLeases(leases), Math.max(100, leases.sweepIntervalMs));
      this.#sweeper.unref();
    } else if (store.findUnfinished) {
      // One process owns this store: what is mid-turn in it now died with the previous process.
      const recovering = this.#settleUnfinished(store.findUnfinished.bind(store));
      this.#recovering = recovering;
      void recovering.then(() => {
        if (this.#recovering === recovering) this.#recovering = undefined;
      });
    }
  }

  /** The start-up settlement while it runs (requests await it first), else undefined. */
  get recovering(): Promise<void> | undefined {
    return this.#recovering;
  }

  get closing(): boolean {
    return this.#closing;
  }

  /** Throws shuttingDown() once close() was called: no new turn or subscription. */
  refuseWhenClosing(): void {
    if (this.#closing) throw shuttingDown();
  }

  async #settleUnfinished(find: () => Promise<ReadonlyArray<LeasedTask>>): Promise<void> {
    try {
      const unfinished = await find();
      for (const task of unfinished) await this.settleOrphan(task, RESTARTED_TEXT, 'restart');
      if (unfinished.length > 0)
        this.#deps.logger.warn({ tasks: unfinished.length }, 'tasks left mid-turn by the previous process were settled (resumed or failed)');
    } catch (error) {
      this.#deps.logger.error({ err: error }, 'could not settle the tasks the previous process left mid-turn');
    }
  }

  /** Claims the tasks whose lease expired (their replica died) and settles them. */
  async sweepExpiredLeases(leases: TaskLeases): Promise<void> {
    let expired: LeasedTask[];
    try {
      expired = await leases.claimExpired();
    } catch (error) {
      this.#deps.logger.debug({ err: error }, 'could not look for expired task leases'); // an outage is logged once
      return;
    }
    for (const task of expired) await this.settleOrphan(task, REPLICA_LOST_TEXT, 'replica-lost');
  }

  /**
   * A task whose turn died with its process, unless parked or finished by now: resumed, or FAILED
   * with `text` (see Execution.settleOrphan). Resolves once the resumed turn started, not ended.
   */
  async settleOrphan({ scope, taskId }: LeasedTask, text: string, reason: ResumeReason): Promise<void> {
    const key = taskKey(scope, taskId);
    const { store, executions, logger } = this.#deps;
    try {
      const stored = await store.get(scope, taskId);
      if (!stored || executions.get(key)) return; // gone, or running here: not an orphan
      await executions.open(key, scope, taskId, stored.task.contextId ?? '', stored).settleOrphan(text, reason);
    } catch (error) {
      logger.debug({ err: error, taskId }, 'could not settle a task left mid-turn'); // an outage is logged once
    }
  }

  /** Keeps an open stream's `end` (it follows the task under `key`) until it is forgotten: close() calls it. */
  trackSubscription(key: string, end: () => void): void {
    this.#subscriptions.set(end, key);
  }

  forgetSubscription(end: () => void): void {
    this.#subscriptions.delete(end);
  }

  /** See A2ARequestHandler.close. */
  async close(graceMs: number): Promise<void> {
    this.#closing = true;
    clearInterval(this.#sweeper);
    const executions = this.#deps.executions;
    executions.owed.close();
    // Streams of parked tasks end now; a running task's stream ends after its last event, below.
    for (const [end, key] of [...this.#subscriptions]) if (!executions.get(key)) end();
    if (executions.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
        timer.unref();
      });
      await Promise.race([executions.drained(), graceOver]);
      clearTimeout(timer);
      await Promise.all([...executions.values()].map((execution) => execution.shutdown()));
    }
    for (const end of [...this.#subscriptions.keys()]) end();
  }
}

/** Reads a task in the caller's scope: after start-up settlement; a store failure is Unavailable, another scope's task TaskNotFound. */
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
