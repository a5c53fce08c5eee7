/**
 * The prepared statements of SqliteTaskStore's reads and writes, and the one way every SQLite store of the kit prepares a statement (numbers as
 * numbers).
 */
import type BetterSqlite3 from 'better-sqlite3';
import type { HeadRow, StoredArtifact } from './sqlite-task-rows.js';

const UNFINISHED_STATES = "('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')";

/**
 * What the stores use of a prepared statement taking `P` and reading rows `R`: written out, since better-sqlite3's own Statement type cannot be named
 * in the declarations this package ships.
 */
export interface SqliteStatement<P extends unknown[], R = unknown> {
  run(...params: P): BetterSqlite3.RunResult;
  get(...params: P): R | undefined;
  all(...params: P): R[];
  iterate(...params: P): IterableIterator<R>;
}

/** `prepare<Params, Row>(sql)` on `db`; numbers as numbers, even when the user's database hands out BigInts by default. */
export const preparer =
  (db: BetterSqlite3.Database) =>
  <P extends unknown[], R = unknown>(sql: string): SqliteStatement<P, R> =>
    (db.prepare(sql) as BetterSqlite3.Statement<P, R>).safeIntegers(false);

export type TaskStatements = ReturnType<typeof prepareStatements>;

export function prepareStatements(db: BetterSqlite3.Database) {
  const prepare = preparer(db);
  return {
    getInScope: prepare<[string, string, string], { seq: number; version: number; artifact_count: number; body: string }>(
      `SELECT t.seq, t.version, t.artifact_count, b.body FROM a2a_tasks t JOIN a2a_task_bodies b ON b.task = t.seq
       WHERE t.id = ? AND t.tenant = ? AND t.owner = ?`,
    ),
    headById: prepare<[string], HeadRow>(
      'SELECT seq, tenant, owner, version, state, context_id, status_ts, artifact_count FROM a2a_tasks WHERE id = ?',
    ),
    body: prepare<[number], { body: string }>('SELECT body FROM a2a_task_bodies WHERE task = ?'),
    insertTask: prepare<[Record<string, unknown>]>(
      `INSERT INTO a2a_tasks (id, tenant, owner, version, state, context_id, status_ts, artifact_count)
       VALUES (@id, @tenant, @owner, 1, @state, @context_id, @status_ts, @artifact_count)
       ON CONFLICT (id) DO NOTHING`,
    ),
    insertBody: prepare<[number, string]>('INSERT INTO a2a_task_bodies (task, body) VALUES (?, ?)'),
    setHead: prepare<[Record<string, unknown>]>(
      `UPDATE a2a_tasks SET version = @version, state = @state, context_id = @context_id, status_ts = @status_ts,
       artifact_count = @artifact_count WHERE seq = @seq`,
    ),
    setVersion: prepare<[number, number, number]>('UPDATE a2a_tasks SET version = ?, artifact_count = ? WHERE seq = ?'),
    setBody: prepare<[string, number]>('UPDATE a2a_task_bodies SET body = ? WHERE task = ?'),
    artifactById: prepare<[number, string], StoredArtifact>(
      'SELECT position, head, part_count, chunks FROM a2a_artifacts WHERE task = ? AND artifact_id = ? ORDER BY position LIMIT 1',
    ),
    versionOf: prepare<[number], { version: number }>('SELECT version FROM a2a_tasks WHERE seq = ?'),
    setChunks: prepare<[number, number, number]>('UPDATE a2a_artifacts SET chunks = ? WHERE task = ? AND position = ?'),
    upsertArtifact: prepare<[number, number, string, string, number, number]>(
      `INSERT INTO a2a_artifacts (task, position, artifact_id, head, part_count, chunks) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (task, position) DO UPDATE SET artifact_id = excluded.artifact_id, head = excluded.head,
       part_count = excluded.part_count, chunks = excluded.chunks`,
    ),
    // Leaves artifact_id alone, so its index is not touched.
    growArtifact: prepare<[string, number, number, number, number]>(
      'UPDATE a2a_artifacts SET head = ?, part_count = ?, chunks = ? WHERE task = ? AND position = ?',
    ),
    insertChunk: prepare<[number, number, number, string]>('INSERT INTO a2a_artifact_chunks (task, position, chunk, parts) VALUES (?, ?, ?, ?)'),
    deleteChunksAt: prepare<[number, number]>('DELETE FROM a2a_artifact_chunks WHERE task = ? AND position = ?'),
    deleteChunksFrom: prepare<[number, number]>('DELETE FROM a2a_artifact_chunks WHERE task = ? AND position >= ?'),
    deleteArtifactsFrom: prepare<[number, number]>('DELETE FROM a2a_artifacts WHERE task = ? AND position >= ?'),
    artifactChunks: prepare<[number], { position: number; head: string; parts: string }>(
      `SELECT a.position, a.head, c.parts FROM a2a_artifacts a
       JOIN a2a_artifact_chunks c ON c.task = a.task AND c.position = a.position
       WHERE a.task = ? ORDER BY a.position, c.chunk`,
    ),
    // Scoped like every lookup: only the task's own configs count (the primary key serves it).
    hasPushConfigs: prepare<[string, string, string], { one: number }>(
      'SELECT 1 AS one FROM a2a_push_configs WHERE task_id = ? AND tenant = ? AND owner = ? LIMIT 1',
    ),
    logPushEvent: prepare<[string, number, string]>(
      'INSERT INTO a2a_push_events (task_id, version, event) VALUES (?, ?, ?) ON CONFLICT (task_id, version) DO NOTHING',
    ),
    unfinished: prepare<[], { tenant: string; owner: string; id: string }>(
      `SELECT tenant, owner, id FROM a2a_tasks WHERE state IN ${UNFINISHED_STATES}`,
    ),
  };
}
