/**
 * Deadlines on the calls the engine makes to its seams (task store, event bus history, leases, push
 * stores): a store that never answers (a paused Redis, a hung database, a user's store with a lost
 * promise) fails the call after `ms` instead of hanging the request for the whole outage.
 */
import type { StoreOutage } from './store-outage.js';

/** A seam call that did not settle within its deadline; the engine answers it as unavailable. */
export class SeamTimeoutError extends Error {
  constructor(
    readonly call: string,
    readonly ms: number,
  ) {
    super(`${call} did not answer within ${ms} ms`);
    this.name = 'SeamTimeoutError';
  }
}

interface Pending {
  readonly at: number;
  readonly call: string;
  readonly reject: (error: Error) => void;
  settled: boolean;
  /** Its own timer (a call with extra time), cleared when it settles. */
  timer?: NodeJS.Timeout;
}

/**
 * One timer for every call in flight: all calls get the same `ms`, so their deadlines fall in the
 * order they were made, and a FIFO queue with one timer armed for its head bounds them all (no
 * timer per call on the hot path).
 */
export class Deadlines {
  readonly #ms: number;
  readonly #outage: StoreOutage | undefined;
  #queue: Pending[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Calls in the queue not settled yet: at 0 the timer is cleared, so nothing is left behind when idle. */
  #unsettled = 0;

  /** `ms` <= 0: no deadline (calls are only watched by `outage`, which hears every call's end). */
  constructor(ms: number, outage?: StoreOutage) {
    this.#ms = ms;
    this.#outage = outage;
  }

  get ms(): number {
    return this.#ms;
  }

  /** `promise`, or a SeamTimeoutError naming `call` once `extraMs` + the deadline have passed. */
  bound<T>(promise: Promise<T>, call: string, extraMs = 0): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { at: performance.now() + this.#ms + extraMs, call, reject, settled: false };
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

  /** A call with a longer deadline of its own (a lease wait) falls outside the FIFO order. */
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
    // Compact now and then so settled entries do not pile up in front.
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
    this.#outage?.failed(pending.call, error);
    pending.reject(error);
  }
}

/**
 * `target` with every method bound to it, and the methods named in `bounded` under the deadline
 * (the others, such as close(), pass through). Methods keep running on the original object, so
 * classes with private fields work as they are.
 */
export function withDeadlines<T extends object>(target: T, label: string, bounded: readonly (keyof T & string)[], deadlines: Deadlines): T {
  const wrapped = Object.create(target) as Record<string, unknown>;
  const source = target as Record<string, unknown>;
  for (const [name, kind] of members(target)) {
    if (kind === 'accessor') {
      // Getters read the original (its private fields are not on the wrapper).
      Object.defineProperty(wrapped, name, { get: () => source[name], enumerable: true });
      continue;
    }
    const method = source[name] as (...args: unknown[]) => unknown;
    wrapped[name] = (bounded as readonly string[]).includes(name)
      ? (...args: unknown[]) => {
          const result = method.apply(target, args) as PromiseLike<unknown> | undefined;
          return typeof result?.then === 'function' ? deadlines.bound(Promise.resolve(result), `${label}.${name}()`) : result;
        }
      : method.bind(target);
  }
  return wrapped as T;
}

/** Methods and getters along the prototype chain, below Object.prototype. */
function members(target: object): Map<string, 'method' | 'accessor'> {
  const found = new Map<string, 'method' | 'accessor'>();
  for (let proto: object | null = target; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || found.has(name)) continue;
      const descriptor = Object.getOwnPropertyDescriptor(proto, name)!;
      if (descriptor.get) found.set(name, 'accessor');
      else if (typeof descriptor.value === 'function') found.set(name, 'method');
    }
  }
  return found;
}
