/**
 * The part of a node-redis client (v5 or v6, `createClient()`) the Redis seams use. Structural, so a client of any module, script or RESP
 * configuration fits, and so `lib/engine` needs no runtime import of `redis`.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { type Logger, hasMethods } from '../../options.js';
import { DEFAULT_KEY_PREFIX } from './redis-keys.js';

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
function isRedisClient(value: unknown): value is RedisClient {
  if (value === null || typeof value !== 'object') return false;
  const client = value as Record<string, unknown>;
  return ['sendCommand', 'duplicate', 'connect', 'subscribe', 'unsubscribe', 'on'].every((name) => typeof client[name] === 'function');
}

/** A Lua script run by its SHA1 (EVALSHA), sent in full (EVAL) only when the server lacks it (restart, failover, SCRIPT FLUSH). */
export class RedisScript {
  readonly #source: string;
  readonly #sha1: string;

  constructor(source: string) {
    this.#source = source;
    this.#sha1 = createHash('sha1').update(source).digest('hex');
  }

  async run<T>(client: RedisClient, keys: readonly RedisArgument[], args: ReadonlyArray<RedisArgument | number>): Promise<T> {
    const tail = [String(keys.length), ...keys, ...args.map((arg) => (typeof arg === 'number' ? String(arg) : arg))];
    try {
      return await client.sendCommand<T>(['EVALSHA', this.#sha1, ...tail]);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      // EVAL caches the script, so the next call goes by SHA1 again.
      return client.sendCommand<T>(['EVAL', this.#source, ...tail]);
    }
  }
}

// Option schemas the Redis seams share, so each class and createRedisBackend() check them alike.
export const clientSchema = z.custom<RedisClient>(isRedisClient, {
  error: 'must be a node-redis client (createClient() from "redis")',
});

export const keyPrefixSchema = z.string().min(1).max(256).default(DEFAULT_KEY_PREFIX);

export const loggerSchema = z.custom<Logger>(hasMethods('warn', 'error'), {
  error: 'must be a logger with warn and error methods (pino-compatible)',
});

/** A whole number of milliseconds between `min` and a day. */
export const millisecondsSchema = (min: number) => z.number().int().min(min).max(86_400_000);
