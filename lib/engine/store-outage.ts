/** One account of a seam outage: its start logged once (error), later failures counted, its end once (info) after a quiet second. */
import { A2AError } from '../errors.js';
import type { Logger } from '../options.js';
import { PushConfigLimitError } from './seams/push-config-store.js';
import { TaskStoreError } from './seams/task-store.js';

/** Answers a store gives about the data (conflicts, missing tasks, limits): not an outage. */
const isStoreOutage = (error: unknown): boolean =>
  !(error instanceof TaskStoreError || error instanceof A2AError || error instanceof PushConfigLimitError);

/** Calls that read; the others write. A store may fail one kind only (a full disk still reads). */
const READS = /\.(get|list|findUnfinished|history|pending|claimExpired)\(/;

/** A seam and a kind of call ("taskStore write"): an outage of it ends when such a call answers. */
const sideOf = (call: string): string => `${call.slice(0, call.indexOf('.'))} ${READS.test(call) ? 'read' : 'write'}`;

/** How long every side must answer before the outage is over: a store that answers a call mid-stall is still the same outage. */
const SETTLE_MS = 1_000;

export class StoreOutage {
  readonly #logger: Logger;
  readonly #failing = new Set<string>();
  #logged = false;
  #since = 0;
  #failures = 0;
  #settling: NodeJS.Timeout | undefined;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** A call failed and no call of its kind has answered since. */
  get ongoing(): boolean {
    return this.#failing.size > 0;
  }

  failed(call: string, error: unknown): void {
    if (!isStoreOutage(error)) return;
    this.#failures++;
    this.#failing.add(sideOf(call));
    clearTimeout(this.#settling);
    this.#settling = undefined;
    if (this.#logged) return;
    this.#logged = true;
    this.#since = performance.now();
    this.#logger.error({ err: error, call }, 'a store is failing; further failures are counted until it answers again');
  }

  /** A seam call answered (call it only while `ongoing`). */
  answered(call: string): void {
    if (!this.#failing.delete(sideOf(call)) || this.#failing.size > 0) return;
    this.#settling = setTimeout(() => this.#ended(call), SETTLE_MS);
    this.#settling.unref();
  }

  #ended(call: string): void {
    this.#settling = undefined;
    this.#logged = false;
    const durationMs = Math.round(performance.now() - SETTLE_MS - this.#since);
    this.#logger.info({ failures: this.#failures, durationMs, call }, 'the store answers again');
    this.#failures = 0;
  }
}
