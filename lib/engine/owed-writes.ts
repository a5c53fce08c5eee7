/** The engine's final writes (FAILED, CANCELED) an outage refused, retried with backoff; with leases each stays leased between retries. */
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
  readonly settle: (owed: OwedWrite) => Promise<void>;
  readonly logger: Logger;
  /** At most this many tasks are owed at once; later ones are left to the start-up settlement. */
  readonly max?: number;
  readonly firstRetryMs?: number;
  readonly maxRetryMs?: number;
  readonly leases?: TaskLeases;
  /** How long to wait for the lease the failed execution is giving back. Default 5000 ms. */
  readonly leaseWaitMs?: number;
}

export class OwedWrites {
  readonly #options: OwedWritesOptions;
  readonly #owed = new Map<string, OwedWrite>();
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

  /** Shutdown: what is owed is left to the start-up settlement or, with leases, to their expiry. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#owed.clear();
    this.#held.clear();
  }

  /** Waits for the failed execution to give the lease back; not leased, the retry finds out. */
  #hold(write: OwedWrite): void {
    const leases = this.#options.leases;
    if (!leases || this.#held.has(write.key)) return;
    const task = { scope: write.scope, taskId: write.taskId };
    this.#held.set(
      write.key,
      leases.acquire(write.key, task, this.#options.leaseWaitMs ?? 5_000).catch(() => undefined),
    );
  }

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
