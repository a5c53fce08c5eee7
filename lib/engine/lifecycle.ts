/** The executions live in this process and the engine's life around them: settlement, owed writes, close. */
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

/** Executions by task key; one is forgotten as soon as it goes idle. */
export class Executions {
  readonly #registry: ExecutionRegistry<Execution>;
  readonly #deps: ExecutionDeps;
  /** Final writes (FAILED, CANCELED) an outage refused, retried while the process lives. */
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

  open(key: string, scope: TaskScope, taskId: string, contextId: string, stored?: VersionedTask): Execution {
    const execution = new Execution(this.#deps, key, scope, taskId, contextId, stored);
    this.#registry.add(key, execution);
    return execution;
  }

  getOrOpen(key: string, scope: TaskScope, taskId: string, contextId: string, stored?: VersionedTask): Execution {
    return this.#registry.get(key) ?? this.open(key, scope, taskId, contextId, stored);
  }

  get deps(): ExecutionDeps {
    return this.#deps;
  }

  drained(): Promise<void> {
    if (this.#registry.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => (this.#drained = resolve));
  }

  #forget(execution: Execution): void {
    this.#registry.remove(execution.key, execution);
    if (this.#registry.size === 0) this.#drained?.();
  }

  /** Made by a fresh execution unless one is live here (then still owed); rejects while the store fails. */
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
  readonly leases?: TaskLeases;
}

export const RESTARTED_TEXT = 'The server restarted before the agent finished this task.';
export const REPLICA_LOST_TEXT = 'The server running this task stopped before the agent finished it.';

export class EngineLifecycle {
  readonly #deps: LifecycleDeps;
  /** Open SubscribeToTask streams' ends by task key, so close() can end them. */
  readonly #subscriptions = new Map<() => void, string>();
  #closing = false;
  #recovering: Promise<void> | undefined;
  #sweeper: NodeJS.Timeout | undefined;

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

  /** Requests await it first. */
  get recovering(): Promise<void> | undefined {
    return this.#recovering;
  }

  get closing(): boolean {
    return this.#closing;
  }

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

  /** Resumed or FAILED with `text` unless parked or finished by now; resolves once the resumed turn started. */
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

  trackSubscription(key: string, end: () => void): void {
    this.#subscriptions.set(end, key);
  }

  forgetSubscription(end: () => void): void {
    this.#subscriptions.delete(end);
  }

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
  /** Reads within the call, when the store has them: no deadline promise or timer per read. */
  readonly #readNow: ((scope: TaskScope, taskId: string) => VersionedTask | undefined) | undefined;

  constructor(store: TaskStore, lifecycle: EngineLifecycle, logger: Logger) {
    this.#store = store;
    this.#lifecycle = lifecycle;
    this.#logger = logger;
    this.#readNow = immediateReadOf(store);
  }

  get recovering(): Promise<void> | undefined {
    return this.#lifecycle.recovering;
  }

  /** TaskNotFound for another scope's task, the same answer as a missing id. */
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

  storeFailure(error: unknown): A2AError {
    if (error instanceof A2AError) return error;
    // StoreOutage logs an outage once; here one debug line per request.
    this.#logger.debug({ err: error }, 'the task store failed');
    return new A2AError('Unavailable');
  }
}
