/**
 * One account of a seam outage instead of a log line per failed call: the first failure is logged
 * once (error, with its cause), later ones are counted, and the first call that answers again logs
 * the end (info, with the count). The engine's per-request lines for store failures are debug.
 */
import { A2AError } from '../errors.js';
import type { Logger } from '../logger.js';
import { PushConfigLimitError } from './seams/push-config-store.js';
import { TaskStoreError } from './seams/task-store.js';

/** Answers a store gives about the data (conflicts, missing tasks, limits): not an outage. */
const isStoreOutage = (error: unknown): boolean =>
  !(error instanceof TaskStoreError || error instanceof A2AError || error instanceof PushConfigLimitError);

/** Calls that read; the others write. A store may fail one kind only (a full disk still reads). */
const READS = /\.(get|list|findUnfinished|history|pending|claimExpired)\(/;

/** A seam and a kind of call ("taskStore write"): an outage of it ends when such a call answers. */
const sideOf = (call: string): string => `${call.slice(0, call.indexOf('.'))} ${READS.test(call) ? 'read' : 'write'}`;

export class StoreOutage {
  readonly #logger: Logger;
  /** The seams' sides failing now (see sideOf). */
  readonly #failing = new Set<string>();
  #since = 0;
  #failures = 0;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** An outage is going on (a call failed and no call of its kind has answered since). */
  get ongoing(): boolean {
    return this.#failing.size > 0;
  }

  /** A seam call named `call` failed with `error`. */
  failed(call: string, error: unknown): void {
    if (!isStoreOutage(error)) return;
    this.#failures++;
    const starts = this.#failing.size === 0;
    this.#failing.add(sideOf(call));
    if (!starts) return;
    this.#since = performance.now();
    this.#logger.error({ err: error, call }, 'a store is failing; further failures are counted until it answers again');
  }

  /** A seam call answered (call it only while `ongoing`). */
  answered(call: string): void {
    if (!this.#failing.delete(sideOf(call)) || this.#failing.size > 0) return;
    const durationMs = Math.round(performance.now() - this.#since);
    this.#logger.info({ failures: this.#failures, durationMs, call }, 'the store answers again');
    this.#failures = 0;
  }
}
