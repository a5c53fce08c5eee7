/** The event bus seam: committed task events published and followed, and cancels sent to whichever process runs a task's turn. */
import type { StreamResponse, Task } from '../../protocol/schemas.js';

/** An event after its store write: the task as it now stands and the version that write made. */
export interface CommittedEvent {
  readonly event: StreamResponse;
  readonly task: Task;
  /** The store version the write produced: increasing per task, usable as an ordered event id. */
  readonly version: number;
}

export type CommittedEventListener = (committed: CommittedEvent) => void;

export interface TaskEventBus {
  /**
   * Delivers to every subscriber of `key` on every process, in publication order per key; never a version lower than one seen. The engine
   * does not wait for a returned promise.
   */
  publish(key: string, committed: CommittedEvent): void | Promise<void>;
  /** Follows `key`'s committed events until the returned function is called. */
  subscribe(key: string, listener: CommittedEventListener): () => void;
  /** Asks whichever process runs `key`'s turn to abort it. */
  requestCancel(key: string): void;
  /** Called when a cancel of `key` is requested, until the returned function is called. */
  onCancelRequest(key: string, listener: () => void): () => void;
  /** Subscribers held, all keys together (a gauge for tests and operators). */
  readonly subscriberCount: number;
  /** Committed events of `key` above `afterVersion`, oldest first; undefined when the bus no longer holds all of them (then the task is sent). */
  history?(key: string, afterVersion: number): Promise<CommittedEvent[] | undefined>;
  /** Releases connections and listeners (router.close()). */
  close?(): Promise<void>;
}

/** What get() answers for a key nobody listens to (publishing on it, the common case, allocates nothing). */
const NONE: readonly never[] = Object.freeze([]);

/** Listeners per key, only while someone listens: one (the common case) held as it is, several in a set. */
class ListenerMap<L extends object> {
  readonly #byKey = new Map<string, L | Set<L>>();
  size = 0;

  add(key: string, listener: L): () => void {
    const held = this.#byKey.get(key);
    if (held === undefined) this.#byKey.set(key, listener);
    else if (held instanceof Set) held.add(listener);
    else this.#byKey.set(key, new Set([held, listener]));
    this.size++;
    return () => this.#remove(key, listener);
  }

  #remove(key: string, listener: L): void {
    const held = this.#byKey.get(key);
    if (held === listener) this.#byKey.delete(key);
    else if (held instanceof Set && held.delete(listener)) {
      if (held.size === 1) this.#byKey.set(key, held.values().next().value!);
    } else return;
    this.size--;
  }

  /** A copy, so a listener unsubscribing mid-loop does not disturb it. */
  get(key: string): readonly L[] {
    const held = this.#byKey.get(key);
    return held === undefined ? NONE : held instanceof Set ? [...held] : [held];
  }
}

export class InProcessTaskEventBus implements TaskEventBus {
  readonly #subscribers = new ListenerMap<CommittedEventListener>();
  readonly #cancelListeners = new ListenerMap<() => void>();

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  publish(key: string, committed: CommittedEvent): void {
    const listeners = this.#subscribers.get(key);
    for (let i = 0; i < listeners.length; i++) listeners[i](committed);
  }

  subscribe(key: string, listener: CommittedEventListener): () => void {
    // Never a version at or below one this listener has seen (two writers of one task may publish out of order).
    let last = 0;
    return this.#subscribers.add(key, (committed) => {
      if (committed.version <= last) return;
      last = committed.version;
      listener(committed);
    });
  }

  requestCancel(key: string): void {
    for (const listener of this.#cancelListeners.get(key)) listener();
  }

  onCancelRequest(key: string, listener: () => void): () => void {
    return this.#cancelListeners.add(key, listener);
  }
}
