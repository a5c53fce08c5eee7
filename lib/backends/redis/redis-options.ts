/** Option schemas the Redis seams share, so each class and createRedisBackend() check them alike. */
import { z } from 'zod';
import type { Logger } from '../../logger.js';
import { hasMethods } from '../../options.js';
import { isRedisClient, type RedisClient } from './redis-client.js';
import { DEFAULT_KEY_PREFIX } from './redis-keys.js';

export const clientSchema = z.custom<RedisClient>(isRedisClient, {
  error: 'must be a node-redis client (createClient() from "redis")',
});

export const keyPrefixSchema = z.string().min(1).max(256).default(DEFAULT_KEY_PREFIX);

export const loggerSchema = z.custom<Logger>(hasMethods('warn', 'error'), {
  error: 'must be a logger with warn and error methods (pino-compatible)',
});

/** A whole number of milliseconds between `min` and a day. */
export const millisecondsSchema = (min: number) => z.number().int().min(min).max(86_400_000);
