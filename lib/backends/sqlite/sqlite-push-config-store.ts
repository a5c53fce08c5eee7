/**
 * SqlitePushConfigStore: push configs in the SQLite file of a SqliteTaskStore, on its connection
 * (one transaction for a task write and its event log). Each row also carries the config's
 * delivery cursor, which SqlitePushOutbox moves; a new config starts at its task's current version,
 * read in the same transaction, so it receives exactly the events committed after it was stored.
 * Credentials are stored as given (they are sent to the webhook) and never logged here.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { preparer } from './sqlite-statements.js';
import type { TaskScope } from '../../engine/seams/task-store.js';
import type { SqliteTaskStore } from './sqlite-task-store.js';
import { PushConfigLimitError, type PushConfigStore, type StoredPushConfig } from '../../engine/seams/push-config-store.js';
import type { ConfigCursor } from '../../engine/push/push-cursors.js';

interface ConfigRow {
  config: string;
  failing: number;
  delivered: number;
  attempts: number;
}

/** A config as stored: its JSON without `failing` (a column of its own), the flag put back. */
const fromRow = (row: ConfigRow): StoredPushConfig => {
  const config = JSON.parse(row.config) as StoredPushConfig;
  return row.failing ? { ...config, failing: true } : config;
};

function statements(db: BetterSqlite3.Database) {
  const prepare = preparer(db);
  const key = 'task_id = @taskId AND tenant = @tenant AND owner = @owner';
  return {
    one: prepare<[Record<string, unknown>], ConfigRow>(`SELECT config, failing, delivered, attempts FROM a2a_push_configs WHERE ${key} AND id = @id`),
    all: prepare<[Record<string, unknown>], ConfigRow>(
      `SELECT config, failing, delivered, attempts FROM a2a_push_configs WHERE ${key} ORDER BY position`,
    ),
    count: prepare<[Record<string, unknown>], { n: number; last: number | null }>(
      `SELECT COUNT(*) AS n, MAX(position) AS last FROM a2a_push_configs WHERE ${key}`,
    ),
    // The task's version in this scope: where a new config's cursor starts (0 for a task not stored yet).
    taskVersion: prepare<[Record<string, unknown>], { version: number }>(
      'SELECT version FROM a2a_tasks WHERE id = @taskId AND tenant = @tenant AND owner = @owner',
    ),
    insert: prepare<[Record<string, unknown>]>(
      `INSERT INTO a2a_push_configs (task_id, tenant, owner, id, position, config, failing, delivered, attempts)
       VALUES (@taskId, @tenant, @owner, @id, @position, @config, @failing, @delivered, 0)`,
    ),
    replace: prepare<[Record<string, unknown>]>(`UPDATE a2a_push_configs SET config = @config, failing = @failing WHERE ${key} AND id = @id`),
    delete: prepare<[Record<string, unknown>]>(`DELETE FROM a2a_push_configs WHERE ${key} AND id = @id`),
    deleteAll: prepare<[Record<string, unknown>]>(`DELETE FROM a2a_push_configs WHERE ${key}`),
    setFailing: prepare<[Record<string, unknown>]>(`UPDATE a2a_push_configs SET failing = @failing WHERE ${key} AND id = @id`),
    // Logged events every config of the task has had (all of them once it has none) are not needed again.
    trim: prepare<[{ taskId: string }]>(
      `DELETE FROM a2a_push_events WHERE task_id = @taskId
       AND version <= COALESCE((SELECT MIN(delivered) FROM a2a_push_configs WHERE task_id = @taskId), 9007199254740991)`,
    ),
  };
}

export class SqlitePushConfigStore implements PushConfigStore {
  readonly #tasks: SqliteTaskStore;
  readonly #s: ReturnType<typeof statements>;
  readonly #put: (scope: TaskScope, config: StoredPushConfig, maxPerTask: number) => void;
  readonly #remove: (params: Record<string, unknown>, all: boolean) => void;

  /** On the connection and file of `taskStore` (its schema holds the push tables). */
  constructor(taskStore: SqliteTaskStore) {
    this.#tasks = taskStore;
    const db = taskStore.database;
    this.#s = statements(db);
    this.#put = db.transaction((scope: TaskScope, config: StoredPushConfig, maxPerTask: number) => {
      const params = { taskId: config.taskId, tenant: scope.tenant, owner: scope.owner, id: config.id };
      const { failing, ...rest } = config;
      const values = { ...params, config: JSON.stringify(rest), failing: failing ? 1 : 0 };
      if (this.#s.replace.run(values).changes > 0) return;
      const { n, last } = this.#s.count.get(params)!;
      if (n >= maxPerTask) throw new PushConfigLimitError(config.taskId, maxPerTask);
      const delivered = this.#s.taskVersion.get(params)?.version ?? 0;
      this.#s.insert.run({ ...values, position: (last ?? 0) + 1, delivered });
    }).immediate;
    this.#remove = db.transaction((params: Record<string, unknown>, all: boolean) => {
      if (all) this.#s.deleteAll.run(params);
      else this.#s.delete.run(params);
      this.#s.trim.run({ taskId: params.taskId as string });
    }).immediate;
  }

  async put(scope: TaskScope, config: StoredPushConfig, maxPerTask: number): Promise<void> {
    this.#assertOpen();
    // The cursor starts at the task's committed version: commit the task writes called before this.
    this.#tasks.flushWrites();
    this.#put(scope, config, maxPerTask);
  }

  async get(scope: TaskScope, taskId: string, id: string): Promise<StoredPushConfig | undefined> {
    this.#assertOpen();
    const row = this.#s.one.get({ taskId, tenant: scope.tenant, owner: scope.owner, id });
    return row && fromRow(row);
  }

  async list(scope: TaskScope, taskId: string): Promise<StoredPushConfig[]> {
    this.#assertOpen();
    return this.cursors(scope, taskId).map((cursor) => cursor.config);
  }

  async delete(scope: TaskScope, taskId: string, id: string): Promise<void> {
    this.#assertOpen();
    this.#remove({ taskId, tenant: scope.tenant, owner: scope.owner, id }, false);
  }

  async deleteAll(scope: TaskScope, taskId: string): Promise<void> {
    this.#assertOpen();
    this.#remove({ taskId, tenant: scope.tenant, owner: scope.owner }, true);
  }

  async setFailing(scope: TaskScope, taskId: string, id: string, failing: boolean): Promise<void> {
    this.#assertOpen();
    this.#s.setFailing.run({ taskId, tenant: scope.tenant, owner: scope.owner, id, failing: failing ? 1 : 0 });
  }

  /** The task's configs with their cursors, oldest first (SqlitePushOutbox). */
  cursors(scope: TaskScope, taskId: string): ConfigCursor[] {
    const out: ConfigCursor[] = [];
    // iterate(), not all(): objects of the caller's realm (see SqliteTaskStore.list).
    for (const row of this.#s.all.iterate({ taskId, tenant: scope.tenant, owner: scope.owner })) {
      out.push({ config: fromRow(row), delivered: row.delivered, attempts: row.attempts });
    }
    return out;
  }

  #assertOpen(): void {
    if (this.#tasks.closed) throw new Error('SqlitePushConfigStore: its SqliteTaskStore is closed');
  }
}
