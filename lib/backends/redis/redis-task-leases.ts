/** TaskLeases on Redis. */
import { z } from 'zod';
import { consoleLogger, type Logger, parseOptions } from '../../options.js';
import type { LeasedTask } from '../../engine/seams/task-leases.js';
import { ExpiringLeases, type LeaseRef, type ReleaseNotices } from '../shared/expiring-leases.js';
import { RedisChannels } from './redis-channels.js';
import { type RedisClient, clientSchema, keyPrefixSchema, loggerSchema, millisecondsSchema, RedisScript } from './redis-client.js';
import { leaseMember, RedisKeys } from './redis-keys.js';

export interface RedisTaskLeasesOptions {
  /** A connected node-redis client for commands; duplicated for the release notices, not closed. */
  readonly client: RedisClient;
  /** Put before every key and channel. Default 'a2a:'. */
  readonly keyPrefix?: string;
  /**
   * How long a lease outlives its last renewal (renewed every third of it): how soon a dead replica's tasks are settled, and how long a Redis hiccup
   * may last before a lease is lost. Default 10000.
   */
  readonly leaseTtlMs?: number;
  /** Renewal failures are reported here. Default: the console. */
  readonly logger?: Logger;
}

const optionsSchema = z.strictObject({
  client: clientSchema,
  keyPrefix: keyPrefixSchema,
  leaseTtlMs: millisecondsSchema(30).default(10_000),
  logger: loggerSchema.default(consoleLogger),
});

// Redis server time in ms, so every process scores expiries on the same clock.
const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

// KEYS: lease, live-lease set. ARGV: holder, ttl, member. Replies {1}, or {0, ms the holder has left}.
const ACQUIRE = new RedisScript(`
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {0, redis.call('PTTL', KEYS[1])} end
${NOW}
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
return {1}
`);

// As ACQUIRE. Replies 1, or 0 when the lease no longer names this holder (expired, or taken).
const RENEW = new RedisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
${NOW}
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[3])
return 1
`);

// KEYS: lease, live-lease set. ARGV: holder, member, release channel.
const RELEASE = new RedisScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('PUBLISH', ARGV[3], '')
return 1
`);

// KEYS: live-lease set. ARGV: lease key prefix, how many at most. A member past its expiry whose lease is gone (its holder stopped renewing) is
// removed and returned: this caller claimed it. One past its expiry whose lease still exists is a renewal that is due; it stays.
const CLAIM = new RedisScript(`
${NOW}
local claimed = {}
for _, member in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. now, 'LIMIT', 0, tonumber(ARGV[2]))) do
  if redis.call('EXISTS', ARGV[1] .. cjson.decode(member)[1]) == 0 then
    redis.call('ZREM', KEYS[1], member)
    claimed[#claimed + 1] = member
  end
end
return claimed
`);

// KEYS: mid-turn set, live-lease set. ARGV: lease key prefix, how many at most, task key prefix. A task mid-turn with neither a lease nor a
// live-lease entry runs nowhere (a write given up on that ran later): every caller gets it, and whichever takes its lease settles it. A task gone
// leaves.
const STRANDED = new RedisScript(`
local stranded = {}
for _, member in ipairs(redis.call('SMEMBERS', KEYS[1])) do
  if #stranded >= tonumber(ARGV[2]) then break end
  local task = cjson.decode(member)
  if redis.call('EXISTS', ARGV[3] .. task[4]) == 0 then redis.call('SREM', KEYS[1], member)
  elseif not redis.call('ZSCORE', KEYS[2], member) and redis.call('EXISTS', ARGV[1] .. task[1]) == 0 then
    stranded[#stranded + 1] = member
  end
end
return stranded
`);

const CLAIMS_PER_SWEEP = 100;

/** A lease's member of the live-lease set: what claimExpired() returns for it. */
const memberOf = ({ key, task }: LeaseRef): string => leaseMember(key, task.scope, task.taskId);

/**
 * A lease is `SET lease:<key> <holder> NX PX <ttl>`, renewed every ttl/3 by a script that extends it only while it still names this holder; release
 * deletes it the same way and PUBLISHes a notice, which wakes the processes waiting for it (they also poll, with a bounded backoff, for a lease that
 * expires because its holder died). Every held lease is also in one sorted set scored by its expiry, in Redis server time, so claimExpired() finds a
 * dead holder's task without scanning keys; the claim removes it from the set inside one script, so exactly one caller across all processes gets
 * each. With them, the tasks mid-turn that have no lease at all.
 */
export class RedisTaskLeases extends ExpiringLeases {
  readonly #client: RedisClient;
  readonly #keys: RedisKeys;
  readonly #channels: RedisChannels;

  constructor(options: RedisTaskLeasesOptions) {
    const parsed = parseOptions('RedisTaskLeases', optionsSchema, options);
    super(parsed.leaseTtlMs, parsed.logger);
    this.#client = parsed.client;
    this.#keys = new RedisKeys(parsed.keyPrefix);
    this.#channels = new RedisChannels(this.#client, this.logger);
  }

  protected async take(lease: LeaseRef): Promise<{ left?: number } | undefined> {
    const [won, left] = await ACQUIRE.run<[number, number?]>(this.#client, this.#keysOf(lease), [lease.holder, this.ttlMs, memberOf(lease)]);
    return won === 1 ? undefined : { left };
  }

  protected async renew(lease: LeaseRef): Promise<boolean> {
    return (await RENEW.run<number>(this.#client, this.#keysOf(lease), [lease.holder, this.ttlMs, memberOf(lease)])) !== 0;
  }

  protected async release(lease: LeaseRef): Promise<void> {
    await RELEASE.run(this.#client, this.#keysOf(lease), [lease.holder, memberOf(lease), this.#keys.leaseReleasedChannel(lease.key)]);
  }

  async isHeld(key: string): Promise<boolean> {
    return (await this.#client.sendCommand<number>(['EXISTS', this.#keys.lease(key)])) === 1;
  }

  async claimExpired(): Promise<LeasedTask[]> {
    const members = await CLAIM.run<string[]>(this.#client, [this.#keys.leases()], [this.#keys.lease(''), CLAIMS_PER_SWEEP]);
    const stranded = await STRANDED.run<string[]>(
      this.#client,
      [this.#keys.midTurnTasks(), this.#keys.leases()],
      [this.#keys.lease(''), CLAIMS_PER_SWEEP, this.#keys.task('')],
    );
    return [...new Set([...members, ...stranded])].map((member) => {
      const [, tenant, owner, taskId] = JSON.parse(member) as [string, string, string, string];
      return { scope: { tenant, owner }, taskId };
    });
  }

  protected listenForRelease(key: string, notice: () => void): ReleaseNotices {
    return this.#channels.listen(this.#keys.leaseReleasedChannel(key), notice);
  }

  protected closeNotices(): Promise<void> {
    return this.#channels.close();
  }

  #keysOf({ key }: LeaseRef): string[] {
    return [this.#keys.lease(key), this.#keys.leases()];
  }
}
