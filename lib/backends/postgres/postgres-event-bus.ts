/**
 * A TaskEventBus on PostgreSQL for several replicas. Each committed event is a row of the events
 * table (version = the SSE event id), and a NOTIFY of its task key and version on one channel of
 * the schema; a process following a task reads the rows after the last version it delivered, so
 * notifications that arrive out of order, late, or not at all (a dropped LISTEN connection: the
 * rows are read again once it is back) lose nothing. history() reads the same rows for
 * Last-Event-ID resumes, and the push outbox reads them for deliveries. Cancel requests are
 * notifications too. A task keeps its latest `eventMaxPerTask` rows; rows older than
 * `eventRetentionMs` are deleted now and then.
 * A PostgresTaskStore given this bus inserts each event in its write statement; publish() then
 * skips the versions that store wrote in this process and still writes everything else.
 */
import { z } from 'zod';
import { consoleLogger, type Logger } from '../../logger.js';
import { parseOptions } from '../../options.js';
import type { CommittedEvent, CommittedEventListener, TaskEventBus } from '../../engine/seams/task-event-bus.js';
import { wireKey } from './postgres-client.js';
import { PostgresEventLog } from './postgres-event-log.js';
import { acquireListener, type PostgresListener } from './postgres-listener.js';
import { connectionShape, databaseOf, loggerSchema, millisecondsSchema, type PostgresConnectionOptions } from './postgres-options.js';

export interface PostgresTaskEventBusOptions extends PostgresConnectionOptions {
  /** How long a task's events stay resumable (SSE Last-Event-ID) and deliverable by push. Default 3600000 (1 h). */
  readonly eventRetentionMs?: number;
  /** How many of a task's latest events stay resumable (the rest are deleted as new ones come). Default 200. */
  readonly eventMaxPerTask?: number;
  /** LISTEN connection trouble is reported here. Default: the console. */
  readonly logger?: Logger;
}

const optionsSchema = z.strictObject({
  ...connectionShape,
  eventRetentionMs: millisecondsSchema(1000).default(3_600_000),
  eventMaxPerTask: z.number().int().min(1).max(1_000_000).default(200),
  logger: loggerSchema.default(consoleLogger),
});

/** Each bus's log, for the PostgresTaskStore linked to it (not part of the public API). */
const logOfBus = new WeakMap<PostgresTaskEventBus, PostgresEventLog>();

/** The event log of `bus`, for a store that inserts its events itself. */
export const taskEventLog = (bus: PostgresTaskEventBus): PostgresEventLog => logOfBus.get(bus)!;

/** The followers of one task in this process, and how far they have been served. */
interface Group {
  readonly key: string;
  /** The key as notifications name it. */
  readonly wire: string;
  readonly followers: Set<CommittedEventListener>;
  /** The highest version delivered: nothing at or below it is delivered again. */
  last: number;
  /** False until the starting point is known (notifications meanwhile wait for it). */
  ready: boolean;
  /**
   * The lowest version published through this bus, or notified, since the group was made and
   * before it was ready: the starting point stays below it, so an event published right after
   * subscribe() is delivered even when it committed before the starting point was read.
   */
  floor: number;
  reading: boolean;
  /** A notification came during a read: read again after it. */
  again: boolean;
}

/** Cancel listeners per wire key; a set only while someone listens. */
type CancelListeners = Map<string, Set<() => void>>;

export class PostgresTaskEventBus implements TaskEventBus {
  readonly #log: PostgresEventLog;
  readonly #logger: Logger;
  readonly #retentionMs: number;
  readonly #listener: PostgresListener;
  readonly #releaseListener: () => Promise<void>;
  /** Followed tasks by task key, and by wire key (what notifications name). */
  readonly #groups = new Map<string, Group>();
  readonly #byWire = new Map<string, Group>();
  readonly #cancels: CancelListeners = new Map();
  readonly #pending = new Set<Promise<unknown>>();
  /** Per task key, the last publish under way. */
  readonly #publishing = new Map<string, Promise<void>>();
  #eventsReady: Promise<void> | undefined;
  /** The events channel is listened to (a follower's starting point can be read at once). */
  #listening = false;
  #cancelReady: Promise<void> | undefined;
  #janitor: NodeJS.Timeout | undefined;
  #subscribers = 0;
  #closed = false;

  constructor(options: PostgresTaskEventBusOptions) {
    const parsed = parseOptions('PostgresTaskEventBus', optionsSchema, options);
    const db = databaseOf(parsed);
    this.#log = new PostgresEventLog(db, parsed.eventMaxPerTask);
    this.#logger = parsed.logger;
    this.#retentionMs = parsed.eventRetentionMs;
    logOfBus.set(this, this.#log);
    const shared = acquireListener(db, this.#logger);
    this.#listener = shared.listener;
    this.#releaseListener = shared.release;
    // Whatever was committed while the LISTEN connection was down is read from the table once it is back.
    this.#listener.onReconnect({
      lost: () => {},
      back: () => {
        for (const group of this.#groups.values()) this.#read(group);
      },
    });
  }

  get subscriberCount(): number {
    return this.#subscribers;
  }

  /** Tasks this process follows now (a gauge: 0 once every subscriber has left). */
  get followedTasks(): number {
    return this.#groups.size;
  }

  async publish(key: string, committed: CommittedEvent): Promise<void> {
    const { version } = committed;
    if (!Number.isSafeInteger(version) || version < 1)
      throw new RangeError(`PostgresTaskEventBus: version must be a positive integer, got ${version}`);
    const group = this.#groups.get(key);
    if (group && !group.ready) group.floor = Math.min(group.floor, version);
    // A linked store's write statement logged and notified this version already (see PostgresTaskStore).
    if (this.#log.takeAppended(key, version)) return;
    const wire = wireKey(key);
    // One key's publishes reach the table in the order they were made (the pool would reorder them).
    const before = this.#publishing.get(key);
    const write = (before ?? Promise.resolve()).then(() => this.#insert(key, wire, committed));
    const settled = write.then(
      () => undefined,
      () => undefined,
    );
    this.#publishing.set(key, settled);
    void settled.then(() => {
      if (this.#publishing.get(key) === settled) this.#publishing.delete(key);
    });
    await write;
  }

  async #insert(key: string, wire: string, committed: CommittedEvent): Promise<void> {
    const log = this.#log;
    await log.db.query(
      `WITH source AS (SELECT $2::integer AS version, $3::text AS payload), ${log.appendSql('source', '$1', '$4')}
       SELECT count(*) FROM notified`,
      [key, committed.version, JSON.stringify(committed), wire],
    );
  }

  subscribe(key: string, listener: CommittedEventListener): () => void {
    if (this.#closed) throw new Error('PostgresTaskEventBus is closed');
    const group = this.#groups.get(key) ?? this.#follow(key);
    // A wrapper per call, so the same function subscribed twice is two subscriptions.
    const follower: CommittedEventListener = (committed) => listener(committed);
    group.followers.add(follower);
    this.#subscribers++;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      group.followers.delete(follower);
      this.#subscribers--;
      if (group.followers.size === 0 && this.#groups.get(key) === group) {
        this.#groups.delete(key);
        this.#byWire.delete(group.wire);
      }
    };
  }

  requestCancel(key: string): void {
    this.#log.db.query('SELECT pg_notify($1, $2)', [this.#log.cancelChannel, wireKey(key)]).catch((error: unknown) => {
      this.#logger.error({ err: error }, 'could not notify a cancel request on PostgreSQL');
    });
  }

  /**
   * Listens for cancel requests from now on; settles once they arrive. onCancelRequest() starts it
   * too, but a cancel routed here before it settles would be lost: createPostgresBackend awaits it,
   * so a replica hears cancels from the moment it serves (before its first turn).
   */
  listenForCancels(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error('PostgresTaskEventBus is closed'));
    if (!this.#cancelReady) {
      const ready = (this.#cancelReady = this.#listen(this.#log.cancelChannel, (payload) => {
        for (const cancel of [...(this.#cancels.get(payload) ?? [])]) cancel();
      }));
      // Failed (no connection): the next call listens again.
      ready.catch(() => {
        if (this.#cancelReady === ready) this.#cancelReady = undefined;
      });
      this.#track(ready);
    }
    return this.#cancelReady;
  }

  onCancelRequest(key: string, listener: () => void): () => void {
    if (this.#closed) throw new Error('PostgresTaskEventBus is closed');
    void this.listenForCancels().catch(() => {}); // reported by #listen
    const wire = wireKey(key);
    let listeners = this.#cancels.get(wire);
    if (!listeners) this.#cancels.set(wire, (listeners = new Set()));
    const wrapper = () => listener();
    listeners.add(wrapper);
    const held = listeners;
    return () => {
      if (held.delete(wrapper) && held.size === 0 && this.#cancels.get(wire) === held) this.#cancels.delete(wire);
    };
  }

  async history(key: string, afterVersion: number): Promise<CommittedEvent[] | undefined> {
    if (!Number.isSafeInteger(afterVersion) || afterVersion < 0)
      throw new RangeError(`PostgresTaskEventBus: afterVersion must be a whole number, got ${afterVersion}`);
    const rows = await this.#log.db.query<{ first: number | null; payload: string | null }>(
      `SELECT m.first, e.payload FROM (SELECT min(version) AS first FROM ${this.#log.table} WHERE task_key = $1) m
       LEFT JOIN ${this.#log.table} e ON e.task_key = $1 AND e.version > $2
       ORDER BY e.version`,
      [key, afterVersion],
    );
    // None kept, or the oldest kept is past the next one: some may be gone (retention).
    const first = rows[0]?.first;
    if (first == null || first > afterVersion + 1) return undefined;
    return rows.flatMap((row) => (row.payload === null ? [] : [JSON.parse(row.payload) as CommittedEvent]));
  }

  /** Resolves once every subscription made so far is live and its starting point read (tests and tools). */
  async subscribed(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Stops following every task and gives back the LISTEN connection (the pool is not ended). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#janitor);
    this.#groups.clear();
    this.#byWire.clear();
    this.#cancels.clear();
    await this.#releaseListener();
  }

  /** Deletes the events older than the retention, now and then, while this bus is in use. */
  #sweepOldEvents(): void {
    if (this.#janitor) return;
    const every = Math.min(Math.max(1_000, Math.floor(this.#retentionMs / 4)), 60_000);
    this.#janitor = setInterval(() => {
      this.#log.db
        .query(`DELETE FROM ${this.#log.table} WHERE created_at < now() - $1 * interval '1 millisecond'`, [this.#retentionMs])
        .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not delete old task events on PostgreSQL'));
    }, every);
    this.#janitor.unref();
  }

  #listen(channel: string, handler: (payload: string) => void): Promise<void> {
    this.#sweepOldEvents();
    const handle = this.#listener.listen(channel, handler);
    handle.ready.catch(() => handle.stop()); // the caller listens again later
    return handle.ready;
  }

  #follow(key: string): Group {
    const wire = wireKey(key);
    const group: Group = { key, wire, followers: new Set(), last: 0, ready: false, floor: Number.MAX_SAFE_INTEGER, reading: false, again: false };
    this.#groups.set(key, group);
    this.#byWire.set(wire, group);
    if (!this.#eventsReady) {
      const ready = this.#listen(this.#log.eventsChannel, (payload) => this.#onNotify(payload));
      this.#eventsReady = ready;
      ready.then(
        () => (this.#listening = true),
        () => (this.#eventsReady = undefined),
      );
    }
    // Where the log stands when following starts: every event after it is delivered. Read on the
    // listening connection, so it is sent before the caller's next statements (its read of the
    // task); the starting point stays below any version notified or published meanwhile.
    const fence = () => this.#listener.query<{ top: number | null }>(`SELECT max(version) AS top FROM ${this.#log.table} WHERE task_key = $1`, [key]);
    const start = (this.#listening ? fence() : this.#eventsReady.then(fence)).then(
      ([row]) => {
        const top = row?.top ?? 0;
        group.last = Math.max(group.last, Math.min(top, group.floor - 1));
        group.ready = true;
        if (group.again || group.floor <= top) this.#read(group);
      },
      (error: unknown) => {
        group.ready = true;
        if (!this.#closed) this.#logger.error({ err: error }, 'could not follow a task on PostgreSQL; its subscribers may miss events');
      },
    );
    this.#track(start);
    return group;
  }

  #onNotify(payload: string): void {
    const space = payload.indexOf(' ');
    const group = this.#byWire.get(payload.slice(space + 1));
    if (!group) return;
    const version = Number(payload.slice(0, space));
    // Committed while the starting point is read: delivered, whichever way that read falls.
    if (!group.ready) group.floor = Math.min(group.floor, version);
    if (version > group.last) this.#read(group);
  }

  /** Reads and delivers the group's rows after its last version; one read at a time per group. */
  #read(group: Group): void {
    if (!group.ready || group.reading) {
      group.again = true;
      return;
    }
    group.reading = true;
    group.again = false;
    const done = (async () => {
      try {
        const rows = await this.#log.db.query<{ payload: string }>(
          `SELECT payload FROM ${this.#log.table} WHERE task_key = $1 AND version > $2 ORDER BY version`,
          [group.key, group.last],
        );
        for (const row of rows) this.#deliver(group, JSON.parse(row.payload) as CommittedEvent);
      } catch (error) {
        if (!this.#closed) this.#logger.error({ err: error }, 'could not read task events on PostgreSQL; its subscribers may miss events');
      } finally {
        group.reading = false;
        if (group.again && !this.#closed && group.followers.size > 0) this.#read(group);
      }
    })();
    this.#track(done);
  }

  #deliver(group: Group, committed: CommittedEvent): void {
    if (!(committed.version > group.last)) return;
    group.last = committed.version;
    for (const follower of [...group.followers]) {
      try {
        follower(committed);
      } catch (error) {
        this.#logger.error({ err: error }, 'a task event subscriber threw');
      }
    }
  }

  #track(promise: Promise<unknown>): void {
    const settled = promise.then(
      () => undefined,
      (error: unknown) => {
        if (!this.#closed) this.#logger.error({ err: error }, 'could not listen on PostgreSQL');
      },
    );
    this.#pending.add(settled);
    void settled.then(() => this.#pending.delete(settled));
  }
}
