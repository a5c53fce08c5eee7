/** The handlers per channel of one notice connection (Redis SUBSCRIBE, PostgreSQL LISTEN), and who hears when it drops and is back. */
import type { Logger } from '../../options.js';

export type NoticeHandler = (payload: string) => void;

export interface ReconnectHooks {
  /** The connection dropped: notices from now until back() may never arrive. */
  lost(): void;
  /** The connection is back and listens to every channel again. */
  back(): void;
}

export class NoticeChannels {
  readonly #handlers = new Map<string, Set<NoticeHandler>>();
  readonly #hooks = new Set<ReconnectHooks>();

  constructor(readonly logger: Logger) {}

  /** Adds `handler`; true when it is the channel's first (the connection must listen to it). */
  add(channel: string, handler: NoticeHandler): boolean {
    const handlers = this.#handlers.get(channel);
    handlers?.add(handler);
    if (!handlers) this.#handlers.set(channel, new Set([handler]));
    return !handlers;
  }

  /** Removes `handler`; true when it was the channel's last. */
  remove(channel: string, handler: NoticeHandler): boolean {
    const handlers = this.#handlers.get(channel);
    if (!handlers?.delete(handler) || handlers.size > 0) return false;
    this.#handlers.delete(channel);
    return true;
  }

  channels(): string[] {
    return [...this.#handlers.keys()];
  }

  dispatch(channel: string, payload: string): void {
    for (const handler of [...(this.#handlers.get(channel) ?? [])]) {
      try {
        handler(payload);
      } catch (error) {
        this.logger.error({ err: error, channel }, 'a notification listener threw');
      }
    }
  }

  onReconnect(hooks: ReconnectHooks): void {
    this.#hooks.add(hooks);
  }

  /** Tells the hooks that the connection dropped, or is back. */
  reconnect(phase: keyof ReconnectHooks): void {
    for (const hooks of this.#hooks) hooks[phase]();
  }

  clear(): void {
    this.#handlers.clear();
    this.#hooks.clear();
  }
}
