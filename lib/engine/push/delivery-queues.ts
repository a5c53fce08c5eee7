/** Push deliveries per (task, config): in version order, one at a time, each in its event's async context. */
import type { Logger } from '../../options.js';
import type { PushDelivery, PushOutbox } from '../seams/push-outbox.js';
import type { TaskScope } from '../seams/task-store.js';
import { taskKey } from '../seams/task-store.js';

export type RunIn = <R>(fn: () => R) => R;

interface Queued {
  readonly delivery: PushDelivery;
  readonly run: RunIn;
}

export interface DeliveryQueuesOwner {
  /** A final delivery (of the task's terminal event) is done: delivered, given up, or its config gone. */
  finalDone(scope: TaskScope, taskId: string): Promise<void>;
  drained(): void;
}

interface DeliveryQueuesDeps {
  readonly deliverer: { deliver(delivery: PushDelivery): Promise<void> };
  readonly outbox: PushOutbox;
  readonly logger: Logger;
  readonly signal: AbortSignal;
  readonly owner: DeliveryQueuesOwner;
}

/** Dropped when empty. */
interface ConfigQueue {
  readonly items: Queued[];
  draining: boolean;
}

export class DeliveryQueues {
  #deps: DeliveryQueuesDeps;
  readonly #queues = new Map<string, ConfigQueue>();
  readonly #drains = new Set<Promise<void>>();
  #queued = 0;

  constructor(deps: DeliveryQueuesDeps) {
    this.#deps = deps;
  }

  get queued(): number {
    return this.#queued;
  }

  get size(): number {
    return this.#queues.size;
  }

  /** From now on, deliveries are removed from `outbox` (the same outbox under the engine's deadlines). */
  useOutbox(outbox: PushOutbox): void {
    this.#deps = { ...this.#deps, outbox };
  }

  add(item: Queued): void {
    // Closed: the outbox keeps it for the next start.
    if (this.#deps.signal.aborted) return;
    const { scope, taskId, configId } = item.delivery;
    const key = `${taskKey(scope, taskId)}\u0000${configId}`;
    let queue = this.#queues.get(key);
    if (!queue) this.#queues.set(key, (queue = { items: [], draining: false }));
    const { items } = queue;
    const version = item.delivery.version;
    // Behind the one in flight (items[0]): a delivery taken over from a durable outbox may come after a later live one.
    let at = items.length;
    while (at > 1 && items[at - 1].delivery.version > version) at--;
    items.splice(at, 0, item);
    this.#queued++;
    if (!queue.draining) {
      queue.draining = true;
      const drain = this.#drain(key, queue).finally(() => this.#drains.delete(drain));
      this.#drains.add(drain);
    }
  }

  /** After a close, loops end at once. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#drains]);
  }

  async #drain(key: string, queue: ConfigQueue): Promise<void> {
    const { deliverer, logger, signal, owner } = this.#deps;
    while (queue.items.length > 0) {
      const { delivery, run } = queue.items[0];
      try {
        await run(() => deliverer.deliver(delivery));
      } catch (error) {
        logger.error({ err: error, taskId: delivery.taskId }, 'push notifications: a delivery failed unexpectedly');
      }
      if (signal.aborted) {
        this.#queued -= queue.items.length;
        queue.items.length = 0;
        break;
      }
      queue.items.shift();
      this.#queued--;
      await this.#deps.outbox.remove(delivery.id).catch((error: unknown) => {
        logger.error({ err: error, taskId: delivery.taskId }, 'push notifications: the outbox failed to remove a delivery');
      });
      if (delivery.final) await owner.finalDone(delivery.scope, delivery.taskId);
    }
    this.#queues.delete(key);
    owner.drained();
  }
}
