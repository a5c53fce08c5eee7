/** The deadline hook (storeTimeoutMs): a seam that never answers fails its call, and its request, within one deadline. */
import { tryGetA2ARequestContext } from '../context/carrier.js';
import { SeamTimeoutError } from '../errors.js';
import type { SeamCall, SeamHook, SeamNext } from './seams/intercept.js';
import type { TaskLease } from './seams/task-leases.js';
import type { StoreOutage } from './store-outage.js';

export { SeamTimeoutError };

export const DEFAULT_STORE_TIMEOUT_MS = 5_000;

interface Pending {
  readonly at: number;
  readonly call: string;
  readonly reject: (error: Error) => void;
  settled: boolean;
  readonly request: object | undefined;
  /** Its own timer (a call with extra time). */
  timer?: NodeJS.Timeout;
}

/** One timer for all calls in flight: with one `ms`, deadlines fall in call order, so a FIFO queue armed for its head bounds them all. */
export class Deadlines {
  readonly #ms: number;
  readonly #outage: StoreOutage | undefined;
  #queue: Pending[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Unsettled calls: at 0 the timer is cleared, so nothing is left behind when idle. */
  #unsettled = 0;
  /** When a call of a request (its context) timed out: its later calls within `ms` are refused unmade. */
  readonly #expired = new WeakMap<object, number>();
  #anyExpired = false;

  /** `ms` <= 0: no deadline (calls are only watched by `outage`, which hears every call's end). */
  constructor(ms: number, outage?: StoreOutage) {
    this.#ms = ms;
    this.#outage = outage;
  }

  get ms(): number {
    return this.#ms;
  }

  /**
   * After one of a request's calls timed out, its next ones fail unmade for `ms`, so its client waits
   * one deadline in all. A release is always made (it stops the lease's renewals).
   */
  call(name: string, make: () => unknown, extraMs = 0, refusable = true): unknown {
    const request = this.#anyExpired && refusable ? tryGetA2ARequestContext() : undefined;
    const expiredAt = request && this.#expired.get(request);
    if (expiredAt !== undefined && performance.now() - expiredAt < this.#ms) {
      const error = new SeamTimeoutError(name, this.#ms);
      this.#outage?.failed(name, error);
      return Promise.reject(error);
    }
    const result = make() as PromiseLike<unknown> | undefined;
    return typeof result?.then === 'function' ? this.bound(Promise.resolve(result), name, extraMs) : result;
  }

  /** `promise`, or a SeamTimeoutError naming `call` once `extraMs` + the deadline have passed. */
  bound<T>(promise: Promise<T>, call: string, extraMs = 0): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { at: performance.now() + this.#ms + extraMs, call, reject, settled: false, request: tryGetA2ARequestContext() };
      const outage = this.#outage;
      promise.then(
        (value) => {
          this.#settle(pending);
          if (outage?.ongoing) outage.answered(call);
          resolve(value);
        },
        (error: unknown) => {
          this.#settle(pending);
          outage?.failed(call, error);
          reject(error);
        },
      );
      if (this.#ms <= 0) return;
      if (extraMs === 0) this.#enqueue(pending);
      else this.#single(pending);
    });
  }

  #settle(pending: Pending): void {
    if (pending.settled) return;
    pending.settled = true;
    if (pending.timer !== undefined) clearTimeout(pending.timer);
    else if (this.#ms > 0 && --this.#unsettled === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#queue = [];
      this.#head = 0;
    }
  }

  #enqueue(pending: Pending): void {
    this.#unsettled++;
    this.#queue.push(pending);
    if (this.#timer === undefined) this.#arm(pending.at);
  }

  /** A longer deadline of its own (a lease wait) falls outside the FIFO order. */
  #single(pending: Pending): void {
    pending.timer = setTimeout(() => this.#expire(pending), pending.at - performance.now());
    pending.timer.unref();
  }

  #arm(at: number): void {
    this.#timer = setTimeout(() => this.#sweep(), Math.max(0, at - performance.now()) + 1);
    this.#timer.unref(); // a pending call never keeps the process alive
  }

  #sweep(): void {
    this.#timer = undefined;
    const now = performance.now();
    const queue = this.#queue;
    while (this.#head < queue.length) {
      const pending = queue[this.#head];
      if (!pending.settled && pending.at > now) break;
      this.#head++;
      this.#expire(pending);
    }
    if (this.#head === queue.length) {
      this.#queue = [];
      this.#head = 0;
      return;
    }
    if (this.#head > 1024) {
      this.#queue = queue.slice(this.#head);
      this.#head = 0;
    }
    this.#arm(this.#queue[this.#head].at);
  }

  #expire(pending: Pending): void {
    if (pending.settled) return;
    pending.settled = true;
    if (pending.timer === undefined) this.#unsettled--;
    const error = new SeamTimeoutError(pending.call, this.#ms);
    if (pending.request) {
      this.#expired.set(pending.request, performance.now());
      this.#anyExpired = true;
    }
    this.#outage?.failed(pending.call, error);
    pending.reject(error);
  }
}

/** storeTimeoutMs as a seam hook: every wrapped call is bounded; acquire() gets its wait on top. */
export function deadlineHook(deadlines: Deadlines): SeamHook {
  return {
    skipsImmediate: true,
    wraps: () => true,
    around: (call: SeamCall, args: unknown[], next: SeamNext) =>
      call.name === 'leases.acquire()' ? boundAcquire(deadlines, args, next) : deadlines.call(call.name, () => next(args), 0, call.seam !== 'lease'),
  };
}

/** A lease granted after its call timed out is given back at once (nobody holds it to release it, and it would be renewed for ever). */
function boundAcquire(deadlines: Deadlines, args: unknown[], next: SeamNext): unknown {
  let timedOut = false;
  const granted = () =>
    (next(args) as Promise<TaskLease | undefined>).then((lease) => {
      if (lease && timedOut) void lease.release().catch(() => undefined);
      return lease;
    });
  const bounded = deadlines.call('leases.acquire()', granted, args[2] as number) as Promise<unknown>;
  bounded.catch(() => (timedOut = true));
  return bounded;
}
