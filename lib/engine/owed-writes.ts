/**
 * The engine's final writes (FAILED, CANCELED) a store outage refused, retried with backoff while the
 * process lives; with leases each owed task stays leased between retries (if this process dies, another replica settles it).
 */
import type { Logger } from '../options.js';
import type { TaskLease, TaskLeases } from './seams/task-leases.js';
import type { TaskScope } from './seams/task-store.js';

export interface OwedWrite {
  readonly key: string;
  readonly scope: TaskScope;
  readonly taskId: string;
  readonly contextId: string;
  readonly state: 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED';
  readonly text: string;
}

interface OwedWritesOptions {
  /** Writes one; a failure owes it again (through owe()). */
  readonly settle: (owed: OwedWrite) => Promise<void>;
  readonly logger: Logger;
  /** At most this many tasks are owed at once; later ones are left to the start-up settlement. */
  readonly max?: number;
  readonly firstRetryMs?: number;
  readonly maxRetryMs?: number;
  /** Several replicas: an owed task is kept leased between retries (none: one process). */
  readonly leases?: TaskLeases;
  /** How long to wait for the lease the failed execution is giving back. Default 5000 ms. */
  readonly leaseWaitMs?: number;
}

export class OwedWrites {
  readonly #options: OwedWritesOptions;
  readonly #owed = new Map<string, OwedWrite>();
  /** The leases held for owed tasks between retries (or being acquired), by task key. */
  readonly #held = new Map<string, Promise<TaskLease | undefined>>();
  #timer: NodeJS.Timeout | undefined;
  #delayMs: number;
  #closed = false;
  #full = false;

  constructor(options: OwedWritesOptions) {
    this.#options = options;
    this.#delayMs = options.firstRetryMs ?? 100;
  }

  get size(): number {
    return this.#owed.size;
  }

  /** The store refused `write`: try it again later (a later one for the same task replaces it). */
  owe(write: OwedWrite): void {
    if (this.#closed) return;
    if (!this.#owed.has(write.key) && this.#owed.size >= (this.#options.max ?? 10_000)) {
      if (!this.#full)
        this.#options.logger.warn({ owed: this.#owed.size }, 'too many final writes owed; later ones are left to the start-up settlement');
      this.#full = true;
      return;
    }
    this.#owed.set(write.key, write);
    this.#hold(write);
    this.#schedule();
  }

  /** No more retries (shutdown): what is owed is left to the start-up settlement or, with leases, to their expiry. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#owed.clear();
    this.#held.clear();
  }

  /** Leases the owed task until its next retry (waiting for the failed execution to give it back); not leased, that retry finds out. */
  #hold(write: OwedWrite): void {
    const leases = this.#options.leases;
    if (!leases || this.#held.has(write.key)) return;
    const task = { scope: write.scope, taskId: write.taskId };
    this.#held.set(
      write.key,
      leases.acquire(write.key, task, this.#options.leaseWaitMs ?? 5_000).catch(() => undefined),
    );
  }

  /** Gives the held lease back just before a retry, whose execution leases the task to write. */
  async #letGo(key: string): Promise<void> {
    const held = this.#held.get(key);
    if (!held) return;
    this.#held.delete(key);
    await (await held)?.release().catch(() => undefined);
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = setTimeout(() => void this.#retry(), this.#delayMs);
    this.#timer.unref();
  }

  async #retry(): Promise<void> {
    const round = [...this.#owed.values()];
    this.#owed.clear();
    this.#full = false;
    for (const write of round) {
      try {
        await this.#letGo(write.key);
        await this.#options.settle(write);
      } catch {
        this.owe(write);
      }
    }
    this.#timer = undefined;
    // Still failing: wait longer (up to maxRetryMs); all written: the next outage starts quick.
    this.#delayMs = this.#owed.size > 0 ? Math.min(this.#delayMs * 2, this.#options.maxRetryMs ?? 10_000) : (this.#options.firstRetryMs ?? 100);
    if (this.#owed.size > 0) this.#schedule();
  }
}
