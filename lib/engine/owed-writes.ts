/**
 * The engine's final writes (FAILED, CANCELED) a store outage refused: kept, a bounded set by task,
 * and tried again with backoff while the process lives, so no task is left mid-turn with nothing
 * running once the store answers again. Once written (or found ended), nothing of it remains.
 */
import type { Logger } from '../logger.js';
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
}

export class OwedWrites {
  readonly #options: OwedWritesOptions;
  readonly #owed = new Map<string, OwedWrite>();
  #timer: NodeJS.Timeout | undefined;
  #delayMs: number;
  #closed = false;
  #full = false;

  constructor(options: OwedWritesOptions) {
    this.#options = options;
    this.#delayMs = options.firstRetryMs ?? 100;
  }

  /** Tasks owed a final write now. */
  get size(): number {
    return this.#owed.size;
  }

  /** The store refused `write`: try it again later (a later one for the same task replaces it). */
  owe(write: OwedWrite): void {
    if (this.#closed) return;
    if (!this.#owed.has(write.key) && this.#owed.size >= (this.#options.max ?? 10_000)) {
      if (!this.#full) this.#options.logger.warn({ owed: this.#owed.size }, 'too many final writes owed; later ones are left to the start-up settlement');
      this.#full = true;
      return;
    }
    this.#owed.set(write.key, write);
    this.#schedule();
  }

  /** No more retries (shutdown): what is still owed is left to the start-up settlement. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#owed.clear();
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
