/**
 * SqliteTaskStore: the TaskStore in one SQLite file through better-sqlite3, for an agent one process
 * serves. A small row per task carries the version and the listing keys; the task's JSON and its
 * artifacts live in their own tables, so an artifact chunk appends one row (from the chunk alone:
 * the task is not serialized) and a read joins the chunks, folding them into one row as it goes.
 * better-sqlite3 is loaded only by openSqliteTaskStore (a dynamic import), never by the kit.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { z } from 'zod';
import { A2AOptionsError, optionsError, parseOptions } from '../../options.js';
import type { Artifact, Task, TaskArtifactUpdateEvent, TaskState } from '../../protocol/schemas.js';
import { isTerminal } from '../../engine/task-state.js';
import { FINISHED_INDEX_MIGRATION, finishedTaskRemover } from './sqlite-retention.js';
import { SqliteTraceContexts } from './sqlite-trace-context.js';
import {
  TaskExistsError,
  TaskNotFoundInStoreError,
  TaskVersionConflictError,
  decodePageToken,
  encodePageToken,
  type ListTasksQuery,
  type ListingKey,
  type TaskChange,
  type TaskPage,
  type TaskScope,
  type TaskStore,
  type VersionedTask,
} from '../../engine/seams/task-store.js';

type Database = BetterSqlite3.Database;

// ---------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------

/** How the store talks to the file; shared by the constructor and openSqliteTaskStore. */
export interface SqliteConnectionOptions {
  /**
   * How long a statement waits for a lock another connection holds (a backup, the sqlite3 shell)
   * before failing, in ms. better-sqlite3 waits synchronously, blocking the event loop meanwhile,
   * so this stays short. Default 1000.
   */
  readonly busyTimeoutMs?: number;
  /**
   * `PRAGMA synchronous`. 'NORMAL' (the default) in WAL mode loses nothing when the process dies
   * (a crash, SIGKILL); only a power loss or OS crash can drop the last commits, and the file stays
   * consistent. 'FULL' adds an fsync per commit (per artifact chunk) to survive those too.
   */
  readonly synchronous?: 'NORMAL' | 'FULL';
}

export interface SqliteTaskStoreOptions extends SqliteConnectionOptions {
  /** An open, writable better-sqlite3 Database. The store creates and migrates its `a2a_*` tables in it. */
  readonly database: Database;
  /** Whether close() closes `database` too. Default false: whoever opened it closes it. */
  readonly closeDatabase?: boolean;
}

export interface OpenSqliteTaskStoreOptions extends SqliteConnectionOptions {
  /** The database file (its parent directories are created), or ':memory:'. */
  readonly path: string;
}

const connectionShape = {
  busyTimeoutMs: z.number().int().min(0).max(60_000).default(1_000),
  synchronous: z.enum(['NORMAL', 'FULL']).default('NORMAL'),
};

const isDatabase = (value: unknown): value is Database =>
  typeof value === 'object' &&
  value !== null &&
  ['prepare', 'pragma', 'transaction', 'exec', 'close'].every((name) => typeof (value as Record<string, unknown>)[name] === 'function');

const storeSchema = z.strictObject({
  database: z.custom<Database>(isDatabase, { error: 'must be a better-sqlite3 Database (new Database(file))' }),
  closeDatabase: z.boolean().default(false),
  ...connectionShape,
});

const openSchema = z.strictObject({
  path: z.string({ error: "must be a file path or ':memory:'" }).min(1, { error: "must be a file path or ':memory:'" }),
  ...connectionShape,
});

// ---------------------------------------------------------------------------
// Schema
// ---------------------------------------------------------------------------

/**
 * Schema steps: step i takes `PRAGMA user_version` from i to i + 1. Append steps for later
 * versions; never edit a shipped one (files in the field already ran it).
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

// ---------------------------------------------------------------------------
// Rows and JSON
// ---------------------------------------------------------------------------

interface HeadRow {
  seq: number;
  tenant: string;
  owner: string;
  version: number;
  state: TaskState;
  context_id: string | null;
  status_ts: string;
  artifact_count: number;
}

interface StoredArtifact {
  position: number;
  head: string;
  part_count: number;
  chunks: number;
}

/** An artifact update as text, made when update() is called (the clone on the way in). */
interface ArtifactWrite {
  readonly artifactId: string;
  readonly append: boolean;
  /** The artifact's JSON with "parts": [] standing in for its parts. */
  readonly head: string;
  /** Whether it carries fields besides artifactId and parts (an append then rewrites the stored head). */
  readonly hasFields: boolean;
  readonly parts: string;
  readonly partCount: number;
  /**
   * What the task passed says the result is, as far as a few numbers tell (the task is not
   * serialized): a change that does not fit the stored task falls back to writing the whole task.
   */
  readonly fit: { readonly state: TaskState; readonly timestamp: string; readonly contextId: string | null; readonly count: number; readonly index: number; readonly partsAfter: number };
  /** The task passed, for that fallback only (a caller that lies about the change). */
  readonly task: Task;
}

/** A status update as text, made when update() is called. */
interface StatusWrite {
  readonly body: string;
  readonly columns: ReturnType<typeof headColumns>;
  /** The task passed, for the fallback of a change that does not fit. */
  readonly task: Task;
}

/** An artifact whose chunks a read joined: written back as one chunk when there were many. */
interface JoinedArtifact {
  readonly position: number;
  readonly chunks: number;
  readonly partCount: number;
  readonly parts: string;
}

/** Chunks an artifact gathers before a read folds them into one row. */
const COMPACT_AT = 8;

interface ArtifactText {
  readonly position: number;
  readonly head: string;
  /** The artifact's parts as one JSON array text. */
  readonly parts: string;
  /** How many chunk rows it was joined from. */
  readonly chunks: number;
}

interface PendingWrite {
  readonly run: () => number;
  readonly resolve: (version: number) => void;
  readonly reject: (error: unknown) => void;
}

type WriteOutcome = { readonly ok: true; readonly version: number } | { readonly ok: false; readonly error: unknown };

const UNFINISHED_STATES = "('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')";

// Stand-ins keep the key order, so a task reads back with its keys where they were.
/**
 * A copy of what a caller passed to a write: the write commits later in the event-loop turn
 * (group commit), and the store must keep the task as it was at the call (the contract: stores
 * copy on the way in). JSON, since that is what the store keeps anyway.
 */
const snapshot = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

const bodyJson = (task: Task): string => JSON.stringify(task.artifacts === undefined ? task : { ...task, artifacts: [] });
const headJson = (artifact: Artifact): string => JSON.stringify({ ...artifact, parts: [] });

/** Whether the task passed is the stored task with the update folded in, as far as its numbers tell. */
function fits(head: HeadRow, stored: StoredArtifact | undefined, write: ArtifactWrite): boolean {
  const { fit } = write;
  if (fit.state !== head.state || fit.timestamp !== head.status_ts || fit.contextId !== head.context_id) return false;
  if (!stored) return fit.count === head.artifact_count + 1 && fit.index === head.artifact_count && fit.partsAfter === write.partCount;
  if (fit.count !== head.artifact_count || fit.index !== stored.position) return false;
  return fit.partsAfter === (write.append ? stored.part_count : 0) + write.partCount;
}

/** An artifact update's texts, made at the call. */
function artifactWrite(update: TaskArtifactUpdateEvent, task: Task): ArtifactWrite {
  const artifact = update.artifact;
  let hasFields = false;
  for (const key in artifact) if (key !== 'artifactId' && key !== 'parts') hasFields = true;
  const artifacts = task.artifacts ?? [];
  const index = artifacts.findIndex((a) => a.artifactId === artifact.artifactId);
  return {
    fit: {
      state: task.status.state,
      timestamp: task.status.timestamp ?? '',
      contextId: task.contextId ?? null,
      count: artifacts.length,
      index,
      partsAfter: index < 0 ? -1 : artifacts[index].parts.length,
    },
    task,
    artifactId: artifact.artifactId,
    append: update.append === true,
    head: headJson(artifact),
    hasFields,
    parts: JSON.stringify(artifact.parts),
    partCount: artifact.parts.length,
  };
}

/** The listing and version columns of a task. */
const headColumns = (task: Task) => ({
  state: task.status.state,
  context_id: task.contextId ?? null,
  status_ts: task.status.timestamp ?? '',
  artifact_count: task.artifacts?.length ?? 0,
});

/** Chunk texts ('[a,b]', '[c]') joined into the one array text JSON.stringify gives ('[a,b,c]'). */
function joinChunks(chunks: readonly string[]): string {
  if (chunks.length === 1) return chunks[0];
  const inner = chunks.map((chunk) => chunk.slice(1, -1)).filter((items) => items !== '');
  return `[${inner.join(',')}]`;
}

// ---------------------------------------------------------------------------
// The store
// ---------------------------------------------------------------------------

/** Which filters a listing has: each combination is its own statement, so each uses an index. */
interface ListShape {
  readonly contextId: boolean;
  readonly status: boolean;
  readonly after: boolean;
  readonly cursor: boolean;
}

interface ListStatements {
  readonly page: BetterSqlite3.Statement<[Record<string, unknown>], { seq: number; artifact_count: number }>;
  readonly count: BetterSqlite3.Statement<[Record<string, unknown>], { n: number }>;
}

/**
 * The SQL of a listing: the page (keyset after the cursor) or the count of every match. Text
 * compares bytewise (UTF-8), so pages follow one consistent order; it matches compareForListing's
 * for every id but those mixing characters above U+FFFF with ones in U+E000-U+FFFF.
 */
function listingSql(shape: ListShape, kind: 'page' | 'count'): string {
  const where = ['tenant = @tenant', 'owner = @owner'];
  if (shape.contextId) where.push('context_id = @contextId');
  if (shape.status) where.push('state = @status');
  if (shape.after) where.push('status_ts >= @after');
  if (kind === 'page' && shape.cursor) {
    // The first term is an index range; the second only skips the cursor's own timestamp's ids.
    where.push('status_ts <= @cursorTs', '(status_ts < @cursorTs OR id > @cursorId)');
  }
  const filter = where.join(' AND ');
  return kind === 'count'
    ? `SELECT count(*) AS n FROM a2a_tasks WHERE ${filter}`
    : `SELECT seq, artifact_count FROM a2a_tasks WHERE ${filter} ORDER BY status_ts DESC, id ASC LIMIT @limit`;
}

export class SqliteTaskStore implements TaskStore {
  readonly #db: Database;
  #traces: SqliteTraceContexts | undefined;
  readonly #closeDatabase: boolean;
  #closed = false;
  readonly #s: ReturnType<typeof prepareStatements>;
  readonly #pages = new Map<string, ListStatements['page']>();
  readonly #counts = new Map<string, ListStatements['count']>();
  readonly #createTx: (scope: TaskScope, task: Task) => number;
  readonly #updateTx: (scope: TaskScope, task: Task, expectedVersion: number, event: string | undefined) => number;
  readonly #appendTx: (scope: TaskScope, taskId: string, expectedVersion: number, write: ArtifactWrite, event: string | undefined) => number;
  readonly #statusTx: (scope: TaskScope, taskId: string, expectedVersion: number, write: StatusWrite, event: string | undefined) => number;
  readonly #compactTx: (seq: number, version: number, joined: readonly JoinedArtifact[]) => void;
  readonly #readTx: <T>(read: () => T) => T;
  readonly #removeFinishedTx: (finishedBefore: string, limit: number) => number;
  readonly #batchTx: (batch: readonly PendingWrite[], outcomes: WriteOutcome[]) => void;
  /** Writes called and not yet committed: they commit together (see #enqueue). */
  #queue: PendingWrite[] = [];
  #flushScheduled = false;

  constructor(options: SqliteTaskStoreOptions) {
    const { database: db, closeDatabase, busyTimeoutMs, synchronous } = parseOptions('SqliteTaskStore', storeSchema, options);
    if (db.open === false) throw optionsError('SqliteTaskStore', 'database', 'is closed');
    if (db.readonly === true) throw optionsError('SqliteTaskStore', 'database', 'is read-only; the store writes to it');
    this.#db = db;
    this.#closeDatabase = closeDatabase;

    // Before WAL: switching the journal mode takes a lock another connection may hold briefly.
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // WAL: readers never block the writer, and a commit is one append to the log (no rollback
    // journal to write and delete), which is what per-chunk commits need.
    const mode = String(db.pragma('journal_mode = WAL', { simple: true })).toLowerCase();
    if (mode !== 'wal' && !db.memory) {
      throw new Error(`SqliteTaskStore: ${db.name} could not switch to WAL (journal_mode is ${mode}); is it on a network file system?`);
    }
    db.pragma(`synchronous = ${synchronous}`);
    migrate(db);

    this.#s = prepareStatements(db);
    this.#createTx = db.transaction((scope: TaskScope, task: Task) => this.#create(scope, task)).immediate;
    this.#updateTx = db.transaction((scope: TaskScope, task: Task, expectedVersion: number, event: string | undefined) =>
      this.#update(scope, task, expectedVersion, event),
    ).immediate;
    this.#appendTx = db.transaction(
      (scope: TaskScope, taskId: string, expectedVersion: number, write: ArtifactWrite, event: string | undefined) =>
        this.#writeArtifactUpdate(scope, taskId, expectedVersion, write, event),
    ).immediate;
    this.#statusTx = db.transaction((scope: TaskScope, taskId: string, expectedVersion: number, write: StatusWrite, event: string | undefined) =>
      this.#writeStatusUpdate(scope, taskId, expectedVersion, write, event),
    ).immediate;
    this.#removeFinishedTx = finishedTaskRemover(db);
    this.#compactTx = db.transaction((seq: number, version: number, joined: readonly JoinedArtifact[]) => this.#compact(seq, version, joined)).immediate;
    // Several reads see one snapshot even when another connection writes in between.
    const read = db.transaction((run: () => unknown) => run());
    this.#readTx = <T>(run: () => T) => read.deferred(run) as T;
    // Each write in its own savepoint (the nested transactions above), so one refused write
    // undoes only itself; anything that ends the whole transaction fails the batch.
    this.#batchTx = db.transaction((batch: readonly PendingWrite[], outcomes: WriteOutcome[]) => {
      for (const write of batch) {
        try {
          outcomes.push({ ok: true, version: write.run() });
        } catch (error) {
          if (!db.inTransaction) throw error;
          outcomes.push({ ok: false, error });
        }
      }
    }).immediate;
  }

  async get(scope: TaskScope, taskId: string): Promise<VersionedTask | undefined> {
    this.#assertOpen();
    this.flushWrites();
    // One statement is its own snapshot: a task without artifacts needs no BEGIN and COMMIT.
    const head = this.#s.getInScope.get(taskId, scope.tenant, scope.owner);
    if (!head) return undefined;
    if (head.artifact_count === 0) return { task: this.#load(head.seq, head.body, 0), version: head.version };
    const joined: JoinedArtifact[] = [];
    const read = this.#readTx(() => {
      const row = this.#s.getInScope.get(taskId, scope.tenant, scope.owner);
      return row ? { seq: row.seq, task: this.#load(row.seq, row.body, row.artifact_count, joined), version: row.version } : undefined;
    });
    if (!read) return undefined;
    // The chunks were joined anyway: keep them joined, so the next read reads one row per artifact.
    if (joined.length > 0) this.#compactTx(read.seq, read.version, joined);
    return { task: read.task, version: read.version };
  }

  async create(scope: TaskScope, task: Task): Promise<number> {
    this.#assertOpen();
    const stored = snapshot(task); // the task as it is now, whatever the caller does before the commit
    return this.#enqueue(() => this.#createTx(scope, stored));
  }

  async update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): Promise<number> {
    this.#assertOpen();
    // Text now: what is stored is the change as it was at the call.
    const event = change?.event === undefined ? undefined : JSON.stringify(change.event);
    if (change?.kind === 'artifact') {
      // Only the update is written: `task` (which holds every earlier chunk too) is not serialized.
      const write = artifactWrite(change.update, task);
      const taskId = task.id;
      return this.#enqueue(() => this.#appendTx(scope, taskId, expectedVersion, write, event));
    }
    if (change?.kind === 'status') {
      // The body (the task without its artifacts) and the listing columns: the artifacts are as stored.
      const write: StatusWrite = { body: bodyJson(task), columns: headColumns(task), task };
      const taskId = task.id;
      return this.#enqueue(() => this.#statusTx(scope, taskId, expectedVersion, write, event));
    }
    const stored = snapshot(task);
    return this.#enqueue(() => this.#updateTx(scope, stored, expectedVersion, event));
  }

  /**
   * Commits the writes called so far now instead of at the end of this event-loop turn. Reads
   * call it first, so a caller reads its own writes even when it did not await them; the push
   * stores too, before their own transactions on this connection.
   */
  flushWrites(): void {
    if (this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    if (batch.length === 1) {
      const [write] = batch;
      try {
        write.resolve(write.run());
      } catch (error) {
        write.reject(error);
      }
      return;
    }
    const outcomes: WriteOutcome[] = [];
    try {
      this.#batchTx(batch, outcomes);
    } catch (error) {
      // Rolled back (or never begun): none of them is stored.
      for (const write of batch) write.reject(error);
      return;
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) write.resolve(outcome.version);
      else write.reject(outcome.error);
    });
  }

  /**
   * Group commit: a commit costs far more than its statements (a WAL frame per dirty page, and
   * the hot index pages are the same for every task), so the writes called in one event-loop
   * turn commit in one transaction, each still compare-and-set in its own savepoint. A promise
   * settles only after its commit, so durability is unchanged; create() and update() copy the
   * task when called, so what is stored is the task as it was then.
   */
  #enqueue(run: () => number): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.#queue.push({ run, resolve, reject });
      if (this.#flushScheduled) return;
      this.#flushScheduled = true;
      setImmediate(() => {
        this.#flushScheduled = false;
        this.flushWrites();
      });
    });
  }

  async list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage> {
    this.#assertOpen();
    this.flushWrites();
    const cursor: ListingKey | undefined = query.pageToken ? decodePageToken(query.pageToken) : undefined;
    const shape: ListShape = {
      contextId: query.contextId !== undefined,
      status: query.status !== undefined,
      after: query.statusTimestampAfter !== undefined,
      cursor: cursor !== undefined,
    };
    const { page, count } = this.#listStatements(shape);
    const params: Record<string, unknown> = { tenant: scope.tenant, owner: scope.owner };
    if (shape.contextId) params.contextId = query.contextId;
    if (shape.status) params.status = query.status;
    if (shape.after) params.after = query.statusTimestampAfter;
    const countParams = { ...params };
    if (cursor) Object.assign(params, { cursorTs: cursor.timestamp, cursorId: cursor.id });
    // One row past the page tells whether another page follows.
    params.limit = query.pageSize + 1;

    return this.#readTx(() => {
      const totalSize = count.get(countParams)?.n ?? 0;
      const tasks: Task[] = [];
      let more = false;
      // iterate(), not all(): arrays better-sqlite3 builds belong to Node's main realm, which
      // deepStrictEqual under a test runner's VM context tells apart from its own.
      for (const row of page.iterate(params)) {
        if (tasks.length === query.pageSize) more = true;
        else tasks.push(this.#load(row.seq, this.#s.body.get(row.seq)!.body, row.artifact_count));
      }
      return { tasks, nextPageToken: more ? encodePageToken(tasks[tasks.length - 1]) : '', totalSize };
    });
  }

  /** Every SUBMITTED or WORKING task, in any scope: their turns died with the previous process. */
  async findUnfinished(): Promise<Array<{ readonly scope: TaskScope; readonly taskId: string }>> {
    this.#assertOpen();
    this.flushWrites();
    const found: Array<{ readonly scope: TaskScope; readonly taskId: string }> = [];
    for (const row of this.#s.unfinished.iterate()) found.push({ scope: { tenant: row.tenant, owner: row.owner }, taskId: row.id });
    return found;
  }

  /**
   * Retention: up to `limit` finished tasks older than the cutoff, with their rows and their push
   * configs and logged events, in one transaction (see sqlite-retention.ts).
   */
  async removeFinished(finishedBefore: string, limit: number): Promise<number> {
    this.#assertOpen();
    this.flushWrites();
    return limit > 0 ? this.#removeFinishedTx(finishedBefore, limit) : 0;
  }

  /** Tracing: the trace context the task was started in, kept beside it (see sqlite-trace-context.ts). */
  async saveTraceContext(scope: TaskScope, taskId: string, traceparent: string): Promise<void> {
    this.#assertOpen();
    this.flushWrites();
    (this.#traces ??= new SqliteTraceContexts(this.#db)).save(scope, taskId, traceparent);
  }

  async loadTraceContext(scope: TaskScope, taskId: string): Promise<string | undefined> {
    this.#assertOpen();
    this.flushWrites();
    return (this.#traces ??= new SqliteTraceContexts(this.#db)).load(scope, taskId);
  }

  /** Stops the store (later calls reject); closes the database when it owns it (closeDatabase). */
  async close(): Promise<void> {
    if (this.#closed) return;
    // Writes called before close() are kept.
    this.flushWrites();
    this.#closed = true;
    if (this.#closeDatabase && this.#db.open) {
      // SQLite's advice for long-lived connections: refresh planner statistics on the way out.
      this.#db.pragma('optimize');
      this.#db.close();
    }
  }

  /** The connection, for the push stores that share the file (sqlitePushStores). */
  get database(): Database {
    return this.#db;
  }

  /** Whether close() was called. */
  get closed(): boolean {
    return this.#closed;
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('SqliteTaskStore is closed');
  }

  // --- writes (each inside an IMMEDIATE transaction) ------------------------------------------

  #create(scope: TaskScope, task: Task): number {
    const inserted = this.#s.insertTask.run({ id: task.id, tenant: scope.tenant, owner: scope.owner, ...headColumns(task) });
    if (inserted.changes === 0) throw new TaskExistsError(task.id);
    const seq = Number(inserted.lastInsertRowid);
    this.#s.insertBody.run(seq, bodyJson(task));
    (task.artifacts ?? []).forEach((artifact, position) => this.#writeArtifact(seq, position, artifact));
    // A task is created by its `{ task }` event; a config may exist already (stored ahead by id).
    this.#logForPush(scope, task.id, 1, () => JSON.stringify({ task }));
    return 1;
  }

  /** Keeps the event for push delivery when the task has configs (nothing is written otherwise). */
  #logForPush(scope: TaskScope, taskId: string, version: number, event: string | (() => string) | undefined): void {
    if (event === undefined || this.#s.hasPushConfigs.get(taskId, scope.tenant, scope.owner) === undefined) return;
    this.#s.logPushEvent.run(taskId, version, typeof event === 'string' ? event : event());
  }

  /** The stored head of a task `scope` may write at `expectedVersion`; throws the contract's errors otherwise. */
  #writableHead(scope: TaskScope, taskId: string, expectedVersion: number): HeadRow {
    const head = this.#s.headById.get(taskId);
    if (!head || head.tenant !== scope.tenant || head.owner !== scope.owner) throw new TaskNotFoundInStoreError(taskId);
    if (head.version !== expectedVersion || isTerminal(head.state)) {
      throw new TaskVersionConflictError(taskId, expectedVersion, head.version);
    }
    return head;
  }

  #update(scope: TaskScope, task: Task, expectedVersion: number, event: string | undefined): number {
    const head = this.#writableHead(scope, task.id, expectedVersion);
    const version = expectedVersion + 1;
    this.#replace(head, task);
    this.#s.setHead.run({ seq: head.seq, version, ...headColumns(task) });
    this.#logForPush(scope, task.id, version, event);
    return version;
  }

  /**
   * An artifact event, from the update alone: a new artifact row, one appended chunk row, or the
   * replaced artifact. The indexed listing columns do not change; only the version and the count.
   */
  #writeArtifactUpdate(scope: TaskScope, taskId: string, expectedVersion: number, write: ArtifactWrite, event: string | undefined): number {
    const head = this.#writableHead(scope, taskId, expectedVersion);
    const version = expectedVersion + 1;
    const seq = head.seq;
    const stored = this.#s.artifactById.get(seq, write.artifactId);
    if (!fits(head, stored, write)) return this.#update(scope, snapshot(write.task), expectedVersion, event);
    let count = head.artifact_count;
    if (!stored) {
      // A new artifact goes last.
      this.#s.upsertArtifact.run(seq, count, write.artifactId, write.head, write.partCount, 1);
      this.#s.insertChunk.run(seq, count, 0, write.parts);
      count++;
    } else if (!write.append) {
      this.#s.deleteChunksAt.run(seq, stored.position);
      this.#s.upsertArtifact.run(seq, stored.position, write.artifactId, write.head, write.partCount, 1);
      this.#s.insertChunk.run(seq, stored.position, 0, write.parts);
    } else {
      this.#s.insertChunk.run(seq, stored.position, stored.chunks, write.parts);
      // A chunk with a name, description or metadata replaces those of the stored head.
      const headText = write.hasFields ? JSON.stringify({ ...JSON.parse(stored.head), ...JSON.parse(write.head), parts: [] }) : stored.head;
      this.#s.growArtifact.run(headText, stored.part_count + write.partCount, stored.chunks + 1, seq, stored.position);
    }
    this.#s.setVersion.run(version, count, seq);
    this.#logForPush(scope, taskId, version, event);
    return version;
  }

  /** A status event: the body and the listing columns; the artifact rows stay as they are. */
  #writeStatusUpdate(scope: TaskScope, taskId: string, expectedVersion: number, write: StatusWrite, event: string | undefined): number {
    const head = this.#writableHead(scope, taskId, expectedVersion);
    // A task passed with other artifacts than stored does not fit a status change: write it whole.
    if (write.columns.artifact_count !== head.artifact_count) return this.#update(scope, snapshot(write.task), expectedVersion, event);
    const version = expectedVersion + 1;
    this.#s.setBody.run(write.body, head.seq);
    this.#s.setHead.run({ seq: head.seq, version, ...write.columns });
    this.#logForPush(scope, taskId, version, event);
    return version;
  }

  /** Writes back artifacts a read joined, as one chunk each, unless the task was written meanwhile. */
  #compact(seq: number, version: number, joined: readonly JoinedArtifact[]): void {
    if (this.#s.versionOf.get(seq)?.version !== version) return;
    for (const artifact of joined) {
      this.#s.deleteChunksAt.run(seq, artifact.position);
      this.#s.insertChunk.run(seq, artifact.position, 0, artifact.parts);
      this.#s.setChunks.run(1, seq, artifact.position);
    }
  }

  /** The whole task: its body, and each artifact that differs from the stored one. */
  #replace(head: HeadRow, task: Task): void {
    this.#s.setBody.run(bodyJson(task), head.seq);
    const artifacts = task.artifacts ?? [];
    // A status update repeats the artifacts unchanged: compare texts, so they are not rewritten.
    const stored = head.artifact_count > 0 ? this.#artifactTexts(head.seq) : [];
    artifacts.forEach((artifact, position) => {
      const was = stored[position];
      if (was && was.head === headJson(artifact) && was.parts === JSON.stringify(artifact.parts)) return;
      if (was) this.#s.deleteChunksAt.run(head.seq, position);
      this.#writeArtifact(head.seq, position, artifact);
    });
    if (stored.length > artifacts.length) {
      this.#s.deleteArtifactsFrom.run(head.seq, artifacts.length);
      this.#s.deleteChunksFrom.run(head.seq, artifacts.length);
    }
  }

  /** An artifact as one chunk (its position's old chunks are already gone). */
  #writeArtifact(seq: number, position: number, artifact: Artifact): void {
    this.#s.upsertArtifact.run(seq, position, artifact.artifactId, headJson(artifact), artifact.parts.length, 1);
    this.#s.insertChunk.run(seq, position, 0, JSON.stringify(artifact.parts));
  }

  // --- reads ---------------------------------------------------------------------------------

  /** A fresh Task from its rows: the caller owns every object. `joined` collects artifacts worth compacting. */
  #load(seq: number, body: string, artifactCount: number, joined?: JoinedArtifact[]): Task {
    const task = JSON.parse(body) as Task;
    if (artifactCount > 0) {
      task.artifacts = this.#artifactTexts(seq).map(({ position, head, parts, chunks }) => {
        const artifact = JSON.parse(head) as Artifact;
        artifact.parts = JSON.parse(parts) as Artifact['parts'];
        if (joined && chunks >= COMPACT_AT) joined.push({ position, chunks, partCount: artifact.parts.length, parts });
        return artifact;
      });
    }
    return task;
  }

  #artifactTexts(seq: number): ArtifactText[] {
    // Rows come ordered by position, then chunk: group them per artifact.
    const grouped: Array<{ position: number; head: string; chunks: string[] }> = [];
    for (const row of this.#s.artifactChunks.iterate(seq)) {
      const last = grouped[grouped.length - 1];
      if (last?.position === row.position) last.chunks.push(row.parts);
      else grouped.push({ position: row.position, head: row.head, chunks: [row.parts] });
    }
    return grouped.map(({ position, head, chunks }) => ({ position, head, parts: joinChunks(chunks), chunks: chunks.length }));
  }

  #listStatements(shape: ListShape): ListStatements {
    // The count ignores the cursor: totalSize is every match, whichever page is asked for.
    const filters = `${+shape.contextId}${+shape.status}${+shape.after}`;
    let page = this.#pages.get(`${filters}${+shape.cursor}`);
    if (!page) this.#pages.set(`${filters}${+shape.cursor}`, (page = typed(this.#db.prepare(listingSql(shape, 'page')) as ListStatements['page'])));
    let count = this.#counts.get(filters);
    if (!count) this.#counts.set(filters, (count = typed(this.#db.prepare(listingSql(shape, 'count')) as ListStatements['count'])));
    return { page, count };
  }
}

/** Numbers as numbers, even when the user's database hands out BigInts by default. */
function typed<P extends unknown[], R>(statement: BetterSqlite3.Statement<P, R>): BetterSqlite3.Statement<P, R> {
  return statement.safeIntegers(false);
}

function prepareStatements(db: Database) {
  const prepare = <P extends unknown[], R = unknown>(sql: string) => typed(db.prepare(sql) as BetterSqlite3.Statement<P, R>);
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
    insertChunk: prepare<[number, number, number, string]>(
      'INSERT INTO a2a_artifact_chunks (task, position, chunk, parts) VALUES (?, ?, ?, ?)',
    ),
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

// ---------------------------------------------------------------------------
// Opening a file
// ---------------------------------------------------------------------------

type DatabaseConstructor = typeof BetterSqlite3;

/** better-sqlite3, loaded on first use so that importing the kit never needs it. */
async function loadBetterSqlite3(): Promise<DatabaseConstructor> {
  try {
    const loaded = (await import('better-sqlite3')) as unknown as { default?: DatabaseConstructor } & DatabaseConstructor;
    return loaded.default ?? loaded;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new Error('openSqliteTaskStore needs the better-sqlite3 package: npm install better-sqlite3@12', { cause: error });
    }
    throw error;
  }
}

/**
 * Opens (or creates) the SQLite file at `path`, creating its parent directories, and returns a
 * store that owns the connection: its close() closes the file. One process per file.
 */
export async function openSqliteTaskStore(options: OpenSqliteTaskStoreOptions): Promise<SqliteTaskStore> {
  const { path, ...connection } = parseOptions('openSqliteTaskStore', openSchema, options);
  const Database = await loadBetterSqlite3();
  const inMemory = path === ':memory:';
  if (!inMemory) await mkdir(dirname(resolve(path)), { recursive: true });
  let database: Database;
  try {
    database = new Database(path, { timeout: connection.busyTimeoutMs });
  } catch (error) {
    throw new Error(`openSqliteTaskStore: cannot open ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return new SqliteTaskStore({ database, closeDatabase: true, ...connection });
  } catch (error) {
    database.close();
    // Options were checked above; anything here is about the file.
    if (error instanceof A2AOptionsError) throw error;
    throw new Error(`openSqliteTaskStore: cannot use ${path}: ${(error as Error).message}`, { cause: error });
  }
}
