/**
 * One subscriber connection (a duplicate of the command client, connected on first use) shared by
 * every channel a bus or a lease set follows: a channel is SUBSCRIBEd while it has a handler here
 * and UNSUBSCRIBEd when its last handler stops, so nothing per channel is held after.
 */
import type { Logger } from '../../logger.js';
import type { RedisClient } from './redis-client.js';

type Handler = (message: string) => void;

export interface ChannelHandle {
  /** Settles once the channel's SUBSCRIBE is confirmed: messages published after it arrive. */
  readonly ready: Promise<void>;
  /** Stops this handler (idempotent); the channel is unsubscribed after its last one. */
  stop(): void;
}

interface ReconnectHooks {
  /** The connection dropped: messages published from now until back() may never arrive. */
  lost(): void;
  /** The connection is back and every channel subscribed again. */
  back(): void;
}

interface Channel {
  readonly handlers: Set<Handler>;
  readonly ready: Promise<void>;
  readonly dispatch: (message: string) => void;
}

export class RedisChannels {
  readonly #client: RedisClient;
  readonly #logger: Logger;
  readonly #channels = new Map<string, Channel>();
  readonly #reconnectHooks = new Set<ReconnectHooks>();
  #connection: Promise<RedisClient> | undefined;
  #closed = false;

  constructor(client: RedisClient, logger: Logger) {
    this.#client = client;
    this.#logger = logger;
  }

  listen(name: string, handler: Handler): ChannelHandle {
    if (this.#closed) throw new Error('this Redis subscriber connection is closed');
    let channel = this.#channels.get(name);
    if (!channel) {
      const handlers = new Set<Handler>();
      const dispatch = (message: string): void => {
        for (const h of [...handlers]) {
          try {
            h(message);
          } catch (error) {
            this.#logger.error({ err: error, channel: name }, 'a Redis channel listener threw');
          }
        }
      };
      const ready = this.#connect().then((connection) => connection.subscribe(name, dispatch));
      const created: Channel = { handlers, ready, dispatch };
      // Reported to whoever awaits `ready`. Forgotten, so the next listen() subscribes again rather
      // than inheriting the failure (a SUBSCRIBE that timed out may still land: undone, just in case).
      ready.catch(() => {
        if (this.#channels.get(name) !== created) return;
        this.#channels.delete(name);
        void this.#connection?.then((connection) => (connection.isOpen ? connection.unsubscribe(name, dispatch) : undefined)).catch(() => {});
      });
      channel = created;
      this.#channels.set(name, channel);
    }
    const held = channel;
    held.handlers.add(handler);
    return {
      ready: held.ready,
      stop: () => {
        if (!held.handlers.delete(handler) || held.handlers.size > 0) return;
        if (this.#channels.get(name) === held) this.#channels.delete(name);
        // After the SUBSCRIBE settles, so the two reach Redis in order (a failed one needs none).
        void held.ready.then(
          async () => {
            const connection = await this.#connection;
            if (!connection?.isOpen) return;
            await connection.unsubscribe(name, held.dispatch).catch((error: unknown) => {
              if (!this.#closed) this.#logger.warn({ err: error, channel: name }, 'could not unsubscribe from a Redis channel');
            });
          },
          () => {},
        );
      },
    };
  }

  /** Told when the subscriber connection drops and when it is back (subscribed again by then). */
  onReconnect(hooks: ReconnectHooks): void {
    this.#reconnectHooks.add(hooks);
  }

  #connect(): Promise<RedisClient> {
    this.#connection ??= (async () => {
      const connection = this.#client.duplicate();
      connection.on('error', (error) => this.#logger.warn({ err: error }, 'Redis subscriber connection error'));
      let connected = false;
      // Emitted before the new socket subscribes again: messages from then on may follow a gap.
      connection.on('reconnecting', () => {
        for (const hooks of this.#reconnectHooks) hooks.lost();
      });
      connection.on('ready', () => {
        if (!connected) return;
        for (const hooks of this.#reconnectHooks) hooks.back();
      });
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
    this.#channels.clear();
    this.#reconnectHooks.clear();
    const connection = await this.#connection?.catch(() => undefined);
    if (!connection?.isOpen) return;
    try {
      await connection.close();
    } catch {
      connection.destroy();
    }
  }
}
