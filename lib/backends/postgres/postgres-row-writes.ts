/**
 * The task-row writes of PostgresTaskStore (a status change, or a task without artifacts), several tasks' in one statement: writes asked while one
 * such statement is in flight go together in the next (postgres-statement-batch.ts; alone, a write goes at once).
 */
import type { PostgresDatabase } from './postgres-client.js';
import { committedPayloadSql, type PostgresEventLog } from './postgres-event-log.js';
import { StatementBatch } from './postgres-statement-batch.js';
import type { WriteLeases } from './postgres-write-leases.js';

/** One task's row write, as the statement's arrays take it. */
interface RowWrite {
  readonly id: string;
  readonly tenant: string;
  readonly owner: string;
  readonly expected: number;
  /** The head columns: state, terminal, context_id, status_ts, body. */
  readonly head: readonly [string, boolean, string | null, string, string];
  /** A status change (the stored artifacts stay); otherwise the task must have none stored. */
  readonly statusOnly: boolean;
  /** The committed event's JSON, when the linked log records it. */
  readonly event: string | null;
  /** The event payload's task JSON; null: the body column's (a task without artifacts). */
  readonly payloadTask: string | null;
  /** The task key and its wire form (with the log, or a lease to give back). */
  readonly key: string | null;
  readonly wire: string | null;
  /** The holder of the lease this write gives back (a terminal write, with the linked leases). */
  readonly holder: string | null;
}

/** What the statement says of one write: the new version, or why there is none. */
export interface RowOutcome {
  readonly version: number | null;
  /** The stored version when the task is in this scope (read in the statement's snapshot). */
  readonly stored: number | null;
  readonly terminal: boolean | null;
  /** Its lease was given back. */
  readonly released: boolean;
}

/** PostgreSQL's deadlock_detected. */
const DEADLOCK = '40P01';

/**
 * Each row is still its own compare-and-set on the version that refuses a terminal task and another scope; with the bus's event log, each written
 * row's event is inserted and notified by the same statement, and with the linked leases a terminal write gives back the lease held here for its
 * task.
 */
export class RowWrites {
  readonly #db: PostgresDatabase;
  readonly #sql: string;
  readonly #batch = new StatementBatch<RowWrite, RowOutcome>((writes) => this.#writeAll(writes));

  constructor(db: PostgresDatabase, log: PostgresEventLog | undefined, leases: WriteLeases | undefined) {
    this.#db = db;
    this.#sql = rowWritesSql(db, log, leases);
  }

  write(row: RowWrite): Promise<RowOutcome> {
    return this.#batch.add(row);
  }

  /** One statement for `writes`; a task written twice at once runs alone (one statement updates a row once). */
  async #writeAll(writes: readonly RowWrite[]): Promise<RowOutcome[]> {
    if (writes.length > 1 && new Set(writes.map((w) => w.id)).size < writes.length) {
      const outcomes: RowOutcome[] = [];
      for (const write of writes) outcomes.push(...(await this.#writeAll([write])));
      return outcomes;
    }
    try {
      return await this.#writeTogether(writes);
    } catch (error) {
      // Two processes' statements locked the same rows in opposite orders: each write alone then.
      if (writes.length === 1 || (error as { code?: string }).code !== DEADLOCK) throw error;
      const outcomes: RowOutcome[] = [];
      for (const write of writes) outcomes.push(...(await this.#writeAll([write])));
      return outcomes;
    }
  }

  #writeTogether(writes: readonly RowWrite[]): Promise<RowOutcome[]> {
    const column = <T>(pick: (write: RowWrite) => T): T[] => writes.map(pick);
    return this.#db.query<RowOutcome>(this.#sql, [
      column((w) => w.id),
      column((w) => w.tenant),
      column((w) => w.owner),
      column((w) => w.expected),
      column((w) => w.head[0]),
      column((w) => w.head[1]),
      column((w) => w.head[2]),
      column((w) => w.head[3]),
      column((w) => w.head[4]),
      column((w) => w.statusOnly),
      column((w) => w.event),
      column((w) => w.payloadTask),
      column((w) => w.key),
      column((w) => w.wire),
      column((w) => w.holder),
    ]);
  }
}

/** The statement, for a store with or without the linked log and leases (built once per store). */
function rowWritesSql(db: PostgresDatabase, log: PostgresEventLog | undefined, leases: WriteLeases | undefined): string {
  const tasks = db.table('tasks');
  const logged = log
    ? `, ev AS (
        SELECT r.key, r.wire, upd.version, ${committedPayloadSql('r.event', 'coalesce(r.payload_task, r.body)', 'upd.version')} AS payload
        FROM upd JOIN r ON r.id = upd.id WHERE r.event IS NOT NULL
      ), logged AS (
        INSERT INTO ${log.table} (task_key, version, payload) SELECT key, version, payload FROM ev ON CONFLICT DO NOTHING RETURNING task_key, version
      ), trimmed AS (
        DELETE FROM ${log.table} e USING logged l WHERE e.task_key = l.task_key AND e.version <= l.version - ${log.maxPerTask}
      ), notified AS (
        SELECT pg_notify('${log.eventsChannel}', logged.version || ' ' || ev.wire) FROM logged JOIN ev ON ev.key = logged.task_key
      )`
    : '';
  const released = leases
    ? `, lease_gone AS (
        DELETE FROM ${leases.table} l USING upd, r WHERE r.id = upd.id AND r.holder IS NOT NULL AND l.key = r.key AND l.holder = r.holder RETURNING l.key
      ), lease_notice AS (
        SELECT pg_notify('${leases.releasedChannel}', r.wire) FROM lease_gone JOIN r ON r.key = lease_gone.key
      )`
    : '';
  // A plain SELECT in WITH runs only when the main query reads it: the notifications are counted.
  const reads = `${log ? ', (SELECT count(*) FROM notified) AS notified' : ''}${
    leases ? ', r.key IN (SELECT key FROM lease_gone) AS released, (SELECT count(*) FROM lease_notice) AS noticed' : ', false AS released'
  }`;
  return `WITH r AS (
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::boolean[], $7::text[], $8::text[], $9::text[],
        $10::boolean[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[])
        WITH ORDINALITY AS r(id, tenant, owner, expected, state, terminal, context_id, status_ts, body, status_only, event, payload_task, key, wire, holder, n)
    ), upd AS (
      UPDATE ${tasks} t SET version = t.version + 1, state = r.state, terminal = r.terminal, context_id = r.context_id, status_ts = r.status_ts, body = r.body
      FROM r WHERE t.id = r.id AND t.tenant = r.tenant AND t.owner = r.owner AND t.version = r.expected AND NOT t.terminal
        AND (r.status_only OR t.artifact_count = 0)
      RETURNING t.id, t.version
    )${logged}${released}
    SELECT upd.version, s.version AS stored, s.terminal${reads}
    FROM r LEFT JOIN upd ON upd.id = r.id LEFT JOIN ${tasks} s ON s.id = r.id AND s.tenant = r.tenant AND s.owner = r.owner
    ORDER BY r.n`;
}
