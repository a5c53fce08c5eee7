/**
 * PostgresPushConfigStore: push configs in the backend's schema, one row each, keyed by the task's
 * key (scope and id: another scope's configs are other rows) and kept in the order they were
 * added; each carries its delivery cursor, which PostgresPushOutbox moves. A new config's cursor
 * starts at its task's version, read in the same statement. Credentials are stored as given (they
 * are sent to the webhook) and never logged here.
 */
import { z } from 'zod';
import { parseOptions } from '../../options.js';
import { PushConfigLimitError, type PushConfigStore, type StoredPushConfig } from '../../engine/seams/push-config-store.js';
import type { ConfigCursor } from '../../engine/push/push-cursors.js';
import type { TaskScope } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/task-key.js';
import type { PostgresDatabase } from './postgres-client.js';
import { connectionShape, databaseOf, type PostgresConnectionOptions } from './postgres-options.js';

export type PostgresPushConfigStoreOptions = PostgresConnectionOptions;

const optionsSchema = z.strictObject(connectionShape);

interface ConfigRow {
  readonly config: string;
  readonly failing: boolean;
  readonly delivered: number;
  readonly attempts: number;
}

const parse = (row: Pick<ConfigRow, 'config' | 'failing'>): StoredPushConfig => {
  const config = JSON.parse(row.config) as StoredPushConfig;
  return row.failing ? { ...config, failing: true } : config;
};

export class PostgresPushConfigStore implements PushConfigStore {
  readonly #db: PostgresDatabase;
  readonly #table: string;
  readonly #tasks: string;

  constructor(options: PostgresPushConfigStoreOptions) {
    this.#db = databaseOf(parseOptions('PostgresPushConfigStore', optionsSchema, options));
    this.#table = this.#db.table('push_configs');
    this.#tasks = this.#db.table('tasks');
  }

  /** The database and schema, for the outbox built on this store. */
  get database(): PostgresDatabase {
    return this.#db;
  }

  async put(scope: TaskScope, config: StoredPushConfig, maxPerTask: number): Promise<void> {
    const { failing, ...rest } = config;
    const key = taskKey(scope, config.taskId);
    // One put per task at a time (a lock until COMMIT), so concurrent puts respect the bound.
    const [row] = await this.#db.transaction(async (query) => {
      await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`a2a push configs ${this.#db.schema} ${key}`]);
      return query<{ stored: string }>(
        `WITH replaced AS (
          UPDATE ${this.#table} SET config = $3, failing = $4 WHERE task_key = $1 AND id = $2 RETURNING 1
        ), added AS (
          INSERT INTO ${this.#table} (task_key, id, tenant, owner, task_id, config, failing, delivered, attempts)
          SELECT $1, $2, $5, $6, $7, $3, $4,
            COALESCE((SELECT version FROM ${this.#tasks} WHERE id = $7 AND tenant = $5 AND owner = $6), 0), 0
          WHERE NOT EXISTS (SELECT 1 FROM replaced) AND (SELECT count(*) FROM ${this.#table} WHERE task_key = $1) < $8
          ON CONFLICT DO NOTHING RETURNING 1
        )
        SELECT (SELECT count(*) FROM replaced) + (SELECT count(*) FROM added) AS stored`,
        [key, config.id, JSON.stringify(rest), failing === true, scope.tenant, scope.owner, config.taskId, maxPerTask],
      );
    });
    if (Number(row.stored) === 0) throw new PushConfigLimitError(config.taskId, maxPerTask);
  }

  async get(scope: TaskScope, taskId: string, id: string): Promise<StoredPushConfig | undefined> {
    const [row] = await this.#db.query<ConfigRow>(`SELECT config, failing FROM ${this.#table} WHERE task_key = $1 AND id = $2`, [
      taskKey(scope, taskId),
      id,
    ]);
    return row && parse(row);
  }

  async list(scope: TaskScope, taskId: string): Promise<StoredPushConfig[]> {
    return (await this.cursors(scope, taskId)).map((cursor) => cursor.config);
  }

  async delete(scope: TaskScope, taskId: string, id: string): Promise<void> {
    await this.#db.run(`DELETE FROM ${this.#table} WHERE task_key = $1 AND id = $2`, [taskKey(scope, taskId), id]);
  }

  async deleteAll(scope: TaskScope, taskId: string): Promise<void> {
    await this.#db.run(`DELETE FROM ${this.#table} WHERE task_key = $1`, [taskKey(scope, taskId)]);
  }

  async setFailing(scope: TaskScope, taskId: string, id: string, failing: boolean): Promise<void> {
    await this.#db.run(`UPDATE ${this.#table} SET failing = $3 WHERE task_key = $1 AND id = $2`, [taskKey(scope, taskId), id, failing]);
  }

  /** The task's configs with their cursors, oldest first (PostgresPushOutbox). */
  async cursors(scope: TaskScope, taskId: string): Promise<ConfigCursor[]> {
    const rows = await this.#db.query<ConfigRow>(
      `SELECT config, failing, delivered, attempts FROM ${this.#table} WHERE task_key = $1 ORDER BY position`,
      [taskKey(scope, taskId)],
    );
    return rows.map((row) => ({ config: parse(row), delivered: row.delivered, attempts: row.attempts }));
  }
}
