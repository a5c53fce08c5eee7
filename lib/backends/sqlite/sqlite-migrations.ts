/**
 * The SQLite file's schema and its set-up: the migration steps (PRAGMA user_version counts them), and the pragmas the store needs on its connection
 * (busy timeout, WAL, synchronous).
 */
import type BetterSqlite3 from 'better-sqlite3';
import { FINISHED_INDEX_MIGRATION } from './sqlite-retention.js';

type Database = BetterSqlite3.Database;

/**
 * Schema steps: step i takes `PRAGMA user_version` from i to i + 1. Append steps for later versions; never edit a shipped one (files in the field
 * already ran it).
 */
const MIGRATIONS: readonly string[] = [
  `
  -- One small row per task: what compare-and-set and listing read, rewritten on every write.
  -- id is unique across scopes: create() refuses an id taken in any scope.
  CREATE TABLE a2a_tasks (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    version INTEGER NOT NULL,
    state TEXT NOT NULL,
    context_id TEXT,
    status_ts TEXT NOT NULL,
    artifact_count INTEGER NOT NULL
  );
  -- ListTasks order (newest status first, then id) per scope, and per filter it can be given.
  CREATE INDEX a2a_tasks_listing ON a2a_tasks (tenant, owner, status_ts DESC, id);
  CREATE INDEX a2a_tasks_by_context ON a2a_tasks (tenant, owner, context_id, status_ts DESC, id);
  CREATE INDEX a2a_tasks_by_state ON a2a_tasks (tenant, owner, state, status_ts DESC, id);
  -- findUnfinished() at start-up reads only the few unfinished tasks.
  CREATE INDEX a2a_tasks_unfinished ON a2a_tasks (state) WHERE state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING');

  -- The task's JSON without its artifacts ("artifacts": [] stands in for them when present).
  CREATE TABLE a2a_task_bodies (
    task INTEGER PRIMARY KEY,
    body TEXT NOT NULL
  );

  -- One row per artifact, in task order: its JSON with "parts": [] standing in for the parts.
  CREATE TABLE a2a_artifacts (
    task INTEGER NOT NULL,
    position INTEGER NOT NULL,
    artifact_id TEXT NOT NULL,
    head TEXT NOT NULL,
    part_count INTEGER NOT NULL,
    chunks INTEGER NOT NULL,
    PRIMARY KEY (task, position)
  ) WITHOUT ROWID;
  CREATE INDEX a2a_artifacts_by_id ON a2a_artifacts (task, artifact_id, position);

  -- The parts of an artifact as appended: a JSON array per chunk, concatenated on read. Without
  -- rowid, an append writes one b-tree (not a table and its key index), and an artifact's chunks
  -- sit together in read order.
  CREATE TABLE a2a_artifact_chunks (
    task INTEGER NOT NULL,
    position INTEGER NOT NULL,
    chunk INTEGER NOT NULL,
    parts TEXT NOT NULL,
    PRIMARY KEY (task, position, chunk)
  ) WITHOUT ROWID;
  `,
  `
  -- Push notification configs (SqlitePushConfigStore), scoped like tasks. \`delivered\` is the
  -- task version delivered to the config so far (its cursor); \`attempts\` those made on the next one.
  CREATE TABLE a2a_push_configs (
    task_id TEXT NOT NULL,
    tenant TEXT NOT NULL,
    owner TEXT NOT NULL,
    id TEXT NOT NULL,
    position INTEGER NOT NULL,
    config TEXT NOT NULL,
    failing INTEGER NOT NULL,
    delivered INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    PRIMARY KEY (task_id, tenant, owner, id)
  ) WITHOUT ROWID;

  -- The committed events of tasks that have push configs, written in the transaction of the task
  -- write itself (so no committed event can miss its deliveries), deleted once every config of the
  -- task has it.
  CREATE TABLE a2a_push_events (
    task_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    event TEXT NOT NULL,
    PRIMARY KEY (task_id, version)
  ) WITHOUT ROWID;
  `,
  FINISHED_INDEX_MIGRATION,
];

/** The schema version this code writes. */
export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

function migrate(db: Database): void {
  // IMMEDIATE: two processes opening a new file at once do not both run a step.
  db.transaction(() => {
    const current = Number(db.pragma('user_version', { simple: true }));
    const ours = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'a2a_tasks'").get() !== undefined;
    if (current > 0 && !ours) {
      throw new Error(
        `SqliteTaskStore: ${db.name} has user_version ${current} but no a2a_tasks table; the store owns user_version, so give it a database file of its own`,
      );
    }
    if (current === SQLITE_SCHEMA_VERSION) return;
    if (current > SQLITE_SCHEMA_VERSION) {
      throw new Error(
        `SqliteTaskStore: ${db.name} has schema version ${current}, newer than this a2a-express-kit knows (${SQLITE_SCHEMA_VERSION}); upgrade a2a-express-kit`,
      );
    }
    for (let step = current; step < SQLITE_SCHEMA_VERSION; step++) db.exec(MIGRATIONS[step]);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  }).immediate();
}

/**
 * Readies a connection for the store: busy timeout, WAL, synchronous, then the schema. Throws when the file cannot run in WAL mode or holds a schema
 * that is not (or no longer) the store's.
 */
export function prepareConnection(db: Database, busyTimeoutMs: number, synchronous: 'NORMAL' | 'FULL'): void {
  // Before WAL: switching the journal mode takes a lock another connection may hold briefly.
  db.pragma(`busy_timeout = ${busyTimeoutMs}`);
  // WAL: readers never block the writer, and a commit is one append to the log (no rollback journal to write and delete), which is what per-chunk
  // commits need.
  const mode = String(db.pragma('journal_mode = WAL', { simple: true })).toLowerCase();
  if (mode !== 'wal' && !db.memory) {
    throw new Error(`SqliteTaskStore: ${db.name} could not switch to WAL (journal_mode is ${mode}); is it on a network file system?`);
  }
  db.pragma(`synchronous = ${synchronous}`);
  migrate(db);
}
