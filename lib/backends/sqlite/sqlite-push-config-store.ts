/**
 * SqlitePushConfigStore: the SQL push config store in the file of a SqliteTaskStore, on its connection; logged events every config of a task has had
 * go when its configs do.
 */
import { preparer, type SqliteStatement } from './sqlite-statements.js';
import type { TaskScope } from '../../engine/seams/task-store.js';
import type { SqliteTaskStore } from './sqlite-task-store.js';
import type { StoredPushConfig } from '../../engine/seams/push-config-store.js';
import { SqlPushConfigStore, type SqlParams } from '../shared/sql-push-config-store.js';

export class SqlitePushConfigStore extends SqlPushConfigStore {
  readonly #tasks: SqliteTaskStore;
  readonly #trim: SqliteStatement<[{ taskId: string }]>;

  /** On the connection and file of `taskStore` (its schema holds the push tables). */
  constructor(taskStore: SqliteTaskStore) {
    const prepare = preparer(taskStore.database);
    const prepared = new Map<string, ReturnType<typeof prepare>>();
    const statement = (sql: string) => prepared.get(sql) ?? prepared.set(sql, prepare(sql)).get(sql)!;
    // iterate(), not all(): objects of the caller's realm (see SqliteTaskStore.list).
    const all = <R>(sql: string, params: SqlParams) => [...statement(sql).iterate(params)] as R[];
    super({
      configs: 'a2a_push_configs',
      tasks: 'a2a_tasks',
      task: 'task_id = @taskId AND tenant = @tenant AND owner = @owner',
      conflict: 'task_id, tenant, owner, id',
      keyColumns: '',
      keyValues: '',
      bool: (value) => (value ? 1 : 0),
      all,
      run: (sql, params) => statement(sql).run(params),
      // One statement: SQLite runs it alone.
      serialized: (_lock, sql, params) => all(sql, params),
    });
    this.#tasks = taskStore;
    // Logged events every config of the task has had (all of them once it has none) are not needed again.
    this.#trim = prepare(
      `DELETE FROM a2a_push_events WHERE task_id = @taskId
       AND version <= COALESCE((SELECT MIN(delivered) FROM a2a_push_configs WHERE task_id = @taskId), 9007199254740991)`,
    );
  }

  override async put(scope: TaskScope, config: StoredPushConfig, maxPerTask: number): Promise<void> {
    this.check();
    // The cursor starts at the task's committed version: commit the task writes called before this.
    this.#tasks.flushWrites();
    await super.put(scope, config, maxPerTask);
  }

  protected override check(): void {
    if (this.#tasks.closed) throw new Error('SqlitePushConfigStore: its SqliteTaskStore is closed');
  }

  protected override removed(params: SqlParams): void {
    this.#trim.run({ taskId: params.taskId as string });
  }
}
