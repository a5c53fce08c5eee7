/**
 * What the Redis and PostgreSQL push outboxes share: the deliveries open in this replica (spans
 * over the task's logged events), the claims on their tasks renewed while any is open and given
 * back when the outbox stops, one sweep at a time for what no live replica delivers, and the
 * catch-up a config is owed from its cursor. A backend supplies the claim statements, the sweep
 * and how the logged events are read.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../logger.js';
import { lagging, liveSpan, OpenSpans, type ConfigCursor, type LoggedEvent, type Span } from '../../engine/push/push-cursors.js';
import type { PushDelivery, PushOutbox } from '../../engine/seams/push-outbox.js';
import type { TaskScope, TaskStore } from '../../engine/seams/task-store.js';

/** Where the configs' cursors are kept (the backend's push config store). */
interface CursorSource {
  cursors(scope: TaskScope, taskId: string): Promise<ConfigCursor[]>;
}

/** A delivery owed to a config, with the span it covers. */
export interface Owed {
  readonly delivery: PushDelivery;
  readonly span: Span;
}

export abstract class ClaimingOutbox implements PushOutbox {
  /** This replica, as claims name it. */
  protected readonly id = randomUUID();
  protected readonly spans = new OpenSpans();
  protected readonly ttlMs: number;
  protected readonly logger: Logger;
  readonly #tasks: TaskStore;
  readonly #cursors: CursorSource;
  #renewer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #sweeping: Promise<PushDelivery[]> | undefined;

  protected constructor(configs: CursorSource, taskStore: TaskStore, ttlMs: number, logger: Logger) {
    this.#cursors = configs;
    this.#tasks = taskStore;
    this.ttlMs = ttlMs;
    this.logger = logger;
  }

  abstract add(deliveries: readonly PushDelivery[]): Promise<readonly PushDelivery[]>;
  abstract recordAttempts(id: string, attempts: number): Promise<void>;
  abstract remove(id: string): Promise<void>;
  /** Claims what no live replica delivers and returns what it is owed (its spans opened). */
  protected abstract sweep(): Promise<PushDelivery[]>;
  /** Extends this replica's claims on the tasks `keys`. */
  protected abstract renewClaims(keys: readonly string[]): Promise<void>;
  /** Gives this replica's claims on `keys` back (another replica may take them over at once). */
  protected abstract releaseClaims(keys: readonly string[]): Promise<void>;
  /** The task's logged events after `after` and before `before`, or undefined when none is kept (past the retention). */
  protected abstract logged(key: string, after: number, before: number): Promise<LoggedEvent[] | undefined>;

  /** Deliveries open in this replica (0 once every one is done). */
  get size(): number {
    return this.spans.size;
  }

  /** What no live replica is delivering: claimed here, rebuilt from cursors and the events logged. */
  pending(): Promise<PushDelivery[]> {
    // One sweep at a time; a caller during one gets its result.
    this.#sweeping ??= this.sweep().finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  watch(take: (deliveries: PushDelivery[]) => void): () => Promise<void> {
    const sweeper = setInterval(
      () => {
        this.pending().then(
          (deliveries) => deliveries.length > 0 && take(deliveries),
          (error: unknown) => this.logger.error({ err: error }, 'push notifications: could not sweep for deliveries to take over'),
        );
      },
      Math.max(15, Math.floor(this.ttlMs / 2)),
    );
    sweeper.unref();
    return async () => {
      clearInterval(sweeper);
      clearInterval(this.#renewer);
      this.#renewer = undefined;
      // What is still open here is taken over by another replica at once, not after the ttl.
      await this.releaseClaims(this.spans.tasks().map(({ key }) => key)).catch(() => undefined);
    };
  }

  /** Opens `deliveries`, each config's owed ones first (caught up), and keeps the claims renewed. */
  protected open(deliveries: readonly PushDelivery[], caughtUp: readonly Owed[]): PushDelivery[] {
    const out: PushDelivery[] = [];
    for (const delivery of deliveries) {
      for (const item of caughtUp.filter((owed) => owed.delivery.configId === delivery.configId)) {
        this.spans.open(item.delivery.id, item.span);
        out.push(item.delivery);
      }
      this.spans.open(delivery.id, liveSpan(delivery));
      out.push(delivery);
    }
    this.renewWhileOpen();
    return out;
  }

  /** The deliveries each config of the task is owed before `before`, from its cursor and the log. */
  protected async owed(scope: TaskScope, taskId: string, key: string, before: number): Promise<Owed[]> {
    const cursors = await this.#cursors.cursors(scope, taskId);
    if (cursors.length === 0) return [];
    const lowest = Math.min(...cursors.map((cursor) => cursor.delivered));
    if (lowest >= before - 1) return [];
    const logged = await this.logged(key, lowest, before);
    if (logged?.length === 0) return [];
    const latest = await this.#tasks.get(scope, taskId);
    if (!latest) return [];
    // Events past the retention: the task stands for them, as it was before this event.
    if (logged === undefined && latest.version >= before) return [];
    return cursors.flatMap((cursor) => lagging(scope, taskId, cursor, latest, logged, randomUUID));
  }

  /** Renews this replica's claims while it has deliveries open; stops when it has none. */
  protected renewWhileOpen(): void {
    if (this.#renewer) return;
    this.#renewer = setInterval(
      () => {
        const tasks = this.spans.tasks();
        if (tasks.length === 0) {
          clearInterval(this.#renewer);
          this.#renewer = undefined;
          return;
        }
        // One round at a time: a store that stops answering gets no pile of renewals behind the first.
        if (this.#renewing) return;
        this.#renewing = this.renewClaims(tasks.map(({ key }) => key))
          .catch((error: unknown) =>
            this.logger.warn({ err: error }, 'push notifications: could not renew delivery claims; another replica may deliver too'),
          )
          .finally(() => (this.#renewing = undefined));
      },
      Math.max(10, Math.floor(this.ttlMs / 3)),
    );
    this.#renewer.unref();
  }
}
