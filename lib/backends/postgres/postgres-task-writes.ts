/**
 * The write path of PostgresTaskStore on the delta seam: an artifact change writes its update alone (a chunk row, or a new artifact's rows), a status
 * change the task's row alone (its artifacts are as stored), never reading or re-serializing the artifacts the task holds.
 */
import type { StreamResponse, Task, TaskArtifactUpdateEvent } from '../../protocol/schemas.js';
import {
  TaskExistsError,
  TaskNotFoundInStoreError,
  TaskVersionConflictError,
  type TaskChange,
  type TaskScope,
} from '../../engine/seams/task-store.js';
import { wireKey, type PostgresDatabase } from './postgres-client.js';
import { committedPayloadSql, type PostgresEventLog } from './postgres-event-log.js';
import { endsTurn } from '../../engine/task-state.js';
import type { WriteLeases } from './postgres-write-leases.js';
import { RowWrites, type RowOutcome } from './postgres-row-writes.js';
import { CreateWrites } from './postgres-create-writes.js';
import { taskKey } from '../../engine/seams/task-store.js';
import { ARTIFACT_RECORD, artifactRecords, headJson, headValues, joinChunks } from './postgres-task-rows.js';

/** What a single-statement write reports: the new version, or why there is none. */
interface Outcome {
  readonly version: number | null;
  /** The stored version when the task is in this scope (read in the statement's snapshot). */
  readonly stored: number | null;
  readonly terminal: boolean | null;
}

/** The columns' types, for an insert that selects its values (a VALUES list infers them). */
const HEAD_CASTS = ['::text', '::boolean', '::text', '::text', '::text'];

/**
 * Each write is a compare-and-set on the version that also refuses a terminal task and another scope, in one statement; a whole-task replace of a
 * task with artifacts is one transaction that rewrites only the artifacts that differ. With the bus's event log, the committed event is inserted and
 * notified by the same statement or transaction, so no written event can be lost. Linked leases ride on the same statements (postgres-write-leases.ts).
 */
export class PostgresTaskWrites {
  readonly #db: PostgresDatabase;
  readonly #log: PostgresEventLog | undefined;
  readonly #leases: WriteLeases | undefined;
  readonly #tasks: string;
  readonly #artifacts: string;
  readonly #chunks: string;
  readonly #rows: RowWrites;
  readonly #creates: CreateWrites;

  constructor(db: PostgresDatabase, log: PostgresEventLog | undefined, leases: WriteLeases | undefined) {
    this.#db = db;
    this.#log = log;
    this.#leases = leases;
    this.#tasks = db.table('tasks');
    this.#artifacts = db.table('artifacts');
    this.#chunks = db.table('artifact_chunks');
    this.#rows = new RowWrites(db, log, leases);
    this.#creates = new CreateWrites(db, log, leases);
  }

  // A task is created by its `{ task }` event; without artifacts (the usual case) with other tasks' creates.
  async create(scope: TaskScope, task: Task): Promise<number> {
    const values = headValues(task);
    if (task.artifacts === undefined) return this.#creates.create(scope, task.id, values);
    const p = new Params();
    const [id, tenant, owner] = [p.add(task.id), p.add(scope.tenant), p.add(scope.owner)];
    const headParams = values.map((value) => p.add(value));
    const artifacts = task.artifacts;
    const count = p.add(artifacts.length);
    const lease = this.#leases?.claimOnCreate(scope, task.id, values[1]);
    // With the task's lease taken in the same statement, the row is inserted only once it is taken.
    const leaseSql = lease
      ? `${this.#leases!.takeSql(`(SELECT ${p.add(lease.key)}::text AS key, ${tenant}::text AS tenant, ${owner}::text AS owner, ${id}::text AS id, ${p.add(lease.holder)}::text AS holder)`, this.#tasks)}, `
      : '';
    const inserted = lease
      ? `SELECT ${id}::text, ${tenant}::text, ${owner}::text, ${headParams.map((param, i) => param + HEAD_CASTS[i]).join(', ')}, 1, ${count}::integer FROM lease`
      : `VALUES (${id}, ${tenant}, ${owner}, ${headParams.join(', ')}, 1, ${count})`;
    // An empty list inserts no artifact rows: no artifact clauses to run.
    const records =
      artifacts.length > 0 ? p.add(artifactRecords(artifacts.map((artifact, position) => ({ position, artifact }))), '::text::json') : undefined;
    const artifactInserts =
      records === undefined
        ? ''
        : `, arts AS (
        INSERT INTO ${this.#artifacts} (task_id, position, artifact_id, head, part_count, chunks)
        SELECT ins.id, a.p, a.id, a.head, a.n, 1 FROM ins, json_to_recordset(${records}) AS ${ARTIFACT_RECORD}
      ), chunks AS (
        INSERT INTO ${this.#chunks} (task_id, position, chunk, parts) SELECT ins.id, a.p, 0, a.parts FROM ins, json_to_recordset(${records}) AS ${ARTIFACT_RECORD}
      )`;
    const event = this.#eventSql(
      p,
      'ins',
      () => {
        const json = p.add(JSON.stringify(task), '::text');
        return { event: `'{"task":' || ${json} || '}'`, task: json };
      },
      scope,
      task.id,
    );
    const sql = `WITH ${leaseSql}ins AS (
        INSERT INTO ${this.#tasks} (id, tenant, owner, state, terminal, context_id, status_ts, body, version, artifact_count)
        ${inserted} ON CONFLICT (id) DO NOTHING RETURNING id, version
      )${artifactInserts}${event.with}
      SELECT (SELECT count(*) FROM ins) AS created${event.select}${lease ? `, (SELECT count(*) FROM lease) AS leased, EXISTS (SELECT 1 FROM ${this.#tasks} WHERE id = ${id}) AS existed` : ''}`;
    let row: { created: string; leased?: string; existed?: boolean };
    try {
      [row] = await this.#db.query<typeof row>(sql, p.values);
    } catch (error) {
      lease?.ended(undefined);
      throw error;
    }
    lease?.ended(Number(row.leased) > 0);
    if (Number(row.created) !== 1) {
      if (lease && !row.existed) throw new Error(`PostgresTaskStore: the lease of new task ${task.id} is held by another process`);
      throw new TaskExistsError(task.id);
    }
    event.done(1);
    return 1;
  }

  async update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): Promise<number> {
    const event = change?.event;
    let outcome: Outcome | undefined;
    if (change?.kind === 'artifact') outcome = await this.#artifactWrite(scope, task, expectedVersion, change.update, event);
    else if (change?.kind === 'status' || !task.artifacts?.length)
      outcome = await this.#rowWrite(scope, task, expectedVersion, change?.kind === 'status', event);
    if (outcome?.version != null) return outcome.version;
    // The statement refused: a conflict, another scope, or a shape it cannot write (then the transaction below writes the whole task).
    if (outcome) this.#refused(task.id, expectedVersion, outcome);
    return this.#wholeWrite(scope, task, expectedVersion, event);
  }

  #refused(taskId: string, expectedVersion: number, outcome: Outcome): void {
    if (outcome.stored === null) throw new TaskNotFoundInStoreError(taskId);
    if (outcome.stored !== expectedVersion || outcome.terminal) throw new TaskVersionConflictError(taskId, expectedVersion, outcome.stored);
  }

  /**
   * The event's WITH clauses and select-list part for a write whose new version is the `version` column of `source`; nothing without a linked log or
   * an event. `payload` adds the parameters of the event's and the task's JSON and names them.
   */
  #eventSql(p: Params, source: string, payload: (() => { event: string; task: string }) | undefined, scope: TaskScope, taskId: string) {
    const log = this.#log;
    if (!log || !payload) return { with: '', select: '', done: (_version: number) => {} };
    const { key, wire } = log.keys(scope, taskId);
    const json = payload();
    return {
      with: `, event_source AS (SELECT ${source}.version, ${committedPayloadSql(json.event, json.task, `${source}.version`)} AS payload FROM ${source}),
        ${log.appendSql('event_source', p.add(key), p.add(wire))}`,
      select: ', (SELECT count(*) FROM notified) AS notified',
      done: (version: number) => log.appended(key, version),
    };
  }

  /**
   * The event's and the payload task's JSON as parameters. The payload's task leaves the artifacts out (as the Redis backend's does) for an artifact
   * event, which leaves the rest as it was, and for a status that does not end the turn; so a payload costs what the event costs, not the task.
   */
  #eventPayload(
    p: Params,
    task: Task,
    event: StreamResponse | undefined,
    whole: boolean,
    bodyParam?: string,
  ): (() => { event: string; task: string }) | undefined {
    // A task without artifacts is its body column's JSON: that parameter serves (serialized once).
    if (bodyParam !== undefined && task.artifacts === undefined)
      return event && (() => ({ event: p.add(JSON.stringify(event), '::text'), task: `${bodyParam}::text` }));
    const payloadTask = whole || task.artifacts === undefined ? task : { ...task, artifacts: undefined };
    return event && (() => ({ event: p.add(JSON.stringify(event), '::text'), task: p.add(JSON.stringify(payloadTask), '::text') }));
  }

  /** The scope and version condition and the outcome select-list, on parameters $1-$4. */
  #cas(p: Params, scope: TaskScope, task: Task, expectedVersion: number) {
    const ids = { id: p.add(task.id), tenant: p.add(scope.tenant), owner: p.add(scope.owner), version: p.add(expectedVersion, '::integer') };
    return {
      ...ids,
      where: `t.id = ${ids.id} AND t.tenant = ${ids.tenant} AND t.owner = ${ids.owner} AND t.version = ${ids.version} AND NOT t.terminal`,
      /** The main query: the new version, or the stored one (in this statement's snapshot), plus `extra`. */
      outcome: (extra: string) => `SELECT (SELECT version FROM upd) AS version, s.version AS stored, s.terminal${extra}
        FROM (SELECT 1) one LEFT JOIN ${this.#tasks} s ON s.id = ${ids.id} AND s.tenant = ${ids.tenant} AND s.owner = ${ids.owner}`,
    };
  }

  /**
   * The task's row only: a status change (the artifacts are as stored), or a task without artifacts (stored without any too); batched with other
   * tasks' (see postgres-row-writes.ts).
   */
  async #rowWrite(scope: TaskScope, task: Task, expectedVersion: number, statusOnly: boolean, event: StreamResponse | undefined): Promise<Outcome> {
    const head = headValues(task);
    const log = event && this.#log;
    // The task ends: the lease held here for it is given back by the same statement.
    const giveBack = head[1] ? this.#leases?.giveBackFor(scope, task.id) : undefined;
    const key = log || giveBack ? taskKey(scope, task.id) : null;
    // The payload's task is the body column's JSON when the task has no artifacts (serialized once).
    const whole = !statusOnly || endsTurn(task.status.state);
    const payloadTask = log && task.artifacts !== undefined ? JSON.stringify(whole ? task : { ...task, artifacts: undefined }) : null;
    let outcome: RowOutcome;
    try {
      outcome = await this.#rows.write({
        id: task.id,
        tenant: scope.tenant,
        owner: scope.owner,
        expected: expectedVersion,
        head,
        statusOnly,
        event: log ? JSON.stringify(event) : null,
        payloadTask,
        key,
        wire: key === null ? null : wireKey(key),
        holder: giveBack ? giveBack.holder : null,
      });
    } catch (error) {
      giveBack?.ended(false);
      throw error;
    }
    giveBack?.ended(outcome.released);
    if (log && outcome.version !== null) log.appended(key!, outcome.version);
    return outcome;
  }

  /** An artifact event: one chunk appended, or a new artifact last; undefined for anything else. */
  async #artifactWrite(
    scope: TaskScope,
    task: Task,
    expectedVersion: number,
    update: TaskArtifactUpdateEvent,
    event: StreamResponse | undefined,
  ): Promise<Outcome | undefined> {
    const artifacts = task.artifacts ?? [];
    const artifactId = update.artifact.artifactId;
    const position = artifacts.findIndex((artifact) => artifact.artifactId === artifactId);
    if (position < 0) return undefined;
    const artifact = artifacts[position];
    const added = update.artifact.parts.length;
    const isNew = position === artifacts.length - 1 && !update.append;
    const isAppend = update.append === true && added > 0 && added <= artifact.parts.length;
    if (!isNew && !isAppend) return undefined;
    const p = new Params();
    const cas = this.#cas(p, scope, task, expectedVersion);
    const state = task.status.state;
    const contextId = task.contextId ?? null;
    const statusTs = task.status.timestamp ?? '';
    // An artifact event leaves the rest of the task alone: the stored columns must be these.
    const unchanged = `${cas.where} AND t.state = ${p.add(state)} AND t.context_id IS NOT DISTINCT FROM ${p.add(contextId, '::text')} AND t.status_ts = ${p.add(statusTs)}`;
    const count = p.add(artifacts.length, '::integer');
    const at = p.add(position, '::integer');
    const idParam = p.add(artifactId);
    const head = p.add(headJson(artifact));
    const parts = p.add(artifact.parts.length, '::integer');
    const chunk = p.add(JSON.stringify(isNew ? artifact.parts : artifact.parts.slice(artifact.parts.length - added)));
    const logged = this.#eventSql(p, 'upd', this.#eventPayload(p, task, event, false), scope, task.id);
    const sql = isNew
      ? `WITH cur AS (
          SELECT t.id FROM ${this.#tasks} t WHERE ${unchanged} AND t.artifact_count = ${count} - 1
          AND NOT EXISTS (SELECT 1 FROM ${this.#artifacts} a WHERE a.task_id = ${cas.id} AND a.artifact_id = ${idParam})
        ), upd AS (
          UPDATE ${this.#tasks} t SET version = t.version + 1, artifact_count = ${count} FROM cur WHERE t.id = cur.id AND t.version = ${cas.version} RETURNING t.version
        ), art AS (
          INSERT INTO ${this.#artifacts} (task_id, position, artifact_id, head, part_count, chunks) SELECT ${cas.id}, ${at}, ${idParam}, ${head}, ${parts}, 1 FROM upd
        ), chunk AS (
          INSERT INTO ${this.#chunks} (task_id, position, chunk, parts) SELECT ${cas.id}, ${at}, 0, ${chunk} FROM upd
        )${logged.with}
        ${cas.outcome(logged.select)}`
      : `WITH cur AS (
          SELECT t.id, a.chunks FROM ${this.#tasks} t JOIN ${this.#artifacts} a ON a.task_id = t.id AND a.position = ${at}
          WHERE ${unchanged} AND t.artifact_count = ${count} AND a.artifact_id = ${idParam} AND a.part_count = ${parts} - ${added}
        ), upd AS (
          UPDATE ${this.#tasks} t SET version = t.version + 1 FROM cur WHERE t.id = cur.id AND t.version = ${cas.version} RETURNING t.version
        ), art AS (
          UPDATE ${this.#artifacts} a SET head = ${head}, part_count = ${parts}, chunks = a.chunks + 1 FROM upd WHERE a.task_id = ${cas.id} AND a.position = ${at}
        ), chunk AS (
          INSERT INTO ${this.#chunks} (task_id, position, chunk, parts) SELECT ${cas.id}, ${at}, cur.chunks, ${chunk} FROM cur, upd
        )${logged.with}
        ${cas.outcome(logged.select)}`;
    return this.#runOutcome(sql, p.values, logged.done);
  }

  async #runOutcome(sql: string, values: unknown[], done: (version: number) => void): Promise<Outcome> {
    const [row] = await this.#db.query<Outcome>(sql, values);
    if (row.version != null) done(row.version);
    return row;
  }

  /** The whole task in one transaction: its row, and each artifact that differs from the stored one. */
  async #wholeWrite(scope: TaskScope, task: Task, expectedVersion: number, event: StreamResponse | undefined): Promise<number> {
    const log = this.#log;
    const logged = event && log ? log.keys(scope, task.id) : undefined;
    const version = await this.#db.transaction(async (query) => {
      const [head] = await query<{ tenant: string; owner: string; version: number; terminal: boolean; artifact_count: number }>(
        `SELECT tenant, owner, version, terminal, artifact_count FROM ${this.#tasks} WHERE id = $1 FOR UPDATE`,
        [task.id],
      );
      if (!head || head.tenant !== scope.tenant || head.owner !== scope.owner) throw new TaskNotFoundInStoreError(task.id);
      if (head.version !== expectedVersion || head.terminal) throw new TaskVersionConflictError(task.id, expectedVersion, head.version);
      const artifacts = task.artifacts ?? [];
      const stored =
        head.artifact_count > 0
          ? await query<{ position: number; head: string; chunks: string[] | null }>(
              `SELECT a.position, a.head, (SELECT json_agg(c.parts ORDER BY c.chunk) FROM ${this.#chunks} c WHERE c.task_id = a.task_id AND c.position = a.position) AS chunks
               FROM ${this.#artifacts} a WHERE a.task_id = $1 ORDER BY a.position`,
              [task.id],
            )
          : [];
      // A status update repeats the artifacts unchanged: compare texts, so they are not rewritten.
      const changed = artifacts.flatMap((artifact, position) => {
        const was = stored[position];
        return was && was.head === headJson(artifact) && joinChunks(was.chunks ?? []) === JSON.stringify(artifact.parts)
          ? []
          : [{ position, artifact }];
      });
      if (changed.length > 0 || stored.length > artifacts.length) {
        const positions = changed.map((item) => item.position);
        await query(`DELETE FROM ${this.#chunks} WHERE task_id = $1 AND (position = ANY($2::integer[]) OR position >= $3)`, [
          task.id,
          positions,
          artifacts.length,
        ]);
        await query(`DELETE FROM ${this.#artifacts} WHERE task_id = $1 AND position >= $2`, [task.id, artifacts.length]);
        if (changed.length > 0) {
          const records = artifactRecords(changed);
          await query(
            `WITH arts AS (
              INSERT INTO ${this.#artifacts} (task_id, position, artifact_id, head, part_count, chunks)
              SELECT $1, a.p, a.id, a.head, a.n, 1 FROM json_to_recordset($2::text::json) AS ${ARTIFACT_RECORD}
              ON CONFLICT (task_id, position) DO UPDATE SET artifact_id = EXCLUDED.artifact_id, head = EXCLUDED.head, part_count = EXCLUDED.part_count, chunks = 1
            )
            INSERT INTO ${this.#chunks} (task_id, position, chunk, parts) SELECT $1, a.p, 0, a.parts FROM json_to_recordset($2::text::json) AS ${ARTIFACT_RECORD}`,
            [task.id, records],
          );
        }
      }
      const next = expectedVersion + 1;
      await query(
        `UPDATE ${this.#tasks} SET version = $2, state = $3, terminal = $4, context_id = $5, status_ts = $6, body = $7, artifact_count = $8 WHERE id = $1`,
        [task.id, next, ...headValues(task), artifacts.length],
      );
      if (logged && log) {
        await query(
          `WITH event_source AS (SELECT $2::integer AS version, ${committedPayloadSql('$3::text', '$4::text', '$2::integer')} AS payload), ${log.appendSql('event_source', '$1', '$5')}
           SELECT count(*) FROM notified`,
          [logged.key, next, JSON.stringify(event), JSON.stringify(task), logged.wire],
        );
      }
      return next;
    });
    if (logged) log!.appended(logged.key, version);
    return version;
  }
}

/** Query parameters, numbered as they are added. */
class Params {
  readonly values: unknown[] = [];

  /** `$n` for `value` (with `cast`, e.g. '::text', so PostgreSQL knows its type wherever it is used). */
  add(value: unknown, cast = ''): string {
    this.values.push(value);
    return `$${this.values.length}${cast}`;
  }
}
