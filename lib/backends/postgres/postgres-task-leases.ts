/**
 * TaskLeases on PostgreSQL. A lease is a row (task key, holder, expiry in database time) taken by
 * an insert that overwrites only an expired row, renewed every ttl/3 by an update that extends it
 * only while it names this holder and has not expired; release deletes it the same way and
 * NOTIFYs the key, which wakes the processes waiting for it (they also poll, with a bounded
 * backoff, for a lease that expires because its holder died). claimExpired() deletes rows expired
 * for half a time to live that it locked with FOR UPDATE SKIP LOCKED and returns them: each goes to
 * exactly one caller.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { consoleLogger, type Logger } from '../../logger.js';
import { parseOptions } from '../../options.js';
import type { LeasedTask, TaskLease, TaskLeases } from '../../engine/seams/task-leases.js';
import { channelName, wireKey, type PostgresDatabase } from './postgres-client.js';
import { acquireListener, type PostgresListener } from './postgres-listener.js';
import { connectionShape, databaseOf, loggerSchema, millisecondsSchema, type PostgresConnectionOptions } from './postgres-options.js';

export interface PostgresTaskLeasesOptions extends PostgresConnectionOptions {
  /**
   * How long a lease outlives its last renewal (renewed every third of it): how soon a dead
   * replica's tasks are settled, and how long a database hiccup may last before a lease is lost.
   * Default 10000.
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

/** Poll delays while waiting for a held lease: doubling from the first to the last. */
const FIRST_POLL_MS = 20;
const LAST_POLL_MS = 1_000;
const CLAIMS_PER_SWEEP = 100;

interface Held {
  readonly lease: TaskLease;
  /** Stops renewing without releasing. */
  stop(): void;
}

export class PostgresTaskLeases implements TaskLeases {
  readonly sweepIntervalMs: number;
  readonly #db: PostgresDatabase;
  readonly #table: string;
  readonly #channel: string;
  readonly #ttlMs: number;
  readonly #logger: Logger;
  readonly #listener: PostgresListener;
  readonly #releaseListener: () => Promise<void>;
  /** Who holds a lease, as stored: readable by an operator, unique per acquire. */
  readonly #holderPrefix = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}/`;
  #acquired = 0;
  readonly #held = new Set<Held>();
  /** Waiting acquires by wire key: woken by a release notice. */
  readonly #waiting = new Map<string, Set<() => void>>();
  #listening: Promise<void> | undefined;
  #closed = false;

  constructor(options: PostgresTaskLeasesOptions) {
    const parsed = parseOptions('PostgresTaskLeases', optionsSchema, options);
    this.#db = databaseOf(parsed);
    this.#table = this.#db.table('leases');
    this.#channel = channelName(parsed.schema, 'released');
    this.#ttlMs = parsed.leaseTtlMs;
    this.#logger = parsed.logger;
    const shared = acquireListener(this.#db, this.#logger);
    this.#listener = shared.listener;
    this.#releaseListener = shared.release;
    this.sweepIntervalMs = this.#ttlMs;
  }

  /** Leases this process holds now (a gauge). */
  get heldCount(): number {
    return this.#held.size;
  }

  async acquire(key: string, task: LeasedTask, waitMs: number): Promise<TaskLease | undefined> {
    if (this.#closed) throw new Error('PostgresTaskLeases is closed');
    const holder = `${this.#holderPrefix}${++this.#acquired}`;
    const attempt = async (): Promise<number | undefined> => {
      // Replies the holder's remaining ms when another holds it, nothing when this one won.
      const [row] = await this.#db.query<{ won: boolean; left: number | null }>(
        `WITH taken AS (
          INSERT INTO ${this.#table} AS l (key, tenant, owner, task_id, holder, expires_at)
          VALUES ($1, $2, $3, $4, $5, clock_timestamp() + $6 * interval '1 millisecond')
          ON CONFLICT (key) DO UPDATE SET tenant = EXCLUDED.tenant, owner = EXCLUDED.owner, task_id = EXCLUDED.task_id,
            holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
          WHERE l.expires_at <= clock_timestamp()
          RETURNING 1
        )
        SELECT EXISTS (SELECT 1 FROM taken) AS won,
          (SELECT (extract(epoch FROM expires_at - clock_timestamp()) * 1000)::integer FROM ${this.#table} WHERE key = $1) AS left`,
        [key, task.scope.tenant, task.scope.owner, task.taskId, holder, this.#ttlMs],
      );
      return row.won ? undefined : Math.max(0, row.left ?? 0);
    };

    let left = await attempt();
    if (left === undefined) return this.#took(key, holder);
    if (!(waitMs > 0) || this.#closed) return undefined;

    const deadline = Date.now() + waitMs;
    const wire = wireKey(key);
    // eslint-disable-next-line no-useless-assignment -- set by the release notice between polls
    let notified = false;
    let wake: (() => void) | undefined;
    const onNotice = () => {
      notified = true;
      wake?.();
    };
    let waiters = this.#waiting.get(wire);
    if (!waiters) this.#waiting.set(wire, (waiters = new Set()));
    waiters.add(onNotice);
    try {
      // Listening before the next attempt, so a release after it is never missed (bounded by
      // waitMs: without a LISTEN connection, polling still works).
      await untilOrAfter(this.#listen(), waitMs);
      for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, LAST_POLL_MS)) {
        notified = false;
        left = await attempt();
        if (left === undefined) return this.#took(key, holder);
        const remaining = deadline - Date.now();
        if (remaining <= 0 || this.#closed) return undefined;
        if (notified) continue;
        // A notice, or the next poll: the holder may die, and then its lease just expires.
        const wait = Math.min(poll, remaining, left > 0 ? left + 1 : poll);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, wait);
          timer.unref();
          function done() {
            clearTimeout(timer);
            wake = undefined;
            resolve();
          }
          wake = done;
        });
      }
    } finally {
      waiters.delete(onNotice);
      if (waiters.size === 0 && this.#waiting.get(wire) === waiters) this.#waiting.delete(wire);
    }
  }

  // Claimed half a time to live after it expired: by then a push outbox on the same time to live
  // (it sweeps every half) has taken the dead replica's deliveries over, so the status that settles
  // the task is delivered after the events the dead replica still owed, not before them.
  async claimExpired(): Promise<LeasedTask[]> {
    const rows = await this.#db.query<{ tenant: string; owner: string; task_id: string }>(
      `DELETE FROM ${this.#table} WHERE key IN (
        SELECT key FROM ${this.#table} WHERE expires_at < clock_timestamp() - $1 * interval '1 millisecond'
        ORDER BY expires_at LIMIT ${CLAIMS_PER_SWEEP} FOR UPDATE SKIP LOCKED
      ) RETURNING tenant, owner, task_id`,
      [Math.floor(this.#ttlMs / 2)],
    );
    return rows.map((row) => ({ scope: { tenant: row.tenant, owner: row.owner }, taskId: row.task_id }));
  }

  /**
   * Stops renewing every lease held here without releasing them (they expire, and another process
   * settles their tasks), ends pending acquires (undefined), and gives back the LISTEN connection.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const held of this.#held) held.stop();
    this.#held.clear();
    for (const waiters of this.#waiting.values()) for (const wake of [...waiters]) wake();
    await this.#releaseListener();
  }

  #listen(): Promise<void> {
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
    return this.#listening;
  }

  /** A lease won; given back at once when close() came meanwhile (nothing would renew it). */
  async #took(key: string, holder: string): Promise<TaskLease | undefined> {
    const lease = this.#hold(key, holder);
    if (!this.#closed) return lease;
    await lease.release();
    return undefined;
  }

  #hold(key: string, holder: string): TaskLease {
    let lost = false;
    let renewing = false;
    let released: Promise<void> | undefined;
    const timer = setInterval(() => void renew(), Math.max(10, Math.floor(this.#ttlMs / 3)));
    timer.unref();
    const stop = () => {
      clearInterval(timer);
      this.#held.delete(held);
    };
    const renew = async () => {
      if (renewing) return; // the previous one is still on its way
      renewing = true;
      try {
        const renewed = await this.#db.run(
          `UPDATE ${this.#table} SET expires_at = clock_timestamp() + $3 * interval '1 millisecond'
           WHERE key = $1 AND holder = $2 AND expires_at > clock_timestamp()`,
          [key, holder, this.#ttlMs],
        );
        if (renewed === 0 && !released) {
          lost = true;
          stop();
          this.#logger.warn({ lease: key }, 'a task lease expired before it was renewed; another replica may run the task now');
        }
      } catch (error) {
        // Not lost yet: the next renewal may still come in time.
        this.#logger.warn({ err: error, lease: key }, 'could not renew a task lease');
      } finally {
        renewing = false;
      }
    };
    const lease: TaskLease = {
      get lost() {
        return lost;
      },
      release: () => {
        released ??= (async () => {
          stop();
          try {
            await this.#db.query(
              `WITH gone AS (DELETE FROM ${this.#table} WHERE key = $1 AND holder = $2 RETURNING 1)
               SELECT pg_notify($3, $4) FROM gone`,
              [key, holder, this.#channel, wireKey(key)],
            );
          } catch (error) {
            released = undefined; // a later release() tries again; meanwhile the lease just expires
            throw error;
          }
        })();
        return released;
      },
    };
    const held: Held = { lease, stop };
    this.#held.add(held);
    return lease;
  }
}

/** Settles when `promise` does (either way) or after `ms`, whichever is first. */
function untilOrAfter(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}
