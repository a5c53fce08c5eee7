/**
 * One subscriber connection (a duplicate of the command client, connected on first use) shared by every channel a bus or a lease set follows:
 * SUBSCRIBEd while it has a handler, UNSUBSCRIBEd after.
 */
import type { Logger } from '../../options.js';
import { NoticeChannels, type NoticeHandler, type ReconnectHooks } from '../shared/notice-channels.js';
import type { RedisClient } from './redis-client.js';

interface ChannelHandle {
  /** Settles once the channel's SUBSCRIBE is confirmed: messages published after it arrive. */
  readonly ready: Promise<void>;
  /** Stops this handler (idempotent); the channel is unsubscribed after its last one. */
  stop(): void;
}

/** A channel's SUBSCRIBE, and the listener node-redis calls (the same one unsubscribes). */
interface Subscription {
  readonly ready: Promise<void>;
  readonly listener: (message: string) => void;
}

export class RedisChannels {
  readonly #client: RedisClient;
  readonly #notices: NoticeChannels;
  readonly #subscriptions = new Map<string, Subscription>();
  #connection: Promise<RedisClient> | undefined;
  #closed = false;

  constructor(client: RedisClient, logger: Logger) {
    this.#client = client;
    this.#notices = new NoticeChannels(logger);
  }

  listen(name: string, handler: NoticeHandler): ChannelHandle {
    if (this.#closed) throw new Error('this Redis subscriber connection is closed');
    this.#notices.add(name, handler);
    let subscription = this.#subscriptions.get(name);
    if (!subscription) {
      const listener = (message: string) => this.#notices.dispatch(name, message);
      const created: Subscription = { ready: this.#connect().then((connection) => connection.subscribe(name, listener)), listener };
      // Reported to whoever awaits `ready`. Forgotten, so the next listen() subscribes again rather than inheriting the failure (a SUBSCRIBE that
      // timed out may still land: undone, just in case).
      created.ready.catch(() => {
        if (this.#subscriptions.get(name) !== created) return;
        this.#subscriptions.delete(name);
        this.#unsubscribe(name, created, true);
      });
      this.#subscriptions.set(name, (subscription = created));
    }
    let stopped = false;
    return {
      ready: subscription.ready,
      stop: () => {
        if (stopped) return;
        stopped = true;
        if (!this.#notices.remove(name, handler)) return;
        const current = this.#subscriptions.get(name);
        this.#subscriptions.delete(name);
        // After the SUBSCRIBE settles, so the two reach Redis in order (a failed one needs none).
        if (current)
          void current.ready.then(
            () => this.#unsubscribe(name, current),
            () => {},
          );
      },
    };
  }

  /** Told when the subscriber connection drops and when it is back (subscribed again by then). */
  onReconnect(hooks: ReconnectHooks): void {
    this.#notices.onReconnect(hooks);
  }

  #unsubscribe(name: string, subscription: Subscription, quiet = false): void {
    void this.#connection
      ?.then((connection) => (connection.isOpen ? connection.unsubscribe(name, subscription.listener) : undefined))
      .catch((error: unknown) => {
        if (!this.#closed && !quiet) this.#notices.logger.warn({ err: error, channel: name }, 'could not unsubscribe from a Redis channel');
      });
  }

  #connect(): Promise<RedisClient> {
    this.#connection ??= (async () => {
      const connection = this.#client.duplicate();
      connection.on('error', (error) => this.#notices.logger.warn({ err: error }, 'Redis subscriber connection error'));
      let connected = false;
      // Emitted before the new socket subscribes again: messages from then on may follow a gap.
      connection.on('reconnecting', () => this.#notices.reconnect('lost'));
      connection.on('ready', () => connected && this.#notices.reconnect('back'));
      try {
        await connection.connect();
      } catch (error) {
        this.#connection = undefined; // the next listen() tries again
        if (connection.isOpen) connection.destroy();
        throw error;
      }
      connected = true;
      return connection;
    })();
    return this.#connection;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#subscriptions.clear();
    this.#notices.clear();
    const connection = await this.#connection?.catch(() => undefined);
    if (!connection?.isOpen) return;
    try {
      await connection.close();
    } catch {
      connection.destroy();
    }
  }
}
