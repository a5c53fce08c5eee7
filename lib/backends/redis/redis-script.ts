/**
 * A Lua script run by its SHA1 (EVALSHA), sent in full (EVAL) only when the server does not have it
 * cached yet: after a restart, a failover or SCRIPT FLUSH. Works with any client, including one the
 * application created without declaring our scripts.
 */
import { createHash } from 'node:crypto';
import type { RedisArgument, RedisClient } from './redis-client.js';

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
