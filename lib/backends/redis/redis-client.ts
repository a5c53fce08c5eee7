/**
 * The part of a node-redis client (v5 or v6, `createClient()`) the Redis seams use. Structural, so
 * a client of any module, script or RESP configuration fits, and so `lib/engine` needs no runtime
 * import of `redis`.
 */

/** A command argument as node-redis sends it. */
export type RedisArgument = string | Buffer;

export interface RedisClient {
  readonly isOpen: boolean;
  sendCommand<T = unknown>(args: ReadonlyArray<RedisArgument>): Promise<T>;
  /** A new, unconnected client with the same options (used for the subscriber connections). */
  duplicate(): RedisClient;
  connect(): Promise<unknown>;
  /** Waits for pending commands, then closes. */
  close(): Promise<void>;
  /** Closes at once, rejecting pending commands. */
  destroy(): void;
  subscribe(channels: string, listener: (message: string, channel: string) => unknown): Promise<void>;
  unsubscribe(channels: string, listener: (message: string, channel: string) => unknown): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'ready' | 'reconnecting', listener: () => void): unknown;
}

/** Whether `value` looks like a node-redis client (for options validation). */
export function isRedisClient(value: unknown): value is RedisClient {
  if (value === null || typeof value !== 'object') return false;
  const client = value as Record<string, unknown>;
  return ['sendCommand', 'duplicate', 'connect', 'subscribe', 'unsubscribe', 'on'].every((name) => typeof client[name] === 'function');
}
