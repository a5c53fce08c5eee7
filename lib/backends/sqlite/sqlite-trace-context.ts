/**
 * The trace context a task was started in (tracing), for SqliteTaskStore: one row per task in a2a_task_traces, beside the task (never in its JSON),
 * keyed by its a2a_tasks row and removed with it by retention. The table is made when first needed, so a file that never traces has none.
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { TaskScope } from '../../engine/seams/task-store.js';

const TABLE = `
  CREATE TABLE IF NOT EXISTS a2a_task_traces (
    task INTEGER PRIMARY KEY, -- a2a_tasks.seq
    traceparent TEXT NOT NULL
  ) STRICT, WITHOUT ROWID;
`;

export class SqliteTraceContexts {
  readonly #save: BetterSqlite3.Statement<[string, string, string, string]>;
  readonly #load: BetterSqlite3.Statement<[string, string, string], { traceparent: string }>;

  constructor(db: BetterSqlite3.Database) {
    db.exec(TABLE);
    this.#save = db.prepare(
      'INSERT OR REPLACE INTO a2a_task_traces (task, traceparent) SELECT seq, ? FROM a2a_tasks WHERE id = ? AND tenant = ? AND owner = ?',
    );
    this.#load = db.prepare(
      'SELECT t.traceparent FROM a2a_task_traces t JOIN a2a_tasks k ON k.seq = t.task WHERE k.id = ? AND k.tenant = ? AND k.owner = ?',
    );
  }

  save(scope: TaskScope, taskId: string, traceparent: string): void {
    this.#save.run(traceparent, taskId, scope.tenant, scope.owner);
  }

  load(scope: TaskScope, taskId: string): string | undefined {
    return this.#load.get(taskId, scope.tenant, scope.owner)?.traceparent;
  }
}
