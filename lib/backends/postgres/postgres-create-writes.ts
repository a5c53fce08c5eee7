/**
 * The creates of PostgresTaskStore for tasks without artifacts (the usual `{ task }` event), several tasks' in one statement: creates asked while one
 * such statement is in flight go together in the next (postgres-statement-batch.ts; alone, a create goes at once).
 */
import { TaskExistsError, type TaskScope } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/seams/task-store.js';
import { wireKey, type PostgresDatabase } from './postgres-client.js';
import { committedPayloadSql, type PostgresEventLog } from './postgres-event-log.js';
import { StatementBatch } from './postgres-statement-batch.js';
import type { WriteLeases } from './postgres-write-leases.js';

/** The head columns of a task row: state, terminal, context_id, status_ts, body. */
type Head = readonly [string, boolean, string | null, string, string];

interface CreateRow {
  readonly id: string;
  readonly scope: TaskScope;
  readonly head: Head;
  /** The task key and its wire form (with the log, or a lease to take). */
  readonly key: string | null;
  readonly wire: string | null;
  /** The holder of the pending lease this create takes. */
  readonly holder: string | null;
}

interface CreateOutcome {
  readonly created: boolean;
  readonly leased: boolean;
  /** The task existed before the statement (in any scope). */
  readonly existed: boolean;
}

/**
 * With the bus's event log each created task's event is inserted and notified by the same statement, and with the linked leases each create takes its
 * task's pending lease (the task row only once the lease is taken).
 */
export class CreateWrites {
  readonly #db: PostgresDatabase;
  readonly #log: PostgresEventLog | undefined;
  readonly #leases: WriteLeases | undefined;
  readonly #sql: string;
  readonly #batch = new StatementBatch<CreateRow, CreateOutcome>((rows) => this.#createAll(rows));

  constructor(db: PostgresDatabase, log: PostgresEventLog | undefined, leases: WriteLeases | undefined) {
    this.#db = db;
    this.#log = log;
    this.#leases = leases;
    this.#sql = createsSql(db, log, leases);
  }

  /** Creates the task at version 1 (its `{ task }` event logged); rejects with TaskExistsError when its id is taken. */
  async create(scope: TaskScope, id: string, head: Head): Promise<number> {
    const lease = this.#leases?.claimOnCreate(scope, id, head[1]);
    const key = lease ? lease.key : this.#log ? taskKey(scope, id) : null;
    let outcome: CreateOutcome;
    try {
      outcome = await this.#batch.add({ id, scope, head, key, wire: key === null ? null : wireKey(key), holder: lease ? lease.holder : null });
    } catch (error) {
      lease?.ended(undefined);
      throw error;
    }
    lease?.ended(outcome.leased);
    if (!outcome.created) {
      if (lease && !outcome.existed) throw new Error(`PostgresTaskStore: the lease of new task ${id} is held by another process`);
      throw new TaskExistsError(id);
    }
    if (this.#log) this.#log.appended(key!, 1);
    return 1;
  }

  /** One statement for `rows`; a task id asked twice at once runs alone (one statement claims a lease row once). */
  async #createAll(rows: readonly CreateRow[]): Promise<CreateOutcome[]> {
    if (rows.length > 1 && new Set(rows.map((row) => row.id)).size < rows.length) {
      const outcomes: CreateOutcome[] = [];
      for (const row of rows) outcomes.push(...(await this.#createAll([row])));
      return outcomes;
    }
    const column = <T>(pick: (row: CreateRow) => T): T[] => rows.map(pick);
    return this.#db.query<CreateOutcome>(this.#sql, [
      column((r) => r.id),
      column((r) => r.scope.tenant),
      column((r) => r.scope.owner),
      column((r) => r.head[0]),
      column((r) => r.head[1]),
      column((r) => r.head[2]),
      column((r) => r.head[3]),
      column((r) => r.head[4]),
      column((r) => r.key),
      column((r) => r.wire),
      column((r) => r.holder),
    ]);
  }
}

/** The statement, for a store with or without the linked log and leases (built once per store). */
function createsSql(db: PostgresDatabase, log: PostgresEventLog | undefined, leases: WriteLeases | undefined): string {
  const tasks = db.table('tasks');
  // Without artifacts the body column is the task's JSON: the event's and the payload's task.
  const logged = log
    ? `, ev AS (
        SELECT r.key, r.wire, ${committedPayloadSql(`'{"task":' || r.body || '}'`, 'r.body', '1')} AS payload FROM ins JOIN r ON r.id = ins.id
      ), logged AS (
        INSERT INTO ${log.table} (task_key, version, payload) SELECT key, 1, payload FROM ev ON CONFLICT DO NOTHING RETURNING task_key
      ), notified AS (
        SELECT pg_notify('${log.eventsChannel}', '1 ' || ev.wire) FROM logged JOIN ev ON ev.key = logged.task_key
      )`
    : '';
  return `WITH r AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[])
        WITH ORDINALITY AS r(id, tenant, owner, state, terminal, context_id, status_ts, body, key, wire, holder, n)
    )${leases ? `, ${leases.takeSql('r', tasks)}` : ''}, ins AS (
      INSERT INTO ${tasks} (id, tenant, owner, state, terminal, context_id, status_ts, body, version, artifact_count)
      SELECT r.id, r.tenant, r.owner, r.state, r.terminal, r.context_id, r.status_ts, r.body, 1, 0 FROM r
      ${leases ? 'WHERE r.holder IS NULL OR r.key IN (SELECT key FROM lease)' : ''}
      ON CONFLICT (id) DO NOTHING RETURNING id
    )${logged}
    SELECT r.id IN (SELECT id FROM ins) AS created, ${leases ? 'coalesce(r.key IN (SELECT key FROM lease), false)' : 'false'} AS leased,
      EXISTS (SELECT 1 FROM ${tasks} t WHERE t.id = r.id) AS existed${log ? ', (SELECT count(*) FROM notified) AS notified' : ''}
    FROM r ORDER BY r.n`;
}
