/** What the Redis and PostgreSQL task leases share: a lease is a record that expires unless renewed, named by a holder unique per acquire. */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from '../../options.js';
import type { LeasedTask, TaskLease, TaskLeases } from '../../engine/seams/task-leases.js';

/** One acquire's lease as the backend's statements name it. */
export interface LeaseRef {
  readonly key: string;
  readonly task: LeasedTask;
  /** Unique per acquire; stored with the lease, so renewals and releases touch only this one. */
  readonly holder: string;
}

/** A lease held here, as a backend that gives it back by a statement of its own sees it (see onHeld). */
export interface HeldLease {
  readonly ref: LeaseRef;
  /** A statement that deletes the lease is under way: a renewal that finds it gone meanwhile is no loss. */
  givingBack(): void;
  /** That statement ended; `given`: it deleted the lease (renewals stop, and release() costs nothing). */
  gaveBack(given: boolean): void;
}

/** Listening for release notices of one key; `ready` settles once a notice after it would arrive. */
export interface ReleaseNotices {
  readonly ready: Promise<void>;
  stop(): void;
}

const RESOLVED: Promise<void> = Promise.resolve();

/** Poll delays while waiting for a held lease: doubling from the first to the last. */
const FIRST_POLL_MS = 20;
const LAST_POLL_MS = 1_000;

interface Held {
  readonly lease: TaskLease;
  /** Stops renewing without releasing. */
  stop(): void;
}

/**
 * This base waits for a held lease (a release notice wakes it; it also polls with a bounded backoff, for a holder that dies and lets its lease
 * expire), renews what it holds every third of the time to live, and gives leases back. A backend supplies the four statements: take, renew, release,
 * and the release notices.
 */
export abstract class ExpiringLeases implements TaskLeases {
  readonly sweepIntervalMs: number;
  protected readonly ttlMs: number;
  protected readonly logger: Logger;
  /** Who holds a lease, as stored: readable by an operator, unique per acquire. */
  readonly #holderPrefix = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}/`;
  #acquired = 0;
  readonly #held = new Set<Held>();
  /** Wakes the acquires waiting now (close() ends them). */
  readonly #waiting = new Set<() => void>();
  #closed = false;

  protected constructor(ttlMs: number, logger: Logger) {
    this.ttlMs = ttlMs;
    this.logger = logger;
    this.sweepIntervalMs = ttlMs;
  }

  /** Takes the lease if it is free or expired: undefined when won, else the ms its holder has left (when known). */
  protected abstract take(lease: LeaseRef): Promise<{ readonly left?: number } | undefined>;
  /** Extends the lease while it still names this holder: false when it no longer does (expired, or taken). */
  protected abstract renew(lease: LeaseRef): Promise<boolean>;
  /** Deletes the lease while it names this holder, and tells the waiting processes. */
  protected abstract release(lease: LeaseRef): Promise<void>;
  /** Calls `notice` when `key`'s lease is released, until stop(). */
  protected abstract listenForRelease(key: string, notice: () => void): ReleaseNotices;
  /** Gives back what the notices use (close()). */
  protected abstract closeNotices(): Promise<void>;
  abstract claimExpired(): Promise<LeasedTask[]>;
  /** A lease is held from now (a backend that gives leases back by statements of its own tracks it). */
  protected onHeld(_lease: HeldLease): void {}
  /** It is no longer held here (released, lost, given back, or close()). */
  protected onDropped(_lease: HeldLease): void {}

  /** Leases this process holds now (a gauge). */
  get heldCount(): number {
    return this.#held.size;
  }

  protected get closed(): boolean {
    return this.#closed;
  }

  async acquire(key: string, task: LeasedTask, waitMs: number): Promise<TaskLease | undefined> {
    if (this.#closed) throw new Error(`${this.constructor.name} is closed`);
    const ref = this.newRef(key, task);
    let taken = await this.take(ref);
    if (taken === undefined) return this.#took(ref);
    if (!(waitMs > 0) || this.#closed) return undefined;

    const deadline = Date.now() + waitMs;
    // eslint-disable-next-line no-useless-assignment -- set by the release notice between polls
    let notified = false;
    let wake: (() => void) | undefined;
    const onNotice = () => {
      notified = true;
      wake?.();
    };
    const notices = this.listenForRelease(key, onNotice);
    this.#waiting.add(onNotice);
    try {
      // Listening before the next attempt, so a release after it is never missed (bounded by waitMs: without a notice connection, polling still
      // works).
      await untilOrAfter(notices.ready, waitMs);
      for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, LAST_POLL_MS)) {
        notified = false;
        taken = await this.take(ref);
        if (taken === undefined) return this.#took(ref);
        const remaining = deadline - Date.now();
        if (remaining <= 0 || this.#closed) return undefined;
        if (notified) continue;
        // A notice, or the next poll: the holder may die, and then its lease just expires.
        const left = taken.left;
        const wait = Math.min(poll, remaining, left !== undefined && left > 0 ? left + 1 : poll);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, wait);
          timer.unref();
          function done() {
            clearTimeout(timer);
            wake = undefined;
            resolve();
          }
          wake = done;
        });
      }
    } finally {
      this.#waiting.delete(onNotice);
      notices.stop();
    }
  }

  /**
   * Stops renewing every lease held here without releasing them (they expire, and another process settles their tasks), ends pending acquires
   * (undefined), and gives back the notice connection.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const held of this.#held) held.stop();
    this.#held.clear();
    for (const wake of [...this.#waiting]) wake();
    await this.closeNotices();
  }

  /** A lease of `key` for a holder of its own (unique per call). */
  protected newRef(key: string, task: LeasedTask): LeaseRef {
    return { key, task, holder: `${this.#holderPrefix}${++this.#acquired}` };
  }

  /**
   * A lease another statement took (a backend folding the take into a store write): held and renewed from now, as if take() had won it; given back at
   * once after close() (undefined).
   */
  protected adopt(ref: LeaseRef): TaskLease | undefined {
    if (!this.#closed) return this.#hold(ref);
    this.release(ref).catch(() => undefined); // it expires otherwise
    return undefined;
  }

  /** A lease won; given back at once when close() came meanwhile (nothing would renew it). */
  async #took(ref: LeaseRef): Promise<TaskLease | undefined> {
    const lease = this.#hold(ref);
    if (!this.#closed) return lease;
    await lease.release();
    return undefined;
  }

  #hold(ref: LeaseRef): TaskLease {
    let lost = false;
    let renewing = false;
    let givingBack = 0;
    let released: Promise<void> | undefined;
    const timer = setInterval(() => void renew(), Math.max(10, Math.floor(this.ttlMs / 3)));
    timer.unref();
    const stop = () => {
      clearInterval(timer);
      if (this.#held.delete(held)) this.onDropped(control);
    };
    const renew = async () => {
      if (renewing) return; // the previous one is still on its way
      renewing = true;
      try {
        if (!(await this.renew(ref)) && !released && givingBack === 0) {
          lost = true;
          stop();
          this.logger.warn({ lease: ref.key }, 'a task lease expired before it was renewed; another replica may run the task now');
        }
      } catch (error) {
        // Not lost yet: the next renewal may still come in time.
        this.logger.warn({ err: error, lease: ref.key }, 'could not renew a task lease');
      } finally {
        renewing = false;
      }
    };
    const lease: TaskLease = {
      get lost() {
        return lost;
      },
      release: () => {
        released ??= (async () => {
          stop();
          try {
            await this.release(ref);
          } catch (error) {
            released = undefined; // a later release() tries again; meanwhile the lease just expires
            throw error;
          }
        })();
        return released;
      },
    };
    const control: HeldLease = {
      ref,
      givingBack: () => void givingBack++,
      gaveBack: (given) => {
        givingBack--;
        if (!given || released) return;
        released = RESOLVED;
        stop();
      },
    };
    const held: Held = { lease, stop };
    this.#held.add(held);
    this.onHeld(control);
    return lease;
  }
}

/** Settles when `promise` does (either way) or after `ms`, whichever is first. */
function untilOrAfter(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}
