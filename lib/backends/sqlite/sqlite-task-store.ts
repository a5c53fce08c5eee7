/** SqliteTaskStore: the TaskStore in one SQLite file through better-sqlite3, for an agent one process serves. */
import type BetterSqlite3 from 'better-sqlite3';
import { optionsError } from '../../options.js';
import type { Task } from '../../protocol/schemas.js';
import type { ListTasksQuery, TaskChange, TaskPage, TaskScope, TaskStore, VersionedTask } from '../../engine/seams/task-store.js';
import { finishedTaskRemover } from './sqlite-retention.js';
import { parseStoreOptions, type SqliteTaskStoreOptions } from './sqlite-options.js';
import { prepareConnection } from './sqlite-migrations.js';
import { lockDatabaseFile } from './sqlite-file-lock.js';
import { prepareStatements, type TaskStatements } from './sqlite-statements.js';
import { artifactWrite, bodyJson, headColumns, snapshot, type JoinedArtifact, type StatusWrite } from './sqlite-task-rows.js';
import { compact, loadTask } from './sqlite-task-reads.js';
import { SqliteTaskWrites } from './sqlite-task-writes.js';
import { SqliteTaskListing } from './sqlite-task-listing.js';
import { GroupCommit } from './sqlite-group-commit.js';
import { SqliteTraceContexts } from './sqlite-trace-context.js';

type Database = BetterSqlite3.Database;

/**
 * A small row per task carries the version and the listing keys; the task's JSON and its artifacts live in their own tables, so an artifact chunk
 * appends one row (from the chunk alone: the task is not serialized) and a read joins the chunks, folding them into one row as it goes. This class is
 * the seam's surface; the schema, statements, writes, reads, listing and group commit each live in a sqlite-*.ts file of their own.
 */
export class SqliteTaskStore implements TaskStore {
  readonly #db: Database;
  #traces: SqliteTraceContexts | undefined;
  readonly #closeDatabase: boolean;
  readonly #unlock: () => void;
  #closed = false;
  readonly #s: TaskStatements;
  readonly #writes: SqliteTaskWrites;
  readonly #listing: SqliteTaskListing;
  readonly #commits: GroupCommit;
  readonly #compactTx: (seq: number, version: number, joined: readonly JoinedArtifact[]) => void;
  readonly #readTx: <T>(read: () => T) => T;
  readonly #removeFinishedTx: (finishedBefore: string, limit: number) => number;

  constructor(options: SqliteTaskStoreOptions) {
    const { database: db, closeDatabase, busyTimeoutMs, synchronous } = parseStoreOptions(options);
    if (db.open === false) throw optionsError('SqliteTaskStore', 'database', 'is closed');
    if (db.readonly === true) throw optionsError('SqliteTaskStore', 'database', 'is read-only; the store writes to it');
    this.#db = db;
    this.#closeDatabase = closeDatabase;
    this.#unlock = lockDatabaseFile(db);
    try {
      prepareConnection(db, busyTimeoutMs, synchronous);
    } catch (error) {
      this.#unlock();
      throw error;
    }

    const s = (this.#s = prepareStatements(db));
    this.#writes = new SqliteTaskWrites(db, s);
    this.#commits = new GroupCommit(db);
    this.#removeFinishedTx = finishedTaskRemover(db);
    this.#compactTx = db.transaction((seq: number, version: number, joined: readonly JoinedArtifact[]) => compact(s, seq, version, joined)).immediate;
    // Several reads see one snapshot even when another connection writes in between.
    const read = db.transaction((run: () => unknown) => run());
    this.#readTx = <T>(run: () => T) => read.deferred(run) as T;
    this.#listing = new SqliteTaskListing(db, s, this.#readTx);
  }

  async get(scope: TaskScope, taskId: string): Promise<VersionedTask | undefined> {
    this.#assertOpen();
    this.flushWrites();
    // One statement is its own snapshot: a task without artifacts needs no BEGIN and COMMIT.
    const head = this.#s.getInScope.get(taskId, scope.tenant, scope.owner);
    if (!head) return undefined;
    if (head.artifact_count === 0) return { task: loadTask(this.#s, head.seq, head.body, 0), version: head.version };
    const joined: JoinedArtifact[] = [];
    const read = this.#readTx(() => {
      const row = this.#s.getInScope.get(taskId, scope.tenant, scope.owner);
      return row ? { seq: row.seq, task: loadTask(this.#s, row.seq, row.body, row.artifact_count, joined), version: row.version } : undefined;
    });
    if (!read) return undefined;
    // The chunks were joined anyway: keep them joined, so the next read reads one row per artifact.
    if (joined.length > 0) this.#compactTx(read.seq, read.version, joined);
    return { task: read.task, version: read.version };
  }

  async create(scope: TaskScope, task: Task): Promise<number> {
    this.#assertOpen();
    const stored = snapshot(task); // the task as it is now, whatever the caller does before the commit
    return this.#commits.enqueue(() => this.#writes.create(scope, stored));
  }

  /**
   * Group commit (sqlite-group-commit.ts): the write commits with the others called in this event-loop turn, and is turned into text now, so what is
   * stored is the task as it was at the call.
   */
  async update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): Promise<number> {
    this.#assertOpen();
    const event = change?.event === undefined ? undefined : JSON.stringify(change.event);
    if (change?.kind === 'artifact') {
      // Only the update is written: `task` (which holds every earlier chunk too) is not serialized.
      const write = artifactWrite(change.update, task);
      const taskId = task.id;
      return this.#commits.enqueue(() => this.#writes.artifact(scope, taskId, expectedVersion, write, event));
    }
    if (change?.kind === 'status') {
      // The body (the task without its artifacts) and the listing columns: the artifacts are as stored.
      const write: StatusWrite = { body: bodyJson(task), columns: headColumns(task), task };
      const taskId = task.id;
      return this.#commits.enqueue(() => this.#writes.status(scope, taskId, expectedVersion, write, event));
    }
    const stored = snapshot(task);
    return this.#commits.enqueue(() => this.#writes.update(scope, stored, expectedVersion, event));
  }

  /**
   * Commits the writes called so far now instead of at the end of this event-loop turn. Reads call it first, so a caller reads its own writes even
   * when it did not await them; the push stores too, before their own transactions on this connection.
   */
  flushWrites(): void {
    this.#commits.flush();
  }

  async list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage> {
    this.#assertOpen();
    this.flushWrites();
    return this.#listing.list(scope, query);
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
   * Retention: up to `limit` finished tasks older than the cutoff, with their rows and their push configs and logged events, in one transaction (see
   * sqlite-retention.ts).
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
    this.#unlock();
  }

  /** The connection, for the push stores that share the file (sqlitePushStores). */
  get database(): Database {
    return this.#db;
  }

  get closed(): boolean {
    return this.#closed;
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('SqliteTaskStore is closed');
  }
}
