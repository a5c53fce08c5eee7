/**
 * PostgresPushOutbox: the claiming outbox on PostgreSQL. The events are the bus's events table, the cursors sit in the config rows
 * (PostgresPushConfigStore), and a claim is a row with an expiry.
 */
import { z } from 'zod';
import { consoleLogger, type Logger, parseOptions } from '../../options.js';
import type { LoggedEvent, Span } from '../../engine/push/push-cursors.js';
import type { PushDelivery } from '../../engine/seams/push-outbox.js';
import type { TaskStore } from '../../engine/seams/task-store.js';
import type { CommittedEvent } from '../../engine/seams/task-event-bus.js';
import { taskKey } from '../../engine/seams/task-store.js';
import { ClaimingOutbox } from '../shared/claiming-outbox.js';
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

export class PostgresPushOutbox extends ClaimingOutbox {
  readonly #db: PostgresDatabase;
  readonly #configs: PostgresPushConfigStore;
  readonly #t: { configs: string; claims: string; events: string; tasks: string };

  constructor(options: PostgresPushOutboxOptions) {
    const parsed = parseOptions('PostgresPushOutbox', optionsSchema, options);
    super(parsed.configStore, parsed.taskStore, parsed.claimTtlMs, parsed.logger);
    this.#configs = parsed.configStore;
    this.#db = this.#configs.database;
    const db = this.#db;
    this.#t = { configs: db.table('push_configs'), claims: db.table('push_claims'), events: db.table('events'), tasks: db.table('tasks') };
  }

  protected async claim(key: string): Promise<boolean> {
    return (await this.#claim([key])).length > 0;
  }

  async recordAttempts(id: string, attempts: number): Promise<void> {
    const span = this.spans.get(id);
    if (!span) return;
    await this.#db.run(`UPDATE ${this.#t.configs} SET attempts = $3 WHERE task_key = $1 AND id = $2 AND delivered = $4`, [
      taskKey(span.scope, span.taskId),
      span.configId,
      attempts,
      span.from,
    ]);
  }

  protected async advance(span: Span): Promise<void> {
    await this.#db.run(
      `UPDATE ${this.#t.configs} c SET delivered = $4, attempts = 0
       WHERE c.task_key = $1 AND c.id = $2 AND c.delivered < $4
       AND (c.delivered >= $3 OR NOT EXISTS (SELECT 1 FROM ${this.#t.events} e WHERE e.task_key = $1 AND e.version > c.delivered AND e.version <= $3))`,
      [taskKey(span.scope, span.taskId), span.configId, span.from, span.version],
    );
  }

  /** Tasks with configs and no live claim whose cursors are behind: claimed here, with what they are owed. */
  protected async sweep(): Promise<PushDelivery[]> {
    // Whether some config is behind the log (or behind the task, for events past the retention).
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
    const behind = rows.filter((row) => row.behind && !this.spans.has(row.task_key));
    // Ended tasks with nothing owed: their configs can go.
    for (const row of rows) {
      if (!row.behind && row.terminal) await this.#configs.deleteAll({ tenant: row.tenant, owner: row.owner }, row.task_id);
    }
    if (behind.length === 0) return out;
    const holds = new Map(behind.map((row) => [row.task_key, this.holdLiveEvents(row.task_key)]));
    const won = new Set(await this.#claim(behind.map((row) => row.task_key)));
    for (const row of behind) {
      if (won.has(row.task_key)) out.push(...(await this.takeOver({ tenant: row.tenant, owner: row.owner }, row.task_id, row.task_key)));
      else holds.get(row.task_key)!();
    }
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
      [keys, this.id, this.ttlMs],
    );
    return rows.map((row) => row.task_key);
  }

  protected async releaseClaims(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#db.run(`DELETE FROM ${this.#t.claims} WHERE task_key = ANY($1::text[]) AND holder = $2`, [keys, this.id]);
  }

  protected async renewClaims(keys: readonly string[]): Promise<void> {
    await this.#db.run(
      `UPDATE ${this.#t.claims} SET expires_at = clock_timestamp() + $3 * interval '1 millisecond' WHERE task_key = ANY($1::text[]) AND holder = $2`,
      [keys, this.id, this.ttlMs],
    );
  }

  protected async logged(key: string, after: number, before: number): Promise<LoggedEvent[] | undefined> {
    const [kept] = await this.#db.query<{ any: boolean; payloads: string[] | null }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.#t.events} WHERE task_key = $1) AS any,
         (SELECT array_agg(payload ORDER BY version) FROM ${this.#t.events} WHERE task_key = $1 AND version > $2 AND version < $3) AS payloads`,
      [key, after, Math.min(before, 2_147_483_647)],
    );
    if (!kept.any) return undefined;
    return (kept.payloads ?? []).map((payload) => {
      const committed = JSON.parse(payload) as CommittedEvent;
      return { version: committed.version, event: committed.event };
    });
  }
}
