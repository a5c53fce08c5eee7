/** RedisPushConfigStore: push configs on the Redis of the task store, under the same key prefix. */
import { z } from 'zod';
import { parseOptions } from '../../options.js';
import { PushConfigLimitError, type PushConfigStore, type StoredPushConfig } from '../../engine/seams/push-config-store.js';
import type { ConfigCursor } from '../../engine/push/push-cursors.js';
import type { TaskScope } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/seams/task-store.js';
import { type RedisClient, clientSchema, keyPrefixSchema, RedisScript } from './redis-client.js';
import { RedisKeys, scopeId } from './redis-keys.js';

export interface RedisPushConfigStoreOptions {
  /** A connected node-redis client; the store does not close it. */
  readonly client: RedisClient;
  /** Put before every key. Default 'a2a:'. */
  readonly keyPrefix?: string;
}

const optionsSchema = z.strictObject({ client: clientSchema, keyPrefix: keyPrefixSchema });

// KEYS: configs hash, order set, task hash, push-tasks set. ARGV: id, JSON, failing flag, bound, scope id, push-tasks member. Replies 0 over the
// bound. A config put on an ended task is owed nothing: its task joins no sweep, which would drop the configs of an ended task owing nothing (the
// client keeps it until it deletes it).
const PUT = new RedisScript(`
if not redis.call('ZSCORE', KEYS[2], ARGV[1]) then
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return 0 end
  local last = redis.call('ZREVRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  local position = 1
  if #last > 0 then position = tonumber(last[2]) + 1 end
  redis.call('ZADD', KEYS[2], position, ARGV[1])
  local task = redis.call('HMGET', KEYS[3], 's', 'v', 't')
  local version = 0
  local ended = false
  if task[1] == ARGV[5] then
    version = tonumber(task[2])
    ended = task[3] == '1'
  end
  redis.call('HSET', KEYS[1], 'd:' .. ARGV[1], version, 'a:' .. ARGV[1], 0)
  if not ended then redis.call('SADD', KEYS[4], ARGV[6]) end
end
redis.call('HSET', KEYS[1], 'c:' .. ARGV[1], ARGV[2], 'f:' .. ARGV[1], ARGV[3])
return 1
`);

// KEYS: configs hash, order set, push-tasks set. ARGV: push-tasks member, then the ids to remove (none: all of them).
const DELETE = new RedisScript(`
if #ARGV == 1 then
  redis.call('DEL', KEYS[1], KEYS[2])
else
  for i = 2, #ARGV do
    redis.call('ZREM', KEYS[2], ARGV[i])
    redis.call('HDEL', KEYS[1], 'c:' .. ARGV[i], 'f:' .. ARGV[i], 'd:' .. ARGV[i], 'a:' .. ARGV[i])
  end
end
if redis.call('ZCARD', KEYS[2]) == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('SREM', KEYS[3], ARGV[1])
end
return 1
`);

// KEYS: configs hash, order set. Replies {id, JSON, failing, cursor, attempts, ...} oldest first.
const LIST = new RedisScript(`
local out = {}
for _, id in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  local row = redis.call('HMGET', KEYS[1], 'c:' .. id, 'f:' .. id, 'd:' .. id, 'a:' .. id)
  if row[1] then
    out[#out + 1] = id
    for i = 1, 4 do out[#out + 1] = row[i] or '0' end
  end
end
return out
`);

// KEYS: configs hash. ARGV: id, flag. Only an existing config.
const SET_FAILING = new RedisScript(`
if redis.call('HEXISTS', KEYS[1], 'c:' .. ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'f:' .. ARGV[1], ARGV[2])
return 1
`);

const parse = (json: string, failing: string): StoredPushConfig => {
  const config = JSON.parse(json) as StoredPushConfig;
  return failing === '1' ? { ...config, failing: true } : config;
};

/** The push-tasks member of a task: what the outbox's sweep reads back. */
export const pushTaskMember = (scope: TaskScope, taskId: string): string => JSON.stringify([scope.tenant, scope.owner, taskId]);

/**
 * A task's configs are one hash keyed by taskKey(scope, id) (another scope's configs live under another key), their order a sorted set; each config
 * carries its delivery cursor, which RedisPushOutbox moves. A new config's cursor starts at its task's version, read in the same script. Credentials
 * are stored as given (they are sent to the webhook) and never logged here.
 */
export class RedisPushConfigStore implements PushConfigStore {
  readonly #client: RedisClient;
  readonly #keys: RedisKeys;

  constructor(options: RedisPushConfigStoreOptions) {
    const parsed = parseOptions('RedisPushConfigStore', optionsSchema, options);
    this.#client = parsed.client;
    this.#keys = new RedisKeys(parsed.keyPrefix);
  }

  async put(scope: TaskScope, config: StoredPushConfig, maxPerTask: number): Promise<void> {
    const key = taskKey(scope, config.taskId);
    const { failing, ...rest } = config;
    const stored = await PUT.run<number>(
      this.#client,
      [this.#keys.pushConfigs(key), this.#keys.pushOrder(key), this.#keys.task(config.taskId), this.#keys.pushTasks()],
      [config.id, JSON.stringify(rest), failing ? '1' : '0', maxPerTask, scopeId(scope), pushTaskMember(scope, config.taskId)],
    );
    if (stored === 0) throw new PushConfigLimitError(config.taskId, maxPerTask);
  }

  async get(scope: TaskScope, taskId: string, id: string): Promise<StoredPushConfig | undefined> {
    const [json, failing] = await this.#client.sendCommand<Array<string | null>>([
      'HMGET',
      this.#keys.pushConfigs(taskKey(scope, taskId)),
      `c:${id}`,
      `f:${id}`,
    ]);
    return json ? parse(json, failing ?? '0') : undefined;
  }

  async list(scope: TaskScope, taskId: string): Promise<StoredPushConfig[]> {
    return (await this.cursors(scope, taskId)).map((cursor) => cursor.config);
  }

  async delete(scope: TaskScope, taskId: string, id: string): Promise<void> {
    await this.#delete(scope, taskId, [id]);
  }

  async deleteAll(scope: TaskScope, taskId: string): Promise<void> {
    await this.#delete(scope, taskId, []);
  }

  async setFailing(scope: TaskScope, taskId: string, id: string, failing: boolean): Promise<void> {
    await SET_FAILING.run(this.#client, [this.#keys.pushConfigs(taskKey(scope, taskId))], [id, failing ? '1' : '0']);
  }

  /** The task's configs with their cursors, oldest first (RedisPushOutbox). */
  async cursors(scope: TaskScope, taskId: string): Promise<ConfigCursor[]> {
    const key = taskKey(scope, taskId);
    const flat = await LIST.run<string[]>(this.#client, [this.#keys.pushConfigs(key), this.#keys.pushOrder(key)], []);
    const out: ConfigCursor[] = [];
    for (let i = 0; i < flat.length; i += 5) {
      out.push({ config: parse(flat[i + 1], flat[i + 2]), delivered: Number(flat[i + 3]), attempts: Number(flat[i + 4]) });
    }
    return out;
  }

  #delete(scope: TaskScope, taskId: string, ids: string[]): Promise<unknown> {
    const key = taskKey(scope, taskId);
    return DELETE.run(
      this.#client,
      [this.#keys.pushConfigs(key), this.#keys.pushOrder(key), this.#keys.pushTasks()],
      [pushTaskMember(scope, taskId), ...ids],
    );
  }
}
