/**
 * The push config store of SQLite and PostgreSQL: a row per config, scoped like its task, in the order added, with the cursor its outbox moves.
 * Credentials are stored as given (they are sent to the webhook) and never logged here.
 */
import { PushConfigLimitError, type PushConfigStore, type StoredPushConfig } from '../../engine/seams/push-config-store.js';
import type { ConfigCursor } from '../../engine/push/push-cursors.js';
import type { TaskScope } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/seams/task-store.js';

/** Named parameters (`@name` in the SQL); a statement ignores those it does not name. */
export type SqlParams = Record<string, string | number | boolean>;

/** What differs between the SQL backends. */
interface SqlDialect {
  readonly configs: string;
  readonly tasks: string;
  /** The config row's task, by the parameters @key, @tenant, @owner and @taskId. */
  readonly task: string;
  /** The primary key's columns, and the columns and values before `task_id` in an insert. */
  readonly conflict: string;
  readonly keyColumns: string;
  readonly keyValues: string;
  bool(value: boolean): boolean | number;
  all<R>(sql: string, params: SqlParams): R[] | Promise<R[]>;
  run(sql: string, params: SqlParams): unknown;
  /** `all`, one statement at a time per `lock` (so concurrent puts of a task respect the bound). */
  serialized<R>(lock: string, sql: string, params: SqlParams): R[] | Promise<R[]>;
}

interface ConfigRow {
  readonly config: string;
  readonly failing: boolean | number;
  readonly delivered: number;
  readonly attempts: number;
}

/** A config as stored: its JSON without `failing` (a column of its own), the flag put back. */
const fromRow = (row: ConfigRow): StoredPushConfig => {
  const config = JSON.parse(row.config) as StoredPushConfig;
  return row.failing ? { ...config, failing: true } : config;
};

export class SqlPushConfigStore implements PushConfigStore {
  readonly #d: SqlDialect;
  readonly #sql: { put: string; one: string; all: string; delete: string; deleteAll: string; setFailing: string };

  constructor(dialect: SqlDialect) {
    this.#d = dialect;
    const { configs, tasks, task } = dialect;
    const columns = 'config, failing, delivered, attempts';
    this.#sql = {
      // A replacement keeps its place and cursor; a new config goes last, its cursor at its task's version.
      put: `INSERT INTO ${configs} (${dialect.keyColumns}task_id, tenant, owner, id, position, config, failing, delivered, attempts)
        SELECT ${dialect.keyValues}@taskId, @tenant, @owner, @id, (SELECT COALESCE(MAX(position), 0) + 1 FROM ${configs} WHERE ${task}),
          @config, @failing, COALESCE((SELECT version FROM ${tasks} WHERE id = @taskId AND tenant = @tenant AND owner = @owner), 0), 0
        WHERE EXISTS (SELECT 1 FROM ${configs} WHERE ${task} AND id = @id) OR (SELECT COUNT(*) FROM ${configs} WHERE ${task}) < @max
        ON CONFLICT (${dialect.conflict}) DO UPDATE SET config = excluded.config, failing = excluded.failing RETURNING 1 AS stored`,
      one: `SELECT ${columns} FROM ${configs} WHERE ${task} AND id = @id`,
      all: `SELECT ${columns} FROM ${configs} WHERE ${task} ORDER BY position`,
      delete: `DELETE FROM ${configs} WHERE ${task} AND id = @id`,
      deleteAll: `DELETE FROM ${configs} WHERE ${task}`,
      setFailing: `UPDATE ${configs} SET failing = @failing WHERE ${task} AND id = @id`,
    };
  }

  /** Called before each statement (a closed store throws). */
  protected check(): void {}

  /** After configs of the task were deleted. */
  protected removed(_params: SqlParams): unknown {
    return undefined;
  }

  async put(scope: TaskScope, config: StoredPushConfig, maxPerTask: number): Promise<void> {
    const { failing, ...rest } = config;
    const params = {
      ...this.#params(scope, config.taskId),
      id: config.id,
      config: JSON.stringify(rest),
      failing: this.#d.bool(failing === true),
      max: maxPerTask,
    };
    this.check();
    const stored = await this.#d.serialized(`a2a push configs ${params.key}`, this.#sql.put, params);
    if (stored.length === 0) throw new PushConfigLimitError(config.taskId, maxPerTask);
  }

  async get(scope: TaskScope, taskId: string, id: string): Promise<StoredPushConfig | undefined> {
    this.check();
    const [row] = await this.#d.all<ConfigRow>(this.#sql.one, { ...this.#params(scope, taskId), id });
    return row && fromRow(row);
  }

  async list(scope: TaskScope, taskId: string): Promise<StoredPushConfig[]> {
    return (await this.cursors(scope, taskId)).map((cursor) => cursor.config);
  }

  async delete(scope: TaskScope, taskId: string, id: string): Promise<void> {
    await this.#remove(this.#sql.delete, { ...this.#params(scope, taskId), id });
  }

  async deleteAll(scope: TaskScope, taskId: string): Promise<void> {
    await this.#remove(this.#sql.deleteAll, this.#params(scope, taskId));
  }

  async setFailing(scope: TaskScope, taskId: string, id: string, failing: boolean): Promise<void> {
    this.check();
    await this.#d.run(this.#sql.setFailing, { ...this.#params(scope, taskId), id, failing: this.#d.bool(failing) });
  }

  /** The task's configs with their cursors, oldest first (the outbox). */
  async cursors(scope: TaskScope, taskId: string): Promise<ConfigCursor[]> {
    this.check();
    const rows = await this.#d.all<ConfigRow>(this.#sql.all, this.#params(scope, taskId));
    return rows.map((row) => ({ config: fromRow(row), delivered: row.delivered, attempts: row.attempts }));
  }

  async #remove(sql: string, params: SqlParams): Promise<void> {
    this.check();
    await this.#d.run(sql, params);
    await this.removed(params);
  }

  #params(scope: TaskScope, taskId: string) {
    return { key: taskKey(scope, taskId), tenant: scope.tenant, owner: scope.owner, taskId };
  }
}
