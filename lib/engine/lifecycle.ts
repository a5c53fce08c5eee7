/**
 * The engine's life around its requests: the start-up settlement of tasks a previous process left
 * mid-turn, the periodic sweep of expired leases (several replicas), the settling of those orphans
 * (resumed by executor.resume() when the agent has it, else failed), and the graceful close (new
 * turns refused, running ones let finish or failed, streams ended).
 */
import { shuttingDown } from '../errors.js';
import type { Logger } from '../options.js';
import type { ResumeReason } from './executor.js';
import type { Executions } from './executions.js';
import type { LeasedTask, TaskLeases } from './seams/task-leases.js';
import type { TaskStore } from './seams/task-store.js';
import type { OwedWrite, OwedWrites } from './owed-writes.js';
import { taskKey } from './task-key.js';

interface LifecycleDeps {
  readonly store: TaskStore;
  readonly executions: Executions;
  readonly logger: Logger;
  /** Per-task leases (several replicas on one store); none for one process. */
  readonly leases?: TaskLeases;
  /** The final writes a store outage refused, tried again while the process lives. */
  readonly owed?: OwedWrites;
}

export const RESTARTED_TEXT = 'The server restarted before the agent finished this task.';
export const REPLICA_LOST_TEXT = 'The server running this task stopped before the agent finished it.';

export class EngineLifecycle {
  readonly #deps: LifecycleDeps;
  /** Open SubscribeToTask streams (their end, by the key of the task they follow), so that close() can end them. */
  readonly #subscriptions = new Map<() => void, string>();
  #closing = false;
  #drained: (() => void) | undefined;
  /** Start-up settlement of tasks a previous process left mid-turn; requests wait for it. */
  #recovering: Promise<void> | undefined;
  /** The periodic claim of expired leases (several replicas). */
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

  /**
   * A final write a store outage refused (see OwedWrites): made by a fresh execution of the task,
   * unless one is live here (it owns the task; the write stays owed until it is idle). Rejects
   * when the store still fails.
   */
  async settleOwed(write: OwedWrite): Promise<void> {
    const { key, scope, taskId, contextId, state, text } = write;
    const { executions, owed } = this.#deps;
    if (executions.get(key)) {
      owed?.owe(write);
      return;
    }
    await executions.open(key, scope, taskId, contextId).settleOwed(state, text);
  }

  /** Keeps an open stream's `end` (it follows the task under `key`) until it is forgotten: close() calls it. */
  trackSubscription(key: string, end: () => void): void {
    this.#subscriptions.set(end, key);
  }

  forgetSubscription(end: () => void): void {
    this.#subscriptions.delete(end);
  }

  /** An execution went idle: during a close, the last one lets it go on. */
  executionIdle(): void {
    if (this.#closing && this.#deps.executions.size === 0) this.#drained?.();
  }

  /**
   * Graceful shutdown: refuses new messages and subscriptions from now on, lets running turns end
   * within `graceMs`, then aborts the rest (their tasks FAILED with the reason), and ends every
   * open subscription. Resolves when nothing runs. Reads and CancelTask are still served meanwhile.
   */
  async close(graceMs: number): Promise<void> {
    this.#closing = true;
    clearInterval(this.#sweeper);
    this.#deps.owed?.close();
    const executions = this.#deps.executions;
    // Streams of tasks with nothing running here (parked ones) would wait out the grace period for
    // nothing: they end now; a running task's stream ends after its last event, below.
    for (const [end, key] of [...this.#subscriptions]) if (!executions.get(key)) end();
    if (executions.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.#drained = resolve;
        timer = setTimeout(resolve, graceMs);
        timer.unref();
      });
      clearTimeout(timer);
      await Promise.all([...executions.values()].map((execution) => execution.shutdown()));
    }
    for (const end of [...this.#subscriptions.keys()]) end();
  }
}
