/**
 * A view of a node-redis client whose commands each fail after a deadline: a paused or wedged Redis (TCP open, no answers) makes the seams' calls
 * reject instead of hanging the requests behind them.
 */
import type { RedisArgument, RedisClient } from './redis-client.js';

/** A Redis command got no answer within the backend's `commandTimeoutMs`. It may still take effect. */
export class RedisCommandTimeoutError extends Error {
  readonly code = 'REDIS_COMMAND_TIMEOUT';

  constructor(command: string, timeoutMs: number) {
    super(`Redis did not answer ${command} within ${timeoutMs} ms`);
    this.name = 'RedisCommandTimeoutError';
  }
}

/**
 * `client` with every command, SUBSCRIBE and UNSUBSCRIBE bounded by `timeoutMs`; its duplicate()s (the subscriber connections) are bounded alike.
 * Raced here rather than with node-redis's own `timeout` command option (node-redis 6.3): that one drops its timer once the command is written, so a
 * command sent to a Redis that no longer reads (SIGSTOP, a stalled host) still waits forever. The late answer, if one comes, is ignored; the command
 * may have taken effect by then.
 */
export function withCommandDeadline(client: RedisClient, timeoutMs: number): RedisClient {
  return {
    get isOpen() {
      return client.isOpen;
    },
    sendCommand: <T>(args: ReadonlyArray<RedisArgument>) => within(client.sendCommand<T>(args), timeoutMs, args[0]),
    duplicate: () => withCommandDeadline(client.duplicate(), timeoutMs),
    // A subscriber connection's handshake is commands too.
    connect: () => within(client.connect(), timeoutMs, 'a connection'),
    close: () => client.close(),
    destroy: () => client.destroy(),
    subscribe: (channel, listener) => within(client.subscribe(channel, listener), timeoutMs, 'SUBSCRIBE'),
    unsubscribe: (channel, listener) => within(client.unsubscribe(channel, listener), timeoutMs, 'UNSUBSCRIBE'),
    on: (event: 'error' | 'ready' | 'reconnecting', listener: (error: Error) => void) => client.on(event as 'error', listener),
  };
}

/** `pending`, or a RedisCommandTimeoutError after `timeoutMs`, whichever is first. */
function within<T>(pending: Promise<T>, timeoutMs: number, command: RedisArgument | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    // Not unref'd: a caller is waiting for this answer.
    const timer = setTimeout(() => reject(new RedisCommandTimeoutError(String(command ?? 'a command'), timeoutMs)), timeoutMs);
    pending.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error as Error);
      },
    );
  });
}
