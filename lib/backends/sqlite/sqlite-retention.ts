/**
 * Retention for SqliteTaskStore: removes finished tasks older than a cutoff with every row kept for them (body, artifacts, chunks, trace context,
 * push configs and their logged events), one transaction per batch.
 */
import type BetterSqlite3 from 'better-sqlite3';
import { preparer } from './sqlite-statements.js';

/**
 * The terminal states as the partial index a2a_tasks_finished names them: the query repeats the index's WHERE word for word, which is what lets
 * SQLite use a partial index.
 */
const FINISHED = "state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED')";

/** The schema step that adds the index the sweep reads (a migration of SqliteTaskStore). */
export const FINISHED_INDEX_MIGRATION = `
  -- Retention (removeFinished) reads the oldest finished tasks across scopes. Partial: only
  -- finished tasks are in it, so writes of running tasks never touch it.
  CREATE INDEX a2a_tasks_finished ON a2a_tasks (status_ts) WHERE ${FINISHED};
`;

/** The SQL of the sweep's candidates: oldest first, through a2a_tasks_finished. */
export const FINISHED_BEFORE_SQL = `SELECT seq, id, tenant, owner FROM a2a_tasks WHERE ${FINISHED} AND status_ts < ? ORDER BY status_ts LIMIT ?`;

/**
 * A function removing up to `limit` finished tasks older than the cutoff in one IMMEDIATE transaction (the listing row and the task go together: no
 * reader sees one without the other). Freed pages go to SQLite's free list and are reused by later writes, so the file stops growing.
 */
export function finishedTaskRemover(db: BetterSqlite3.Database): (finishedBefore: string, limit: number) => number {
  const prepare = preparer(db);
  const s = {
    candidates: prepare<[string, number], { seq: number; id: string; tenant: string; owner: string }>(FINISHED_BEFORE_SQL),
    // Each a prefix range of its table's primary key.
    chunks: prepare<[number]>('DELETE FROM a2a_artifact_chunks WHERE task = ?'),
    artifacts: prepare<[number]>('DELETE FROM a2a_artifacts WHERE task = ?'),
    body: prepare<[number]>('DELETE FROM a2a_task_bodies WHERE task = ?'),
    // Tracing's table exists once a task's trace context was kept (see sqlite-trace-context.ts).
    hasTraces: prepare<[], { found: number }>("SELECT 1 AS found FROM sqlite_schema WHERE type = 'table' AND name = 'a2a_task_traces'"),
    pushConfigs: prepare<[string, string, string]>('DELETE FROM a2a_push_configs WHERE task_id = ? AND tenant = ? AND owner = ?'),
    // Task ids are unique across scopes: the log is keyed by id alone.
    pushEvents: prepare<[string]>('DELETE FROM a2a_push_events WHERE task_id = ?'),
    task: prepare<[number]>('DELETE FROM a2a_tasks WHERE seq = ?'),
  };
  return db.transaction((finishedBefore: string, limit: number): number => {
    // all(): the deletes below write the table the candidates come from.
    const rows = s.candidates.all(finishedBefore, limit);
    const traces = s.hasTraces.get() ? prepare<[number]>('DELETE FROM a2a_task_traces WHERE task = ?') : undefined;
    for (const row of rows) {
      s.chunks.run(row.seq);
      s.artifacts.run(row.seq);
      s.body.run(row.seq);
      traces?.run(row.seq);
      s.pushConfigs.run(row.id, row.tenant, row.owner);
      s.pushEvents.run(row.id);
      s.task.run(row.seq);
    }
    return rows.length;
  }).immediate;
}
