/**
 * PostgresPushOutbox: a durable PushOutbox shared by the replicas. Nothing is written per
 * delivery: the events are the bus's events table (version = the event's) and each config's
 * cursor sits in its row (PostgresPushConfigStore). A replica delivering a task's events holds the
 * task's claim (a row with an expiry, renewed while it has deliveries open); every replica sweeps
 * the tasks with configs, and one whose cursor is behind the log with no live claim (its replica
 * died) is claimed, by one replica, which delivers what is owed.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { consoleLogger, type Logger } from '../../logger.js';
import { parseOptions } from '../../options.js';
import { lagging, liveSpan, OpenSpans, type LoggedEvent, type Span } from '../../engine/push/push-cursors.js';
import type { PushDelivery, PushOutbox } from '../../engine/seams/push-outbox.js';
import type { TaskScope, TaskStore } from '../../engine/seams/task-store.js';
import type { CommittedEvent } from '../../engine/seams/task-event-bus.js';
import { taskKey } from '../../engine/task-key.js';
import type { PostgresDatabase } from './postgres-client.js';
import { loggerSchema, millisecondsSchema } from './postgres-options.js';
import { PostgresPushConfigStore } from './postgres-push-config-store.js';

export interface PostgresPushOutboxOptions {
  /** The config store whose cursors it moves (its pool and schema are the outbox's). */
  readonly configStore: PostgresPushConfigStore;
  /** The task store: the task as it stands, for v0.3 bodies and events past the retention. */
  readonly taskStore: TaskStore;
  /** How long a task's claim lasts without renewal: how soon a dead replica's deliveries are taken over. Default 10000. */
  readonly claimTtlMs?: number;
  readonly logger?: Logger;
}

const optionsSchema = z.strictObject({
  configStore: z.custom<PostgresPushConfigStore>((v) => v instanceof PostgresPushConfigStore, { error: 'must be a PostgresPushConfigStore' }),
  taskStore: z.custom<TaskStore>((v) => typeof v === 'object' && v !== null && typeof (v as { get?: unknown }).get === 'function', {
    error: 'must be a TaskStore',
  }),
  claimTtlMs: millisecondsSchema(30).default(10_000),
  logger: loggerSchema.default(consoleLogger),
});

export class PostgresPushOutbox implements PushOutbox {
  readonly #db: PostgresDatabase;
  readonly #configs: PostgresPushConfigStore;
  readonly #tasks: TaskStore;
  readonly #ttlMs: number;
  readonly #logger: Logger;
  readonly #t: { configs: string; claims: string; events: string; tasks: string };
  /** This replica, as claims name it. */
  readonly #id = randomUUID();
  readonly #spans = new OpenSpans();
  #renewer: NodeJS.Timeout | undefined;
  #sweeping: Promise<PushDelivery[]> | undefined;

  constructor(options: PostgresPushOutboxOptions) {
    const parsed = parseOptions('PostgresPushOutbox', optionsSchema, options);
    this.#configs = parsed.configStore;
    this.#db = this.#configs.database;
    this.#tasks = parsed.taskStore;
    this.#ttlMs = parsed.claimTtlMs;
    this.#logger = parsed.logger;
    const db = this.#db;
    this.#t = { configs: db.table('push_configs'), claims: db.table('push_claims'), events: db.table('events'), tasks: db.table('tasks') };
  }

  /** Deliveries open in this replica (0 once every one is done). */
  get size(): number {
    return this.#spans.size;
  }

  /**
   * The live deliveries of an event: the task is claimed by this replica; a config still owed
   * events before this one (a replica died owing them) gets those first.
   */
  async add(deliveries: readonly PushDelivery[]): Promise<readonly PushDelivery[]> {
    const out: PushDelivery[] = [];
    const first = deliveries[0];
    if (!first) return out;
    const key = taskKey(first.scope, first.taskId);
    let caughtUp: Array<{ delivery: PushDelivery; span: Span }> = [];
    if (!this.#spans.has(key)) {
      // Claim the task's deliveries unless another replica holds them (it took over what a dead
      // replica owed, and delivers that): then only this event is delivered from here, and the
      // cursor's compare-and-set keeps it from skipping what is still owed.
      const won = await this.#claim([key]);
      if (won.length > 0) caughtUp = await this.#owed(first.scope, first.taskId, first.version);
    }
    for (const delivery of deliveries) {
      for (const item of caughtUp.filter((owed) => owed.delivery.configId === delivery.configId)) {
        this.#spans.open(item.delivery.id, item.span);
        out.push(item.delivery);
      }
      this.#spans.open(delivery.id, liveSpan(delivery));
      out.push(delivery);
    }
    this.#renew();
    return out;
  }

  async recordAttempts(id: string, attempts: number): Promise<void> {
    const span = this.#spans.get(id);
    if (!span) return;
    await this.#db.run(`UPDATE ${this.#t.configs} SET attempts = $3 WHERE task_key = $1 AND id = $2 AND delivered = $4`, [
      taskKey(span.scope, span.taskId),
      span.configId,
      attempts,
      span.from,
    ]);
  }

  async remove(id: string): Promise<void> {
    const closed = this.#spans.close(id);
    if (!closed) return;
    const { span, last } = closed;
    const key = taskKey(span.scope, span.taskId);
    // Over the span, and the versions before it that are no events: a cursor behind a logged
    // event stays, so no event is ever skipped.
    await this.#db.run(
      `UPDATE ${this.#t.configs} c SET delivered = $4, attempts = 0
       WHERE c.task_key = $1 AND c.id = $2 AND c.delivered < $4
       AND (c.delivered >= $3 OR NOT EXISTS (SELECT 1 FROM ${this.#t.events} e WHERE e.task_key = $1 AND e.version > c.delivered AND e.version <= $3))`,
      [key, span.configId, span.from, span.version],
    );
    if (last) await this.#release([key]);
  }

  /** What no live replica is delivering: claimed here, rebuilt from cursors and the events table. */
  pending(): Promise<PushDelivery[]> {
    // One sweep at a time; a caller during one gets its result.
    this.#sweeping ??= this.#sweep().finally(() => (this.#sweeping = undefined));
    return this.#sweeping;
  }

  watch(take: (deliveries: PushDelivery[]) => void): () => Promise<void> {
    const sweeper = setInterval(() => {
      this.pending().then(
        (deliveries) => deliveries.length > 0 && take(deliveries),
        (error: unknown) => this.#logger.error({ err: error }, 'push notifications: could not sweep for deliveries to take over'),
      );
    }, Math.max(15, Math.floor(this.#ttlMs / 2)));
    sweeper.unref();
    return async () => {
      clearInterval(sweeper);
      clearInterval(this.#renewer);
      this.#renewer = undefined;
      // What is still open here is taken over by another replica at once, not after the ttl.
      await this.#release(this.#spans.tasks().map(({ key }) => key)).catch(() => undefined);
    };
  }

  async #sweep(): Promise<PushDelivery[]> {
    // Tasks with configs and no live claim, and whether some config is behind the log (or behind
    // the task, for a task whose events are past the retention).
    const rows = await this.#db.query<{ task_key: string; tenant: string; owner: string; task_id: string; terminal: boolean; behind: boolean }>(
      `SELECT c.task_key, c.tenant, c.owner, c.task_id, t.terminal,
         bool_or(CASE WHEN EXISTS (SELECT 1 FROM ${this.#t.events} e WHERE e.task_key = c.task_key)
           THEN EXISTS (SELECT 1 FROM ${this.#t.events} e WHERE e.task_key = c.task_key AND e.version > c.delivered)
           ELSE c.delivered < t.version END) AS behind
       FROM ${this.#t.configs} c JOIN ${this.#t.tasks} t ON t.id = c.task_id AND t.tenant = c.tenant AND t.owner = c.owner
       WHERE NOT EXISTS (SELECT 1 FROM ${this.#t.claims} k WHERE k.task_key = c.task_key AND k.expires_at > clock_timestamp())
       GROUP BY c.task_key, c.tenant, c.owner, c.task_id, t.terminal`,
    );
    const out: PushDelivery[] = [];
    const behind = rows.filter((row) => row.behind && !this.#spans.has(row.task_key));
    // Ended tasks with nothing owed: their configs can go.
    for (const row of rows) {
      if (!row.behind && row.terminal) await this.#configs.deleteAll({ tenant: row.tenant, owner: row.owner }, row.task_id);
    }
    if (behind.length === 0) return out;
    const won = new Set(await this.#claim(behind.map((row) => row.task_key)));
    for (const row of behind) {
      if (!won.has(row.task_key)) continue;
      const scope = { tenant: row.tenant, owner: row.owner };
      const owed = await this.#owed(scope, row.task_id, Number.MAX_SAFE_INTEGER);
      for (const { delivery, span } of owed) {
        this.#spans.open(delivery.id, span);
        out.push(delivery);
      }
      // Claimed with nothing to deliver after all (delivered meanwhile): let it go.
      if (owed.length === 0) await this.#release([row.task_key]);
    }
    if (out.length > 0) this.#renew();
    return out;
  }

  /** Claims the tasks nobody holds a live claim on; returns the keys won. */
  async #claim(keys: readonly string[]): Promise<string[]> {
    const rows = await this.#db.query<{ task_key: string }>(
      `INSERT INTO ${this.#t.claims} AS k (task_key, holder, expires_at)
       SELECT key, $2, clock_timestamp() + $3 * interval '1 millisecond' FROM unnest($1::text[]) AS key
       ON CONFLICT (task_key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
       WHERE k.expires_at <= clock_timestamp()
       RETURNING task_key`,
      [keys, this.#id, this.#ttlMs],
    );
    return rows.map((row) => row.task_key);
  }

  async #release(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#db.run(`DELETE FROM ${this.#t.claims} WHERE task_key = ANY($1::text[]) AND holder = $2`, [keys, this.#id]);
  }

  /** The deliveries each config of the task is owed before `before`, from its cursor and the log. */
  async #owed(scope: TaskScope, taskId: string, before: number): Promise<Array<{ delivery: PushDelivery; span: Span }>> {
    const cursors = await this.#configs.cursors(scope, taskId);
    const lowest = Math.min(...cursors.map((cursor) => cursor.delivered));
    if (cursors.length === 0 || lowest >= before - 1) return [];
    const key = taskKey(scope, taskId);
    const [kept] = await this.#db.query<{ any: boolean; payloads: string[] | null }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.#t.events} WHERE task_key = $1) AS any,
         (SELECT array_agg(payload ORDER BY version) FROM ${this.#t.events} WHERE task_key = $1 AND version > $2 AND version < $3) AS payloads`,
      [key, lowest, Math.min(before, 2_147_483_647)],
    );
    const logged: LoggedEvent[] | undefined = kept.any
      ? (kept.payloads ?? []).map((payload) => {
          const committed = JSON.parse(payload) as CommittedEvent;
          return { version: committed.version, event: committed.event };
        })
      : undefined;
    if (logged?.length === 0) return [];
    const latest = await this.#tasks.get(scope, taskId);
    if (!latest) return [];
    // Events past the retention: the task stands for them, as it was before this event.
    if (logged === undefined && latest.version >= before) return [];
    return cursors.flatMap((cursor) => lagging(scope, taskId, cursor, latest, logged, randomUUID));
  }

  /** Renews this replica's claims while it has deliveries open; stops when it has none. */
  #renew(): void {
    if (this.#renewer) return;
    this.#renewer = setInterval(() => {
      const tasks = this.#spans.tasks();
      if (tasks.length === 0) {
        clearInterval(this.#renewer);
        this.#renewer = undefined;
        return;
      }
      this.#db
        .run(`UPDATE ${this.#t.claims} SET expires_at = clock_timestamp() + $3 * interval '1 millisecond' WHERE task_key = ANY($1::text[]) AND holder = $2`, [
          tasks.map(({ key }) => key),
          this.#id,
          this.#ttlMs,
        ])
        .catch((error: unknown) =>
          this.#logger.warn({ err: error }, 'push notifications: could not renew delivery claims; another replica may deliver too'),
        );
    }, Math.max(10, Math.floor(this.#ttlMs / 3)));
    this.#renewer.unref();
  }
}
