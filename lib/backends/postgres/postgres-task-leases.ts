/**
 * TaskLeases on PostgreSQL: a row (task key, holder, expiry in database time) taken when free or expired, renewed every ttl/3 while it names this
 * holder, deleted and NOTIFYed on release (waiters also poll, for a holder that died). claimExpired() deletes rows expired for half a ttl, locked FOR
 * UPDATE SKIP LOCKED, each for one caller, and adds the tasks mid-turn with no lease row.
 */
import { z } from 'zod';
import { consoleLogger, type Logger, parseOptions } from '../../options.js';
import type { LeasedTask, LeasesOnWrites } from '../../engine/seams/task-leases.js';
import { ExpiringLeases, type HeldLease, type LeaseRef, type ReleaseNotices } from '../shared/expiring-leases.js';
import { channelName, wireKey, type PostgresDatabase } from './postgres-client.js';
import { StatementBatch } from './postgres-statement-batch.js';
import { MID_TURN } from './postgres-migrations.js';
import { acquireListener, type PostgresListener } from './postgres-listener.js';
import { WriteLeases } from './postgres-write-leases.js';
import { connectionShape, databaseOf, loggerSchema, millisecondsSchema, type PostgresConnectionOptions } from './postgres-options.js';

export interface PostgresTaskLeasesOptions extends PostgresConnectionOptions {
  /**
   * How long a lease outlives its last renewal (renewed every third of it): how soon a dead replica's tasks are settled, and how long a database
   * hiccup may last before a lease is lost. Default 10000.
   */
  readonly leaseTtlMs?: number;
  /** Renewal failures are reported here. Default: the console. */
  readonly logger?: Logger;
}

const optionsSchema = z.strictObject({
  ...connectionShape,
  leaseTtlMs: millisecondsSchema(30).default(10_000),
  logger: loggerSchema.default(consoleLogger),
});

const CLAIMS_PER_SWEEP = 100;

/** Each leases' bridge to the PostgresTaskStore whose writes carry them (not part of the public API). */
const writesOfLeases = new WeakMap<PostgresTaskLeases, { readonly db: PostgresDatabase; readonly writes: WriteLeases }>();

/** The bridge of `leases` and their database, for the store that links them (see postgres-write-leases.ts). */
export const writeLeasesOf = (leases: PostgresTaskLeases) => writesOfLeases.get(leases)!;

/**
 * Takes and releases asked while one of the kind is in flight share the next statement.
 */
export class PostgresTaskLeases extends ExpiringLeases {
  readonly #db: PostgresDatabase;
  readonly #table: string;
  readonly #tasks: string;
  readonly #channel: string;
  readonly #listener: PostgresListener;
  readonly #releaseListener: () => Promise<void>;
  /** Waiting acquires by wire key: woken by a release notice. */
  readonly #waiting = new Map<string, Set<() => void>>();
  #listening: Promise<void> | undefined;
  /** Takes and releases asked while one of the kind is in flight share the next statement. */
  readonly #takes = new StatementBatch<LeaseRef, { left: number } | undefined>((leases) => this.#takeAll(leases));
  readonly #releases = new StatementBatch<LeaseRef>((leases) => this.#releaseAll(leases));
  /** Takes and releases folded into a linked store's writes. */
  readonly #writes: WriteLeases;

  constructor(options: PostgresTaskLeasesOptions) {
    const parsed = parseOptions('PostgresTaskLeases', optionsSchema, options);
    super(parsed.leaseTtlMs, parsed.logger);
    this.#db = databaseOf(parsed);
    this.#table = this.#db.table('leases');
    this.#tasks = this.#db.table('tasks');
    this.#channel = channelName(parsed.schema, 'released');
    const shared = acquireListener(this.#db, this.logger);
    this.#listener = shared.listener;
    this.#releaseListener = shared.release;
    this.#writes = new WriteLeases({
      table: this.#table,
      releasedChannel: this.#channel,
      ttlMs: this.ttlMs,
      newRef: (key, task) => this.newRef(key, task),
      adopt: (ref) => this.adopt(ref),
      release: (ref) => this.release(ref),
    });
    writesOfLeases.set(this, { db: this.#db, writes: this.#writes });
  }

  /** With a linked PostgresTaskStore (createPostgresBackend): its creates take leases, its terminal writes give them back. */
  get onWrites(): LeasesOnWrites | undefined {
    return this.#writes.onWrites;
  }

  protected override onHeld(lease: HeldLease): void {
    this.#writes.held(lease);
  }

  protected override onDropped(lease: HeldLease): void {
    this.#writes.dropped(lease);
  }

  protected take(lease: LeaseRef): Promise<{ left: number } | undefined> {
    return this.#takes.add(lease);
  }

  /**
   * Takes asked together in one statement: inserts that overwrite only an expired row; each answers undefined when won, else its holder's remaining
   * ms. A key asked twice at once runs alone (one statement cannot claim a row twice).
   */
  async #takeAll(leases: readonly LeaseRef[]): Promise<({ left: number } | undefined)[]> {
    const keys = leases.map((lease) => lease.key);
    if (new Set(keys).size < keys.length && leases.length > 1) {
      const results: ({ left: number } | undefined)[] = [];
      for (const lease of leases) results.push(...(await this.#takeAll([lease])));
      return results;
    }
    const rows = await this.#db.query<{ won: boolean; left: number | null }>(
      `WITH req AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS r(key, tenant, owner, task_id, holder, n)
      ), taken AS (
        INSERT INTO ${this.#table} AS l (key, tenant, owner, task_id, holder, expires_at)
        SELECT key, tenant, owner, task_id, holder, clock_timestamp() + $6 * interval '1 millisecond' FROM req
        ON CONFLICT (key) DO UPDATE SET tenant = EXCLUDED.tenant, owner = EXCLUDED.owner, task_id = EXCLUDED.task_id,
          holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
        WHERE l.expires_at <= clock_timestamp()
        RETURNING l.key
      )
      SELECT EXISTS (SELECT 1 FROM taken WHERE taken.key = req.key) AS won,
        (SELECT (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::integer FROM ${this.#table} WHERE key = req.key) AS left
      FROM req ORDER BY req.n`,
      [
        keys,
        leases.map((l) => l.task.scope.tenant),
        leases.map((l) => l.task.scope.owner),
        leases.map((l) => l.task.taskId),
        leases.map((l) => l.holder),
        this.ttlMs,
      ],
    );
    return rows.map((row) => (row.won ? undefined : { left: Math.max(0, row.left ?? 0) }));
  }

  protected async renew({ key, holder }: LeaseRef): Promise<boolean> {
    const renewed = await this.#db.run(
      `UPDATE ${this.#table} SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
       WHERE key = $1 AND holder = $2 AND expires_at > clock_timestamp()`,
      [key, holder, this.ttlMs],
    );
    return renewed > 0;
  }

  async isHeld(key: string): Promise<boolean> {
    const [row] = await this.#db.query<{ held: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM ${this.#table} WHERE key = $1 AND expires_at > clock_timestamp()) AS held`,
      [key],
    );
    return row.held;
  }

  protected release(lease: LeaseRef): Promise<void> {
    return this.#releases.add(lease);
  }

  /** Releases asked together go in one statement: each deletes only its own holder's row. */
  async #releaseAll(leases: readonly LeaseRef[]): Promise<void[]> {
    await this.#db.query(
      `WITH gone AS (
        DELETE FROM ${this.#table} l USING unnest($1::text[], $2::text[]) AS r(key, holder) WHERE l.key = r.key AND l.holder = r.holder RETURNING l.key
      )
      SELECT pg_notify($3, k.wire) FROM gone JOIN unnest($1::text[], $4::text[]) AS k(key, wire) ON k.key = gone.key`,
      [leases.map((lease) => lease.key), leases.map((lease) => lease.holder), this.#channel, leases.map((lease) => wireKey(lease.key))],
    );
    return [];
  }

  // Claimed half a time to live after it expired: by then a push outbox on the same time to live (it sweeps every half) has taken the dead replica's
  // deliveries over, so the status that settles the task is delivered after the events the dead replica still owed, not before them. A task mid-turn
  // with no lease row runs nowhere: every replica sees it; the one taking its lease settles it.
  async claimExpired(): Promise<LeasedTask[]> {
    const rows = await this.#db.query<{ tenant: string; owner: string; task_id: string }>(
      `WITH expired AS (
        DELETE FROM ${this.#table} WHERE key IN (
          SELECT key FROM ${this.#table} WHERE expires_at < clock_timestamp() - $1 * interval '1 millisecond'
          ORDER BY expires_at LIMIT ${CLAIMS_PER_SWEEP} FOR UPDATE SKIP LOCKED
        ) RETURNING tenant, owner, task_id
      ), stranded AS (
        SELECT t.tenant, t.owner, t.id AS task_id FROM ${this.#tasks} t WHERE t.${MID_TURN}
          AND NOT EXISTS (SELECT 1 FROM ${this.#table} l WHERE l.task_id = t.id AND l.tenant = t.tenant AND l.owner = t.owner)
        LIMIT ${CLAIMS_PER_SWEEP}
      )
      SELECT * FROM expired UNION SELECT * FROM stranded`,
      [Math.floor(this.ttlMs / 2)],
    );
    return rows.map((row) => ({ scope: { tenant: row.tenant, owner: row.owner }, taskId: row.task_id }));
  }

  /** One LISTEN on the released channel for the whole process; notices name the key. */
  protected listenForRelease(key: string, notice: () => void): ReleaseNotices {
    const wire = wireKey(key);
    let waiters = this.#waiting.get(wire);
    if (!waiters) this.#waiting.set(wire, (waiters = new Set()));
    waiters.add(notice);
    const held = waiters;
    if (!this.#listening) {
      const handle = this.#listener.listen(this.#channel, (payload) => {
        for (const wake of [...(this.#waiting.get(payload) ?? [])]) wake();
      });
      this.#listening = handle.ready;
      handle.ready.catch(() => {
        handle.stop();
        this.#listening = undefined;
      });
    }
    return {
      ready: this.#listening,
      stop: () => {
        held.delete(notice);
        if (held.size === 0 && this.#waiting.get(wire) === held) this.#waiting.delete(wire);
      },
    };
  }

  protected closeNotices(): Promise<void> {
    return this.#releaseListener();
  }
}
