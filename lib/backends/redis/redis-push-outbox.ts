/**
 * RedisPushOutbox: the claiming outbox on Redis. The events are the task's stream, the cursors sit with the configs (RedisPushConfigStore), and a
 * claim is a key with a time to live.
 */
import { z } from 'zod';
import { consoleLogger, type Logger, parseOptions } from '../../options.js';
import type { StreamResponse } from '../../protocol/schemas.js';
import type { LoggedEvent, Span } from '../../engine/push/push-cursors.js';
import type { PushDelivery } from '../../engine/seams/push-outbox.js';
import type { TaskStore } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/seams/task-store.js';
import type { CommittedEvent } from '../../engine/seams/task-event-bus.js';
import { ClaimingOutbox } from '../shared/claiming-outbox.js';
import { type RedisClient, clientSchema, keyPrefixSchema, loggerSchema, millisecondsSchema, RedisScript } from './redis-client.js';
import { RedisKeys, scopeId } from './redis-keys.js';
import type { RedisPushConfigStore } from './redis-push-config-store.js';

export interface RedisPushOutboxOptions {
  readonly client: RedisClient;
  /** The config store whose cursors it moves (same client and prefix). */
  readonly configStore: RedisPushConfigStore;
  /** The task store: the task as it stands, for v0.3 bodies and an expired stream. */
  readonly taskStore: TaskStore;
  readonly keyPrefix?: string;
  /** How long a task's claim lasts without renewal: how soon a dead replica's deliveries are taken over. Default 10000. */
  readonly claimTtlMs?: number;
  readonly logger?: Logger;
}

/** Tasks a sweep examines at the same time (their claim scripts pipelined on the connection). */
const SWEEP_BATCH = 64;

const optionsSchema = z.strictObject({
  client: clientSchema,
  configStore: z.custom<RedisPushConfigStore>(
    (v) => typeof v === 'object' && v !== null && typeof (v as { cursors?: unknown }).cursors === 'function',
  ),
  taskStore: z.custom<TaskStore>((v) => typeof v === 'object' && v !== null && typeof (v as { get?: unknown }).get === 'function'),
  keyPrefix: keyPrefixSchema,
  claimTtlMs: millisecondsSchema(30).default(10_000),
  logger: loggerSchema.default(consoleLogger),
});

// KEYS: claim, configs hash, task hash, stream. ARGV: replica id, ttl, scope id. Replies 1 (claimed: some cursor is behind the stream, or behind the
// task when the stream expired), 2 (ended task, nothing owed: its configs can go), 0 otherwise (claimed by another, or nothing owed).
const CLAIM = new RedisScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local task = redis.call('HMGET', KEYS[3], 's', 'v', 't')
if task[1] ~= ARGV[3] then return 0 end
local top = redis.call('XREVRANGE', KEYS[4], '+', '-', 'COUNT', 1)
local last = tonumber(task[2])
if #top > 0 then last = tonumber(string.match(top[1][1], '^%d+')) end
local fields = redis.call('HGETALL', KEYS[2])
for i = 1, #fields, 2 do
  if string.sub(fields[i], 1, 2) == 'd:' and tonumber(fields[i + 1]) < last then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
    return 1
  end
end
if task[3] == '1' then return 2 end
return 0
`);

// KEYS: configs hash, stream. ARGV: config id, span start, span end. Moves the cursor to the end when no streamed event between it and the span start
// is still owed (compare-and-set).
const ADVANCE = new RedisScript(`
local d = redis.call('HGET', KEYS[1], 'd:' .. ARGV[1])
if not d then return 0 end
d = tonumber(d)
local from = tonumber(ARGV[2])
if d >= tonumber(ARGV[3]) then return 0 end
if d < from and #redis.call('XRANGE', KEYS[2], (d + 1) .. '-0', from .. '-0', 'COUNT', 1) > 0 then return 0 end
redis.call('HSET', KEYS[1], 'd:' .. ARGV[1], ARGV[3], 'a:' .. ARGV[1], 0)
return 1
`);

// KEYS: configs hash. ARGV: config id, span start, attempts.
const ATTEMPTS = new RedisScript(`
if redis.call('HGET', KEYS[1], 'd:' .. ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'a:' .. ARGV[1], ARGV[3])
return 1
`);

// KEYS: claim. ARGV: replica id, ttl (renew) or '' (release). Only the holder's claim.
const HOLDER = new RedisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
`);

export class RedisPushOutbox extends ClaimingOutbox {
  readonly #client: RedisClient;
  readonly #configs: RedisPushConfigStore;
  readonly #keys: RedisKeys;

  constructor(options: RedisPushOutboxOptions) {
    const parsed = parseOptions('RedisPushOutbox', optionsSchema, options);
    super(parsed.configStore, parsed.taskStore, parsed.claimTtlMs, parsed.logger);
    this.#client = parsed.client;
    this.#configs = parsed.configStore;
    this.#keys = new RedisKeys(parsed.keyPrefix);
  }

  protected async claim(key: string): Promise<boolean> {
    return (await this.#client.sendCommand<string | null>(['SET', this.#keys.pushClaim(key), this.id, 'NX', 'PX', String(this.ttlMs)])) === 'OK';
  }

  async recordAttempts(id: string, attempts: number): Promise<void> {
    const span = this.spans.get(id);
    if (span) await ATTEMPTS.run(this.#client, [this.#configsKey(span)], [span.configId, span.from, attempts]);
  }

  protected async advance(span: Span): Promise<void> {
    const key = taskKey(span.scope, span.taskId);
    await ADVANCE.run(this.#client, [this.#keys.pushConfigs(key), this.#keys.events(key)], [span.configId, span.from, span.version]);
  }

  /** The tasks of the push-tasks set, a batch at a time: each claimed when nobody holds it, with what it is owed. */
  protected async sweep(): Promise<PushDelivery[]> {
    const members = await this.#client.sendCommand<string[]>(['SMEMBERS', this.#keys.pushTasks()]);
    // Tasks are independent (a claim per task): a batch at a time in flight, not one round trip after another, so a sweep over thousands of tasks
    // takes a few dozen round trips' time.
    const out: PushDelivery[] = [];
    for (let from = 0; from < members.length; from += SWEEP_BATCH) {
      const batch = await Promise.all(members.slice(from, from + SWEEP_BATCH).map((member) => this.#takeOver(member)));
      for (const deliveries of batch) out.push(...deliveries);
    }
    return out;
  }

  async #takeOver(member: string): Promise<PushDelivery[]> {
    const [tenant, owner, taskId] = JSON.parse(member) as [string, string, string];
    const scope = { tenant, owner };
    const key = taskKey(scope, taskId);
    if (this.spans.has(key)) return [];
    const letGo = this.holdLiveEvents(key);
    const claimed = await CLAIM.run<number>(
      this.#client,
      [this.#keys.pushClaim(key), this.#keys.pushConfigs(key), this.#keys.task(taskId), this.#keys.events(key)],
      [this.id, this.ttlMs, scopeId(scope)],
    );
    if (claimed !== 1) letGo();
    if (claimed === 2) await this.#configs.deleteAll(scope, taskId);
    return claimed === 1 ? this.takeOver(scope, taskId, key) : [];
  }

  /** Each claim given back with its own script (claims are keys, one per task). */
  protected async releaseClaims(keys: readonly string[]): Promise<void> {
    await Promise.all(keys.map((key) => HOLDER.run(this.#client, [this.#keys.pushClaim(key)], [this.id, ''])));
  }

  protected async renewClaims(keys: readonly string[]): Promise<void> {
    await Promise.allSettled(
      keys.map((key) =>
        HOLDER.run(this.#client, [this.#keys.pushClaim(key)], [this.id, this.ttlMs]).catch((error: unknown) =>
          this.logger.warn({ err: error }, 'push notifications: could not renew a delivery claim; another replica may deliver too'),
        ),
      ),
    );
  }

  protected async logged(key: string, after: number, before: number): Promise<LoggedEvent[] | undefined> {
    const entries = await this.#client.sendCommand<Array<[string, string[]]>>(['XRANGE', this.#keys.events(key), `${after + 1}-0`, '+']);
    const exists = entries.length > 0 || (await this.#client.sendCommand<number>(['EXISTS', this.#keys.events(key)])) === 1;
    if (!exists) return undefined;
    return entries.flatMap(([, fields]) => {
      const committed = JSON.parse(fields[1]) as CommittedEvent;
      return committed.version < before ? [{ version: committed.version, event: committed.event as StreamResponse }] : [];
    });
  }

  #configsKey(span: Span): string {
    return this.#keys.pushConfigs(taskKey(span.scope, span.taskId));
  }
}
