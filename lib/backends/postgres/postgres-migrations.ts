/**
 * The PostgreSQL schema of the backend and its migrations: steps applied in order on open, their count kept in a version table. Replicas starting at
 * once serialise on a transaction-scoped advisory lock, so each step runs once; a database newer than this code is refused.
 */
import { quoteIdentifier, type PostgresDatabase } from './postgres-client.js';
import { finishedIndexMigration } from './postgres-retention.js';
import { z } from 'zod';
import { parseOptions } from '../../options.js';
import { connectionShape, databaseOf, type PostgresConnectionOptions } from './postgres-options.js';

/**
 * Each step is a list of statements for table name `t(name)`. Never edit a released step: add one. Text compared for ListTasks order is COLLATE "C"
 * (byte order), the order the engine's string comparison gives for the timestamps and ids it writes.
 */
const MIGRATIONS: ReadonlyArray<(t: (name: string) => string) => string[]> = [
  (t) => [
    // A task: its listing columns, and its JSON without artifact parts (stand-in "artifacts": []).
    `CREATE TABLE ${t('tasks')} (
      id text COLLATE "C" PRIMARY KEY,
      tenant text NOT NULL,
      owner text NOT NULL,
      version integer NOT NULL,
      state text NOT NULL,
      terminal boolean NOT NULL,
      context_id text,
      status_ts text COLLATE "C" NOT NULL,
      body text NOT NULL,
      artifact_count integer NOT NULL
    )`,
    `CREATE INDEX ON ${t('tasks')} (tenant, owner, status_ts DESC, id)`,
    `CREATE INDEX ON ${t('tasks')} (tenant, owner, context_id, status_ts DESC, id)`,
    `CREATE INDEX ON ${t('tasks')} (tenant, owner, state, status_ts DESC, id)`,
    // One row per artifact in task order: its JSON with "parts": [] standing in for the parts.
    `CREATE TABLE ${t('artifacts')} (
      task_id text COLLATE "C" NOT NULL,
      position integer NOT NULL,
      artifact_id text NOT NULL,
      head text NOT NULL,
      part_count integer NOT NULL,
      chunks integer NOT NULL,
      PRIMARY KEY (task_id, position)
    )`,
    `CREATE INDEX ON ${t('artifacts')} (task_id, artifact_id)`,
    // The parts of an artifact as appended: a JSON array per chunk, concatenated on read.
    `CREATE TABLE ${t('artifact_chunks')} (
      task_id text COLLATE "C" NOT NULL,
      position integer NOT NULL,
      chunk integer NOT NULL,
      parts text NOT NULL,
      PRIMARY KEY (task_id, position, chunk)
    )`,
    // The committed events of each task (the bus's log): SSE resumes and push deliveries read it.
    `CREATE TABLE ${t('events')} (
      task_key text COLLATE "C" NOT NULL,
      version integer NOT NULL,
      payload text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (task_key, version)
    )`,
    `CREATE INDEX ON ${t('events')} (created_at)`,
    // Task leases: who runs a task's turns, until when (database time).
    `CREATE TABLE ${t('leases')} (
      key text COLLATE "C" PRIMARY KEY,
      tenant text NOT NULL,
      owner text NOT NULL,
      task_id text NOT NULL,
      holder text NOT NULL,
      expires_at timestamptz NOT NULL
    )`,
    `CREATE INDEX ON ${t('leases')} (expires_at)`,
    // Push configs, scoped like tasks; \`delivered\` is the version delivered so far (the cursor).
    `CREATE TABLE ${t('push_configs')} (
      task_key text COLLATE "C" NOT NULL,
      id text COLLATE "C" NOT NULL,
      tenant text NOT NULL,
      owner text NOT NULL,
      task_id text NOT NULL,
      position bigserial NOT NULL,
      config text NOT NULL,
      failing boolean NOT NULL,
      delivered integer NOT NULL,
      attempts integer NOT NULL,
      PRIMARY KEY (task_key, id)
    )`,
    // Which replica delivers a task's push events, until when.
    `CREATE TABLE ${t('push_claims')} (
      task_key text COLLATE "C" PRIMARY KEY,
      holder text NOT NULL,
      expires_at timestamptz NOT NULL
    )`,
  ],
  // Retention (removeFinished): the oldest finished tasks of every scope.
  finishedIndexMigration,
  // Tracing: the traceparent of the request that started the task, beside it (never in its body).
  (t) => [`ALTER TABLE ${t('tasks')} ADD COLUMN IF NOT EXISTS trace_context text`],
  // The lease sweep's stranded tasks (mid-turn, no lease row): only those are in it.
  (t) => [`CREATE INDEX IF NOT EXISTS a2a_tasks_mid_turn ON ${t('tasks')} (id) WHERE ${MID_TURN}`],
];

/** The condition of a task mid-turn (SUBMITTED or WORKING), as the partial index states it. */
export const MID_TURN = "state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')";

/** The schema version this code writes. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** Creates the schema and tables, or brings them up to date. */
export async function migrate(db: PostgresDatabase): Promise<void> {
  const t = (name: string) => db.table(name);
  await db.transaction(async (query) => {
    // Held until COMMIT: a second replica starting now waits here, then finds the work done.
    await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`a2a-express-kit migrations ${db.schema}`]);
    // Created only when missing: CREATE SCHEMA IF NOT EXISTS needs the CREATE right even then.
    if ((await query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [db.schema])).length === 0) {
      await query(`CREATE SCHEMA ${quoteIdentifier(db.schema)}`);
    }
    await query(`CREATE TABLE IF NOT EXISTS ${t('schema_version')} (version integer NOT NULL)`);
    const [row] = await query<{ version: number }>(`SELECT version FROM ${t('schema_version')}`);
    const current = row?.version ?? 0;
    if (current > POSTGRES_SCHEMA_VERSION) {
      throw new Error(
        `createPostgresBackend: schema "${db.schema}" has a2a schema version ${current}, newer than this a2a-express-kit knows (${POSTGRES_SCHEMA_VERSION}); upgrade a2a-express-kit`,
      );
    }
    if (current === POSTGRES_SCHEMA_VERSION) return;
    for (let step = current; step < POSTGRES_SCHEMA_VERSION; step++) {
      for (const statement of MIGRATIONS[step](t)) await query(statement);
    }
    if (row) await query(`UPDATE ${t('schema_version')} SET version = $1`, [POSTGRES_SCHEMA_VERSION]);
    else await query(`INSERT INTO ${t('schema_version')} (version) VALUES ($1)`, [POSTGRES_SCHEMA_VERSION]);
  }, Infinity); // bounded by the caller (connectTimeoutMs), each statement by queryTimeoutMs
}

const optionsSchema = z.strictObject(connectionShape);

/**
 * Brings the schema's tables to this version of the kit (createPostgresBackend() does it on open). Safe when several replicas run it at once: they
 * wait for each other on an advisory lock.
 */
export async function migratePostgres(options: PostgresConnectionOptions): Promise<void> {
  await migrate(databaseOf(parseOptions('migratePostgres', optionsSchema, options)));
}
