/**
 * The push outbox the Redis and PostgreSQL backends share: a task's events are delivered, in version order per config, by the replica holding its
 * claim; each config's cursor is moved by compare-and-set.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../options.js';
import { lagging, liveSpan, OpenSpans, type ConfigCursor, type LoggedEvent, type Span } from '../../engine/push/push-cursors.js';
import type { PushDelivery, PushOutbox } from '../../engine/seams/push-outbox.js';
import type { TaskScope, TaskStore } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/seams/task-store.js';

interface CursorSource {
  cursors(scope: TaskScope, taskId: string): Promise<ConfigCursor[]>;
}

interface Owed {
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
  /** Per task key, this replica's sweep or release of the task's claim under way: live events wait for it. */
  readonly #busy = new Map<string, Promise<void>>();
  /** Per task key, the highest version opened here per config while the task has deliveries open. */
  readonly #top = new Map<string, Map<string, number>>();
  #renewer: NodeJS.Timeout | undefined;
  #renewing: Promise<void> | undefined;
  #sweeping: Promise<PushDelivery[]> | undefined;
  /** The current sweep's holds on live events, let go once its deliveries are handed over. */
  readonly #holds: Array<() => void> = [];

  protected constructor(configs: CursorSource, taskStore: TaskStore, ttlMs: number, logger: Logger) {
    this.#cursors = configs;
    this.#tasks = taskStore;
    this.ttlMs = ttlMs;
    this.logger = logger;
  }

  abstract recordAttempts(id: string, attempts: number): Promise<void>;
  /** Claims what no live replica delivers (each key passed to holdLiveEvents() before its claim is sent) and returns what it is owed, its spans opened. */
  protected abstract sweep(): Promise<PushDelivery[]>;
  /** Takes the task's claim unless another replica holds a live one. */
  protected abstract claim(key: string): Promise<boolean>;
  /** Moves the span's cursor to its version unless a logged event before it is still owed (compare-and-set). */
  protected abstract advance(span: Span): Promise<void>;
  protected abstract renewClaims(keys: readonly string[]): Promise<void>;
  /** Gives this replica's claims on `keys` back (another replica may take them over at once). */
  protected abstract releaseClaims(keys: readonly string[]): Promise<void>;
  /** The task's logged events after `after` and before `before`, or undefined when none is kept (past the retention). */
  protected abstract logged(key: string, after: number, before: number): Promise<LoggedEvent[] | undefined>;

  /** Deliveries open in this replica (0 once every one is done). */
  get size(): number {
    return this.spans.size;
  }

  /** The live deliveries of an event, each config's owed ones first; none while another replica holds the claim (it would overtake what is owed). */
  async add(deliveries: readonly PushDelivery[]): Promise<readonly PushDelivery[]> {
    const first = deliveries[0];
    if (!first) return [];
    const key = taskKey(first.scope, first.taskId);
    const owed = () => this.#owed(first.scope, first.taskId, key, first.version);
    for (;;) {
      // This replica's own sweep or release decides first (its list may hold this event, or not).
      for (let busy = this.#busy.get(key); busy; busy = this.#busy.get(key)) await busy;
      if (this.spans.has(key)) {
        // Open here already: only a version this replica never opened (its add failed) is caught up.
        const top = this.#top.get(key);
        const gap = deliveries.some((d) => (top?.get(d.configId) ?? d.version - 1) < d.version - 1);
        return this.#open(deliveries, gap ? await owed() : []);
      }
      if (await this.claim(key)) return this.#open(deliveries, await owed());
      if (!this.#busy.has(key) && !this.spans.has(key)) return [];
    }
  }

  async remove(id: string): Promise<void> {
    const closed = this.spans.close(id);
    if (!closed) return;
    const { span, last } = closed;
    if (!last) return this.advance(span);
    const key = taskKey(span.scope, span.taskId);
    this.#top.delete(key);
    const letGo = this.#hold(key);
    await this.advance(span)
      .finally(() => this.releaseClaims([key]))
      .finally(letGo);
  }

  /** What no live replica is delivering: claimed here, rebuilt from cursors and the events logged. */
  pending(): Promise<PushDelivery[]> {
    return this.#sweep();
  }

  watch(take: (deliveries: PushDelivery[]) => void): () => Promise<void> {
    const sweeper = setInterval(
      () => {
        // A sweep still running hands its deliveries over itself; taking them twice would send them twice.
        if (this.#sweeping) return;
        this.#sweep(take).catch((error: unknown) =>
          this.logger.error({ err: error }, 'push notifications: could not sweep for deliveries to take over'),
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

  /** One sweep at a time; the tasks it claims hold their live events until `take` has its deliveries. */
  #sweep(take?: (deliveries: PushDelivery[]) => void): Promise<PushDelivery[]> {
    this.#sweeping ??= this.sweep()
      .then((deliveries) => {
        if (take && deliveries.length > 0) take(deliveries);
        return deliveries;
      })
      .finally(() => {
        this.#sweeping = undefined;
        for (const letGo of this.#holds.splice(0)) letGo();
      });
    return this.#sweeping;
  }

  /** The sweep is about to claim `key`: its live events wait until the sweep hands its deliveries over, or calls the returned function. */
  protected holdLiveEvents(key: string): () => void {
    const letGo = this.#hold(key);
    this.#holds.push(letGo);
    return letGo;
  }

  #hold(key: string): () => void {
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => {
      letGo = () => {
        if (this.#busy.get(key) === held) this.#busy.delete(key);
        resolve();
      };
    });
    this.#busy.set(key, held);
    return letGo;
  }

  /** Opens `deliveries`, each config's owed ones first, none at or below a version already open here. */
  #open(deliveries: readonly PushDelivery[], caughtUp: readonly Owed[]): PushDelivery[] {
    const out: PushDelivery[] = [];
    for (const delivery of deliveries) {
      for (const item of caughtUp) if (item.delivery.configId === delivery.configId) this.#openOne(item, out);
      this.#openOne({ delivery, span: liveSpan(delivery) }, out);
    }
    this.#renewWhileOpen();
    return out;
  }

  #openOne({ delivery, span }: Owed, out: PushDelivery[]): void {
    const key = taskKey(span.scope, span.taskId);
    let top = this.#top.get(key);
    if (!top) this.#top.set(key, (top = new Map()));
    if ((top.get(span.configId) ?? -1) >= span.version) return;
    top.set(span.configId, span.version);
    this.spans.open(delivery.id, span);
    out.push(delivery);
  }

  /** The deliveries each config of the task is owed before `before`, from its cursor and the log. */
  async #owed(scope: TaskScope, taskId: string, key: string, before: number): Promise<Owed[]> {
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

  /** Opens what a sweep claimed for one task; a claim with nothing owed after all is let go. */
  protected async takeOver(scope: TaskScope, taskId: string, key: string): Promise<PushDelivery[]> {
    const owed = await this.#owed(scope, taskId, key, Number.MAX_SAFE_INTEGER);
    if (owed.length === 0) await this.releaseClaims([key]);
    const out: PushDelivery[] = [];
    for (const item of owed) this.#openOne(item, out);
    if (out.length > 0) this.#renewWhileOpen();
    return out;
  }

  /** Renews this replica's claims while it has deliveries open; stops when it has none. */
  #renewWhileOpen(): void {
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
