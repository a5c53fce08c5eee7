/** Retention: a timer that removes finished tasks past their time to live, in batches, never overlapping itself. */
import { z } from 'zod';
import { consoleLogger, type Logger } from '../options.js';
import { hasMethods, optionsError, parseOptions } from '../options.js';
import type { TaskStore } from './seams/task-store.js';

export interface RetentionOptions {
  /** The store to sweep: it must implement removeFinished(). */
  readonly store: TaskStore;
  /** How long a task is kept after its terminal status (by its status timestamp), in ms. At least a second. */
  readonly ttlMs: number;
  /** Time between sweeps, in ms (a sweep ends before the next is scheduled). Default 60000. */
  readonly intervalMs?: number;
  /** Tasks per removeFinished() call (one SQLite transaction or Redis script, a few ms at 100). Default 100. */
  readonly batchSize?: number;
  /** Counts at info (debug when nothing was removed); a failing store once per outage. */
  readonly logger?: Logger;
  /** The clock, ms since the epoch. Default Date.now. */
  readonly now?: () => number;
}

/** Stops the timer; resolves once a sweep in progress has stopped (after its current batch). */
export type StopRetention = () => Promise<void>;

const DAY_MS = 86_400_000;

const optionsSchema = z.strictObject({
  store: z.custom<TaskStore>(hasMethods('get', 'create', 'update', 'list'), { error: 'must be a TaskStore' }),
  ttlMs: z
    .number()
    .int()
    .min(1_000)
    .max(3650 * DAY_MS),
  intervalMs: z.number().int().min(10).max(DAY_MS).default(60_000),
  batchSize: z.number().int().min(1).max(10_000).default(100),
  logger: z
    .custom<Logger>(hasMethods('debug', 'info', 'warn', 'error'), { error: 'must be a logger (debug, info, warn, error)' })
    .default(consoleLogger),
  now: z.custom<() => number>((v) => typeof v === 'function', { error: 'must be a function returning ms since the epoch' }).default(() => Date.now),
});

type Parsed = z.output<typeof optionsSchema>;

/**
 * The first sweep comes after a random part of one interval, so replicas started together do not
 * sweep at once, and a process restarted more often than the interval still sweeps.
 */
export function startRetention(options: RetentionOptions): StopRetention {
  const parsed = parseOptions('startRetention', optionsSchema, options);
  if (typeof parsed.store.removeFinished !== 'function') {
    throw optionsError('startRetention', 'store', 'does not implement removeFinished(), so it cannot remove finished tasks');
  }
  const sweeper = new RetentionSweeper(parsed);
  sweeper.schedule(Math.floor(Math.random() * parsed.intervalMs));
  return () => sweeper.close();
}

class RetentionSweeper {
  readonly #o: Parsed;
  readonly #removeFinished: (finishedBefore: string, limit: number) => Promise<number>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #closed = false;
  /** Set on the first failure of an outage, cleared by the next sweep that works. */
  #failing = false;

  constructor(options: Parsed) {
    this.#o = options;
    this.#removeFinished = options.store.removeFinished!.bind(options.store);
  }

  schedule(delayMs: number): void {
    if (this.#closed) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#sweep().finally(() => {
        this.#running = undefined;
        this.schedule(this.#o.intervalMs);
      });
    }, delayMs);
    // Retention never keeps a process alive.
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** Until a batch comes back short or close() is called. */
  async #sweep(): Promise<void> {
    const { batchSize, logger, ttlMs } = this.#o;
    const finishedBefore = new Date(this.#o.now() - ttlMs).toISOString();
    let removed = 0;
    try {
      for (;;) {
        const batch = await this.#removeFinished(finishedBefore, batchSize);
        removed += batch;
        if (batch < batchSize || this.#closed) break;
        // A synchronous store (SQLite) holds the event loop per batch: let requests in between.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      if (!this.#failing) logger.warn({ err: error, removed }, 'retention: could not remove finished tasks; retrying every interval');
      else logger.debug({ err: error, removed }, 'retention: the store is still failing');
      this.#failing = true;
      return;
    }
    if (this.#failing) logger.info({ removed }, 'retention: the store works again');
    this.#failing = false;
    if (removed > 0) logger.info({ removed, finishedBefore }, 'retention: removed finished tasks');
    else logger.debug({ finishedBefore }, 'retention: no finished task to remove');
  }
}
