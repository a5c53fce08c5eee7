/** The push outbox seam: deliveries recorded before they are attempted, so a durable one lets a restarted process resume them. */
import type { TaskScope } from './task-store.js';

export interface PushDelivery {
  /** Unique; the outbox's key. */
  readonly id: string;
  readonly scope: TaskScope;
  readonly taskId: string;
  readonly configId: string;
  /** The store version of the event: deliveries to a config go in this order. */
  readonly version: number;
  /** The JSON body, in the config's protocol shape. */
  readonly body: string;
  readonly contentType: string;
  /** The task's terminal event: its configs are removed once every final delivery is done. */
  readonly final: boolean;
  /** Attempts made so far (a restarted process does not start over). */
  readonly attempts: number;
}

/** The in-memory one keeps nothing once a delivery is done. */
export interface PushOutbox {
  /**
   * Records one event's deliveries, durable once it resolves. A shared outbox may answer the list to queue instead: each preceded by the events
   * its config is still owed by a replica that died.
   */
  add(deliveries: readonly PushDelivery[]): Promise<void | readonly PushDelivery[]>;
  /** Records that `attempts` attempts of a delivery were made. */
  recordAttempts(id: string, attempts: number): Promise<void>;
  /** The delivery is done: forget it. Idempotent. */
  remove(id: string): Promise<void>;
  /** Deliveries not yet removed, ordered by version within each (task, config): what a restart resumes. */
  pending(): Promise<PushDelivery[]>;
  /** Optional, for a shared outbox (Redis): calls `take` with deliveries taken over from a process that stopped. Returns what stops it. */
  watch?(take: (deliveries: PushDelivery[]) => void): () => void | Promise<void>;
}

/** The default outbox: deliveries live in memory until done (lost with the process). */
export class InMemoryPushOutbox implements PushOutbox {
  readonly #deliveries = new Map<string, PushDelivery>();

  get size(): number {
    return this.#deliveries.size;
  }

  async add(deliveries: readonly PushDelivery[]): Promise<void> {
    for (const delivery of deliveries) this.#deliveries.set(delivery.id, delivery);
  }

  async recordAttempts(id: string, attempts: number): Promise<void> {
    const delivery = this.#deliveries.get(id);
    if (delivery) this.#deliveries.set(id, { ...delivery, attempts });
  }

  async remove(id: string): Promise<void> {
    this.#deliveries.delete(id);
  }

  async pending(): Promise<PushDelivery[]> {
    // Insertion order is commit order per task, hence version order per (task, config).
    return [...this.#deliveries.values()];
  }
}
