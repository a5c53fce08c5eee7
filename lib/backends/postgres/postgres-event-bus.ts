/**
 * A TaskEventBus on PostgreSQL: each committed event is a row of the events table and a NOTIFY of `<version> <wire key>`; followers read the rows, so
 * a late or lost notification loses nothing.
 */
import { z } from 'zod';
import { consoleLogger, type Logger, parseOptions } from '../../options.js';
import type { CommittedEvent } from '../../engine/seams/task-event-bus.js';
import { LoggedEventBus, type Group } from '../shared/logged-event-bus.js';
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

/** Cancel requests are rows too (no task key starts with '!'), the last 1000 kept: a replaced LISTEN connection replays them. */
const CANCELS = '!cancel';
const CANCELS_KEPT = 1000;

export class PostgresTaskEventBus extends LoggedEventBus {
  readonly #log: PostgresEventLog;
  readonly #retentionMs: number;
  readonly #listener: PostgresListener;
  readonly #releaseListener: () => Promise<void>;
  readonly #byWire = new Map<string, Group>();
  /** Per task key, the last publish under way: one key's publishes reach the table in order. */
  readonly #publishing = new Map<string, Promise<void>>();
  #eventsReady: Promise<void> | undefined;
  #listening = false;
  #cancelReady: Promise<void> | undefined;
  #janitor: NodeJS.Timeout | undefined;

  constructor(options: PostgresTaskEventBusOptions) {
    const parsed = parseOptions('PostgresTaskEventBus', optionsSchema, options);
    super('PostgresTaskEventBus', 'on PostgreSQL', parsed.logger);
    const db = databaseOf(parsed);
    this.#log = new PostgresEventLog(db, parsed.eventMaxPerTask);
    this.#retentionMs = parsed.eventRetentionMs;
    logOfBus.set(this, this.#log);
    const shared = acquireListener(db, this.logger);
    this.#listener = shared.listener;
    this.#releaseListener = shared.release;
    this.#listener.onReconnect({ lost: () => this.connectionLost(), back: () => this.connectionBack() });
  }

  protected async append(key: string, committed: CommittedEvent): Promise<void> {
    // A linked store's write statement logged and notified this version already (see PostgresTaskStore).
    if (this.#log.takeAppended(key, committed.version)) return;
    const log = this.#log;
    const write = (this.#publishing.get(key) ?? Promise.resolve()).then(() =>
      log.db.query(
        `WITH source AS (SELECT $2::integer AS version, $3::text AS payload), ${log.appendSql('source', '$1', '$4')}
         SELECT count(*) FROM notified`,
        [key, committed.version, JSON.stringify(committed), wireKey(key)],
      ),
    );
    const settled = write.then(
      () => undefined,
      () => undefined,
    );
    this.#publishing.set(key, settled);
    void settled.then(() => this.#publishing.get(key) === settled && this.#publishing.delete(key));
    await write;
  }

  protected async read(key: string, after: number, whole: boolean): Promise<CommittedEvent[] | undefined> {
    const table = this.#log.table;
    const rows = await this.#log.db.query<{ first: number | null; payload: string | null }>(
      `SELECT m.first, e.payload FROM (SELECT min(version) AS first FROM ${table} WHERE task_key = $1) m
       LEFT JOIN ${table} e ON e.task_key = $1 AND e.version > $2
       ORDER BY e.version`,
      [key, after],
    );
    // None kept, or the oldest kept is past the next one: some may be gone (retention).
    const first = rows[0]?.first;
    if (whole && (first == null || first > after + 1)) return undefined;
    return rows.flatMap((row) => (row.payload === null ? [] : [JSON.parse(row.payload) as CommittedEvent]));
  }

  /**
   * Where the log stands when following starts, read on the listening connection, so it is sent before the caller's next statements (its read of the
   * task).
   */
  protected follow(group: Group): Promise<{ top: number; read: boolean }> {
    const wire = wireKey(group.key);
    this.#byWire.set(wire, group);
    group.stop = () => void (this.#byWire.get(wire) === group && this.#byWire.delete(wire));
    if (!this.#eventsReady) {
      const ready = this.#listen(this.#log.eventsChannel, (payload) => this.#onNotify(payload));
      this.#eventsReady = ready;
      ready.then(
        () => (this.#listening = true),
        () => (this.#eventsReady = undefined),
      );
    }
    const fence = () =>
      this.#listener.query<{ top: number | null }>(`SELECT max(version) AS top FROM ${this.#log.table} WHERE task_key = $1`, [group.key]);
    return (this.#listening ? fence() : this.#eventsReady.then(fence)).then(([row]) => ({ top: row?.top ?? 0, read: false }));
  }

  #onNotify(payload: string): void {
    const space = payload.indexOf(' ');
    const group = this.#byWire.get(payload.slice(space + 1));
    if (group) this.noticed(group, Number(payload.slice(0, space)));
  }

  protected override cancelId(key: string): string {
    return wireKey(key);
  }

  /** Logs the request as a row (for a replica whose LISTEN connection is being replaced) and notifies `<version> <wire key>`. */
  protected async sendCancel(key: string): Promise<void> {
    const table = this.#log.table;
    // Two requests at once may pick the same version: the second inserts nothing and tries again.
    for (let attempt = 0; attempt < 10; attempt++) {
      const sent = await this.#log.db.query(
        `WITH next AS (SELECT COALESCE(max(version), 0) + 1 AS version FROM ${table} WHERE task_key = $1::text),
         logged AS (INSERT INTO ${table} (task_key, version, payload) SELECT $1::text, version, $2::text FROM next ON CONFLICT DO NOTHING RETURNING version),
         trimmed AS (DELETE FROM ${table} WHERE task_key = $1::text AND version <= (SELECT version FROM logged) - ${CANCELS_KEPT})
         SELECT pg_notify($3::text, logged.version || ' ' || $2::text) FROM logged`,
        [CANCELS, wireKey(key), this.#log.cancelChannel],
      );
      if (sent.length > 0) return;
    }
    throw new Error('the cancel request could not be logged (ten concurrent attempts)');
  }

  protected listenCancels(): { ready: Promise<void>; stop: () => void } {
    return { ready: this.listenForCancels(), stop: () => {} };
  }

  /**
   * Listens for cancel requests from now on; settles once they arrive. onCancelRequest() starts it too, but a cancel routed here before it settles
   * would be lost: createPostgresBackend awaits it, so a replica hears cancels from the moment it serves (before its first turn).
   */
  listenForCancels(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('PostgresTaskEventBus is closed'));
    if (!this.#cancelReady) {
      const listening = this.#listen(this.#log.cancelChannel, (payload) => {
        const space = payload.indexOf(' ');
        this.heardCancel(Number(payload.slice(0, space)) || 0, payload.slice(space + 1));
      });
      const ready = (this.#cancelReady = listening.then(() => this.countCancels()));
      // Failed (no connection): the next call listens again.
      ready.catch(() => {
        if (this.#cancelReady === ready) this.#cancelReady = undefined;
      });
      this.track(ready, 'could not listen for cancel requests on PostgreSQL');
    }
    return this.#cancelReady;
  }

  protected async cancelCount(): Promise<number> {
    const [row] = await this.#listener.query<{ top: number | null }>(`SELECT max(version) AS top FROM ${this.#log.table} WHERE task_key = $1`, [
      CANCELS,
    ]);
    return row?.top ?? 0;
  }

  protected async cancelsAfter(after: number): Promise<Array<[number, string]>> {
    const rows = await this.#log.db.query<{ version: number; payload: string }>(
      `SELECT version, payload FROM ${this.#log.table} WHERE task_key = $1 AND version > $2 ORDER BY version`,
      [CANCELS, after],
    );
    return rows.map((row) => [row.version, row.payload]);
  }

  protected async closeTransport(): Promise<void> {
    clearInterval(this.#janitor);
    this.#byWire.clear();
    await this.#releaseListener();
  }

  /** Deletes the events older than the retention (not the cancel rows, bounded apart), now and then, while this bus is in use. */
  #sweepOldEvents(): void {
    if (this.#janitor) return;
    const every = Math.min(Math.max(1_000, Math.floor(this.#retentionMs / 4)), 60_000);
    this.#janitor = setInterval(() => {
      this.#log.db
        .query(`DELETE FROM ${this.#log.table} WHERE created_at < now() - $1 * interval '1 millisecond' AND task_key <> $2`, [
          this.#retentionMs,
          CANCELS,
        ])
        .catch((error: unknown) => this.logger.warn({ err: error }, 'could not delete old task events on PostgreSQL'));
    }, every);
    this.#janitor.unref();
  }

  #listen(channel: string, handler: (payload: string) => void): Promise<void> {
    this.#sweepOldEvents();
    const handle = this.#listener.listen(channel, handler);
    handle.ready.catch(() => handle.stop()); // the caller listens again later
    return handle.ready;
  }
}
