/**
 * Retention for PostgresTaskStore: the schema step adding a partial index of finished tasks, and the sweep removing a batch of them with every row
 * kept for them in one transaction.
 */
import type { PostgresDatabase } from './postgres-client.js';
import { taskKey } from '../../engine/seams/task-store.js';
import { TERMINAL_STATES } from '../../engine/task-state.js';

/** The terminal states as the partial index names them: the sweep repeats this WHERE word for word, so the planner can prove the index covers it. */
const FINISHED = `state IN (${[...TERMINAL_STATES].map((state) => `'${state}'`).join(', ')})`;

/**
 * Schema step 2. Partial: only finished tasks are in it, so writes of running tasks never touch it, and the sweep reads the oldest finished tasks of
 * every scope without scanning the others.
 */
export const finishedIndexMigration = (t: (name: string) => string): string[] => [
  `CREATE INDEX a2a_tasks_finished ON ${t('tasks')} (status_ts) WHERE ${FINISHED}`,
];

/** The sweep's candidate query: $1 the cutoff (exclusive), $2 the limit. */
export const finishedBeforeSql = (tasks: string): string =>
  `SELECT id, tenant, owner FROM ${tasks} WHERE ${FINISHED} AND status_ts < $1 ORDER BY status_ts LIMIT $2 FOR UPDATE SKIP LOCKED`;

/**
 * A function removing up to `limit` finished tasks older than the cutoff, oldest first. The batch is locked FOR UPDATE SKIP LOCKED, so a concurrent
 * sweeper takes other rows (or none) and each task is removed and counted once; every delete commits together, so a reader sees the task whole or not
 * at all. The tables have no foreign keys (writes stay single statements without cascade checks), hence one delete per table, each by its primary
 * key's leading column.
 */
export function finishedTaskRemover(db: PostgresDatabase): (finishedBefore: string, limit: number) => Promise<number> {
  const t = (name: string) => db.table(name);
  const candidates = finishedBeforeSql(t('tasks'));
  // Data-modifying WITH clauses all run, referenced or not: one round trip for the whole batch.
  const remove = `WITH
    chunks AS (DELETE FROM ${t('artifact_chunks')} WHERE task_id = ANY($1::text[])),
    artifacts AS (DELETE FROM ${t('artifacts')} WHERE task_id = ANY($1::text[])),
    events AS (DELETE FROM ${t('events')} WHERE task_key = ANY($2::text[])),
    configs AS (DELETE FROM ${t('push_configs')} WHERE task_key = ANY($2::text[])),
    claims AS (DELETE FROM ${t('push_claims')} WHERE task_key = ANY($2::text[])),
    leases AS (DELETE FROM ${t('leases')} WHERE key = ANY($2::text[]))
    DELETE FROM ${t('tasks')} WHERE id = ANY($1::text[])`;
  return async (finishedBefore, limit) => {
    if (limit <= 0) return 0;
    return db.transaction(async (query) => {
      const rows = await query<{ id: string; tenant: string; owner: string }>(candidates, [finishedBefore, limit]);
      if (rows.length === 0) return 0;
      const ids = rows.map((row) => row.id);
      const keys = rows.map((row) => taskKey({ tenant: row.tenant, owner: row.owner }, row.id));
      await query(remove, [ids, keys]);
      return rows.length;
    });
  };
}
