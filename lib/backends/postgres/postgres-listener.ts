/**
 * The one LISTEN connection of a pool in a process (kept, shared by the bus and the leases); when it drops it is replaced with a bounded backoff and
 * every channel listened to again.
 */
import type { Logger } from '../../options.js';
import { NoticeChannels, type NoticeHandler, type ReconnectHooks } from '../shared/notice-channels.js';
import { quoteIdentifier, type PgNotification, type PgPoolClient, type PostgresDatabase } from './postgres-client.js';

const FIRST_RETRY_MS = 50;
const LAST_RETRY_MS = 2_000;
const HEARTBEAT_MS = 5_000;

export class PostgresListener {
  readonly #db: PostgresDatabase;
  readonly #notices: NoticeChannels;
  /** The connection listening now, or the attempt to get one. */
  #connection: Promise<PgPoolClient> | undefined;
  /** The connection once it listens (the one whose drop counts). */
  #current: PgPoolClient | undefined;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;

  constructor(db: PostgresDatabase, logger: Logger) {
    this.#db = db;
    this.#notices = new NoticeChannels(logger);
  }

  /**
   * Calls `handler` with each payload notified on `channel` until the returned function is called. `ready` settles once the channel is listened to
   * (notifications after that arrive).
   */
  listen(channel: string, handler: NoticeHandler): { ready: Promise<void>; stop: () => void } {
    if (this.#closed) throw new Error('this PostgreSQL listener is closed');
    const first = this.#notices.add(channel, handler);
    const ready = this.#connect().then((client) => (first ? this.#listenOn(client, channel) : undefined));
    ready.catch(() => {}); // reported to whoever awaits it
    // The channel stays listened to: channels are few per process (one per kind), not per task.
    return { ready, stop: () => void this.#notices.remove(channel, handler) };
  }

  /** One statement on the (usually idle) listening connection: it runs before statements the caller sends after it on the pool. */
  query<R>(text: string, values: readonly unknown[]): Promise<R[]> {
    const run = (client: PgPoolClient) => client.query<R>({ text, values, query_timeout: this.#db.timeoutMs }).then((result) => result.rows);
    // Sent now (not after a tick) when connected.
    return this.#current ? run(this.#current) : this.#connect().then(run);
  }

  onReconnect(hooks: ReconnectHooks): void {
    this.#notices.onReconnect(hooks);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    clearInterval(this.#heartbeat);
    this.#notices.clear();
    const client = await this.#connection?.catch(() => undefined);
    this.#connection = undefined;
    this.#current = undefined;
    if (client) {
      client.removeAllListeners('notification');
      client.removeAllListeners('end');
      // Not reused: a LISTENing connection back in the pool would keep its channels.
      client.release(true);
    }
  }

  #listenOn(client: PgPoolClient, channel: string): Promise<void> {
    return client.query({ text: `LISTEN ${quoteIdentifier(channel)}`, query_timeout: this.#db.timeoutMs }).then(() => undefined);
  }

  #connect(): Promise<PgPoolClient> {
    this.#connection ??= (async () => {
      const client = await this.#db.pool.connect();
      if (this.#closed) {
        client.release(true);
        throw new Error('this PostgreSQL listener is closed');
      }
      client.on('notification', (message: PgNotification) => this.#notices.dispatch(message.channel, message.payload ?? ''));
      // A pooled client reports errors through the pool too; this listener handles the drop.
      client.on('error', (error: Error) => this.#dropped(client, error));
      client.on('end', () => this.#dropped(client));
      try {
        for (const channel of this.#notices.channels()) await this.#listenOn(client, channel);
      } catch (error) {
        client.release(true);
        throw error;
      }
      this.#current = client;
      this.#beat();
      return client;
    })();
    this.#connection.catch(() => {
      // The next listen() or the reconnect loop tries again.
      this.#connection = undefined;
    });
    return this.#connection;
  }

  /** A dead server does not always close the socket: a query now and then notices, and the connection is replaced. */
  #beat(): void {
    if (this.#heartbeat) return;
    this.#heartbeat = setInterval(() => {
      const client = this.#current;
      if (!client) return;
      client.query({ text: 'SELECT 1', query_timeout: this.#db.timeoutMs }).catch((error: Error) => this.#dropped(client, error));
    }, HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  #dropped(client: PgPoolClient, error?: Error): void {
    // Once per connection ('error' and 'end' may both come), and only for the one in use.
    if (this.#closed || client !== this.#current) return;
    this.#current = undefined;
    this.#connection = undefined;
    client.removeAllListeners('notification');
    client.removeAllListeners('end');
    try {
      client.release(error ?? true);
    } catch {
      // released already
    }
    this.#notices.logger.warn({ err: error }, 'the PostgreSQL LISTEN connection dropped; reconnecting');
    this.#notices.reconnect('lost');
    this.#reconnect(FIRST_RETRY_MS);
  }

  #reconnect(delayMs: number): void {
    this.#retry = setTimeout(() => {
      if (this.#closed) return;
      this.#connect().then(
        () => this.#notices.reconnect('back'),
        (error: unknown) => {
          this.#notices.logger.warn({ err: error }, 'could not reconnect the PostgreSQL LISTEN connection; retrying');
          this.#reconnect(Math.min(delayMs * 2, LAST_RETRY_MS));
        },
      );
    }, delayMs);
    this.#retry.unref();
  }
}

/** The listener of each pool: one LISTEN connection per pool in a process, whoever listens. */
const listeners = new WeakMap<object, { listener: PostgresListener; users: number }>();

/** The pool's shared listener for one more user (a bus, a lease set); the last `release()` closes it. */
export function acquireListener(db: PostgresDatabase, logger: Logger): { listener: PostgresListener; release: () => Promise<void> } {
  let shared = listeners.get(db.pool);
  if (!shared) {
    shared = { listener: new PostgresListener(db, logger), users: 0 };
    listeners.set(db.pool, shared);
  }
  shared.users++;
  const held = shared;
  let released = false;
  return {
    listener: held.listener,
    release: async () => {
      if (released) return;
      released = true;
      if (--held.users > 0) return;
      if (listeners.get(db.pool) === held) listeners.delete(db.pool);
      await held.listener.close();
    },
  };
}
