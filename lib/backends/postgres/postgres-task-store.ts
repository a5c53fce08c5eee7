/** A TaskStore on PostgreSQL, shared by every replica. */
import { z } from 'zod';
import { optionsError, parseOptions } from '../../options.js';
import type { Task } from '../../protocol/schemas.js';
import {
  decodePageToken,
  encodePageToken,
  type ListTasksQuery,
  type TaskChange,
  type TaskPage,
  type TaskScope,
  type TaskStore,
  type VersionedTask,
} from '../../engine/seams/task-store.js';
import type { PostgresDatabase } from './postgres-client.js';
import { PostgresTaskEventBus, taskEventLog } from './postgres-event-bus.js';
import { connectionShape, databaseOf, type PostgresConnectionOptions } from './postgres-options.js';
import { loadColumns, taskFromRow, type LoadedRow } from './postgres-task-rows.js';
import { PostgresTaskWrites } from './postgres-task-writes.js';
import { PostgresTaskLeases, writeLeasesOf } from './postgres-task-leases.js';
import type { WriteLeases } from './postgres-write-leases.js';
import { finishedTaskRemover } from './postgres-retention.js';

export interface PostgresTaskStoreOptions extends PostgresConnectionOptions {
  /**
   * The event bus on the same database (createPostgresBackend links them): every write that records an event inserts it in the bus's events table and
   * notifies it in the write's own statement, so a replica killed right after a write has lost nothing, and the bus's publish() of that event costs
   * nothing. Without it the engine's publish() does both, after the write.
   */
  readonly eventBus?: PostgresTaskEventBus;
  /**
   * The task leases on the same pool and schema (createPostgresBackend links them): the create of a task takes the lease the engine asked for it, and
   * a terminal write gives back the lease this process holds, in the write's own statement, instead of a statement each. One store per leases.
   */
  readonly taskLeases?: PostgresTaskLeases;
}

const optionsSchema = z.strictObject({
  ...connectionShape,
  eventBus: z.custom<PostgresTaskEventBus>((v) => v instanceof PostgresTaskEventBus, { error: 'must be a PostgresTaskEventBus' }).optional(),
  taskLeases: z.custom<PostgresTaskLeases>((v) => v instanceof PostgresTaskLeases, { error: 'must be a PostgresTaskLeases' }).optional(),
});

/**
 * A task is a row with its listing columns (indexed per scope, per context and per state in ListTasks order, so a page never loads the other tasks)
 * and its JSON without artifact parts; artifacts are rows, their parts appended chunks, so streaming an artifact writes only the chunk. Writes are
 * compare-and-set on the version in one statement or transaction (see postgres-task-writes.ts); a task of another scope looks exactly like a missing
 * one. Given the backend's PostgresTaskEventBus (`eventBus`), each write inserts its committed event in the events table and notifies it in the same
 * statement; given its PostgresTaskLeases (`taskLeases`), a create takes the task's lease and a terminal write gives it back in the write's own
 * statement (see postgres-write-leases.ts).
 */
export class PostgresTaskStore implements TaskStore {
  readonly #db: PostgresDatabase;
  readonly #writes: PostgresTaskWrites;
  readonly #tasks: string;
  readonly #load: string;
  readonly #removeFinished: (finishedBefore: string, limit: number) => Promise<number>;

  constructor(options: PostgresTaskStoreOptions) {
    const parsed = parseOptions('PostgresTaskStore', optionsSchema, options);
    this.#db = databaseOf(parsed);
    this.#writes = new PostgresTaskWrites(
      this.#db,
      parsed.eventBus && taskEventLog(parsed.eventBus),
      parsed.taskLeases && this.#linkLeases(parsed.taskLeases),
    );
    this.#tasks = this.#db.table('tasks');
    this.#load = loadColumns(this.#db.table('artifacts'), this.#db.table('artifact_chunks'));
    this.#removeFinished = finishedTaskRemover(this.#db);
  }

  /** Leases on another pool or schema cannot ride on this store's statements. */
  #linkLeases(leases: PostgresTaskLeases): WriteLeases {
    const { db, writes } = writeLeasesOf(leases);
    if (db.pool !== this.#db.pool || db.schema !== this.#db.schema)
      throw optionsError('PostgresTaskStore', 'taskLeases', 'must use the same pool and schema as the store');
    writes.link(this);
    return writes;
  }

  async get(scope: TaskScope, taskId: string): Promise<VersionedTask | undefined> {
    const [row] = await this.#db.query<LoadedRow>(`SELECT ${this.#load} FROM ${this.#tasks} t WHERE t.id = $1 AND t.tenant = $2 AND t.owner = $3`, [
      taskId,
      scope.tenant,
      scope.owner,
    ]);
    return row && { task: taskFromRow(row), version: row.version };
  }

  create(scope: TaskScope, task: Task): Promise<number> {
    return this.#writes.create(scope, task);
  }

  update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): Promise<number> {
    return this.#writes.update(scope, task, expectedVersion, change);
  }

  /** Tracing: the trace context the task was started in, in its row's trace_context column. */
  async saveTraceContext(scope: TaskScope, taskId: string, traceparent: string): Promise<void> {
    await this.#db.query(`UPDATE ${this.#tasks} SET trace_context = $1 WHERE id = $2 AND tenant = $3 AND owner = $4`, [
      traceparent,
      taskId,
      scope.tenant,
      scope.owner,
    ]);
  }

  async loadTraceContext(scope: TaskScope, taskId: string): Promise<string | undefined> {
    const [row] = await this.#db.query<{ trace_context: string | null }>(
      `SELECT trace_context FROM ${this.#tasks} WHERE id = $1 AND tenant = $2 AND owner = $3`,
      [taskId, scope.tenant, scope.owner],
    );
    return row?.trace_context ?? undefined;
  }

  async list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage> {
    const values: unknown[] = [scope.tenant, scope.owner];
    let filters = 't.tenant = $1 AND t.owner = $2';
    if (query.contextId !== undefined) {
      values.push(query.contextId);
      filters += ` AND t.context_id = $${values.length}`;
    }
    if (query.status !== undefined) {
      values.push(query.status);
      filters += ` AND t.state = $${values.length}`;
    }
    if (query.statusTimestampAfter !== undefined) {
      values.push(query.statusTimestampAfter);
      filters += ` AND t.status_ts >= $${values.length}`;
    }
    const countValues = [...values];
    let page = filters;
    if (query.pageToken) {
      const cursor = decodePageToken(query.pageToken);
      values.push(cursor.timestamp, cursor.id);
      const [ts, id] = [`$${values.length - 1}`, `$${values.length}`];
      page += ` AND (t.status_ts < ${ts} OR (t.status_ts = ${ts} AND t.id > ${id}))`;
    }
    values.push(query.pageSize + 1);
    // The count ignores the cursor: totalSize is every match, whichever page is asked for.
    const [rows, [count]] = await Promise.all([
      this.#db.query<LoadedRow>(
        `SELECT ${this.#load} FROM ${this.#tasks} t WHERE ${page} ORDER BY t.status_ts DESC, t.id LIMIT $${values.length}`,
        values,
      ),
      this.#db.query<{ total: string }>(`SELECT count(*) AS total FROM ${this.#tasks} t WHERE ${filters}`, countValues),
    ]);
    // One more than a page was read, to know whether another page follows.
    const more = rows.length > query.pageSize;
    const tasks = rows.slice(0, query.pageSize).map(taskFromRow);
    return { tasks, nextPageToken: more ? encodePageToken(tasks[tasks.length - 1]) : '', totalSize: Number(count.total) };
  }

  /**
   * Retention: removes up to `limit` finished tasks of every scope whose status timestamp is before `finishedBefore`, with their artifacts, events,
   * push configs, claims and leases (see postgres-retention.ts); safe from several replicas at once.
   */
  removeFinished(finishedBefore: string, limit: number): Promise<number> {
    return this.#removeFinished(finishedBefore, limit);
  }
}
