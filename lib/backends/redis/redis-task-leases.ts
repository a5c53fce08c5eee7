/**
 * TaskLeases on Redis. A lease is `SET lease:<key> <holder> NX PX <ttl>`, renewed every ttl/3 by a
 * script that extends it only while it still names this holder; release deletes it the same way
 * and PUBLISHes a notice, which wakes the processes waiting for it (they also poll, with a bounded
 * backoff, for a lease that expires because its holder died). Every held lease is also in one
 * sorted set scored by its expiry, in Redis server time, so claimExpired() finds a dead holder's
 * task without scanning keys; the claim removes it from the set inside one script, so exactly one
 * caller across all processes gets each.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import { consoleLogger, type Logger } from '../../logger.js';
import { parseOptions } from '../../options.js';
import type { LeasedTask, TaskLease, TaskLeases } from '../../engine/seams/task-leases.js';
import { RedisChannels } from './redis-channels.js';
import type { RedisClient } from './redis-client.js';
import { RedisKeys } from './redis-keys.js';
import { clientSchema, keyPrefixSchema, loggerSchema, millisecondsSchema } from './redis-options.js';
import { RedisScript } from './redis-script.js';

export interface RedisTaskLeasesOptions {
  /** A connected node-redis client for commands; duplicated for the release notices, not closed. */
  readonly client: RedisClient;
  /** Put before every key and channel. Default 'a2a:'. */
  readonly keyPrefix?: string;
  /**
   * How long a lease outlives its last renewal (renewed every third of it): how soon a dead
   * replica's tasks are settled, and how long a Redis hiccup may last before a lease is lost.
   * Default 10000.
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

// KEYS: live-lease set. ARGV: lease key prefix, how many at most. A member past its expiry whose
// lease is gone (its holder stopped renewing) is removed and returned: this caller claimed it.
// One past its expiry whose lease still exists is a renewal that is due; it stays.
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

/** Poll delays while waiting for a held lease: doubling from the first to the last. */
const FIRST_POLL_MS = 20;
const LAST_POLL_MS = 1_000;
const CLAIMS_PER_SWEEP = 100;

interface Held {
  readonly lease: TaskLease;
  /** Stops renewing without releasing. */
  stop(): void;
}

export class RedisTaskLeases implements TaskLeases {
  readonly sweepIntervalMs: number;
  readonly #client: RedisClient;
  readonly #keys: RedisKeys;
  readonly #ttlMs: number;
  readonly #logger: Logger;
  readonly #channels: RedisChannels;
  /** Who holds a lease, as stored in Redis: readable by an operator, unique per acquire. */
  readonly #holderPrefix = `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}/`;
  #acquired = 0;
  readonly #held = new Set<Held>();
  readonly #waiting = new Set<() => void>();
  #closed = false;

  constructor(options: RedisTaskLeasesOptions) {
    const parsed = parseOptions('RedisTaskLeases', optionsSchema, options);
    this.#client = parsed.client;
    this.#keys = new RedisKeys(parsed.keyPrefix);
    this.#ttlMs = parsed.leaseTtlMs;
    this.#logger = parsed.logger;
    this.#channels = new RedisChannels(this.#client, this.#logger);
    this.sweepIntervalMs = this.#ttlMs;
  }

  /** Leases this process holds now (a gauge). */
  get heldCount(): number {
    return this.#held.size;
  }

  async acquire(key: string, task: LeasedTask, waitMs: number): Promise<TaskLease | undefined> {
    if (this.#closed) throw new Error('RedisTaskLeases is closed');
    const holder = `${this.#holderPrefix}${++this.#acquired}`;
    const member = JSON.stringify([key, task.scope.tenant, task.scope.owner, task.taskId]);
    const keys = [this.#keys.lease(key), this.#keys.leases()];
    const attempt = () => ACQUIRE.run<[number, number?]>(this.#client, keys, [holder, this.#ttlMs, member]);

    // eslint-disable-next-line no-useless-assignment -- `left` is read after the loop's own attempt
    let [won, left] = await attempt();
    if (won === 1) return this.#took(key, member, holder);
    if (!(waitMs > 0) || this.#closed) return undefined;

    const deadline = Date.now() + waitMs;
    // eslint-disable-next-line no-useless-assignment -- set by the release notice between polls
    let notified = false;
    let wake: (() => void) | undefined;
    const onNotice = () => {
      notified = true;
      wake?.();
    };
    const channel = this.#channels.listen(this.#keys.leaseReleasedChannel(key), onNotice);
    this.#waiting.add(onNotice);
    try {
      // Subscribed before the next attempt, so a release after it is never missed (bounded by
      // waitMs: without a subscriber connection, polling still works).
      await untilOrAfter(channel.ready, waitMs);
      for (let poll = FIRST_POLL_MS; ; poll = Math.min(poll * 2, LAST_POLL_MS)) {
        notified = false;
        [won, left] = await attempt();
        if (won === 1) return this.#took(key, member, holder);
        const remaining = deadline - Date.now();
        if (remaining <= 0 || this.#closed) return undefined;
        if (notified) continue;
        // A notice, or the next poll: the holder may die, and then its lease just expires.
        const wait = Math.min(poll, remaining, left !== undefined && left > 0 ? left + 1 : poll);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(done, wait);
          timer.unref();
          function done() {
            clearTimeout(timer);
            wake = undefined;
            resolve();
          }
          wake = done;
        });
      }
    } finally {
      this.#waiting.delete(onNotice);
      channel.stop();
    }
  }

  async claimExpired(): Promise<LeasedTask[]> {
    const members = await CLAIM.run<string[]>(this.#client, [this.#keys.leases()], [this.#keys.lease(''), CLAIMS_PER_SWEEP]);
    return members.map((member) => {
      const [, tenant, owner, taskId] = JSON.parse(member) as [string, string, string, string];
      return { scope: { tenant, owner }, taskId };
    });
  }

  /**
   * Stops renewing every lease held here without releasing them (they expire, and another process
   * settles their tasks), ends pending acquires (undefined), and closes the subscriber connection.
   */
  async close(): Promise<void> {
    this.#closed = true;
    for (const held of this.#held) held.stop();
    this.#held.clear();
    for (const wake of this.#waiting) wake();
    await this.#channels.close();
  }

  /** A lease won; given back at once when close() came meanwhile (nothing would renew it). */
  async #took(key: string, member: string, holder: string): Promise<TaskLease | undefined> {
    const lease = this.#hold(key, member, holder);
    if (!this.#closed) return lease;
    await lease.release();
    return undefined;
  }

  #hold(key: string, member: string, holder: string): TaskLease {
    const keys = [this.#keys.lease(key), this.#keys.leases()];
    let lost = false;
    let renewing = false;
    let released: Promise<void> | undefined;
    const timer = setInterval(() => void renew(), Math.max(10, Math.floor(this.#ttlMs / 3)));
    timer.unref();
    const stop = () => {
      clearInterval(timer);
      this.#held.delete(held);
    };
    const renew = async () => {
      if (renewing) return; // the previous one is still on its way
      renewing = true;
      try {
        if ((await RENEW.run<number>(this.#client, keys, [holder, this.#ttlMs, member])) === 0 && !released) {
          lost = true;
          stop();
          this.#logger.warn({ lease: key }, 'a task lease expired before it was renewed; another replica may run the task now');
        }
      } catch (error) {
        // Not lost yet: the next renewal may still come in time.
        this.#logger.warn({ err: error, lease: key }, 'could not renew a task lease');
      } finally {
        renewing = false;
      }
    };
    const lease: TaskLease = {
      get lost() {
        return lost;
      },
      release: () => {
        released ??= (async () => {
          stop();
          try {
            await RELEASE.run(this.#client, keys, [holder, member, this.#keys.leaseReleasedChannel(key)]);
          } catch (error) {
            released = undefined; // a later release() tries again; meanwhile the lease just expires
            throw error;
          }
        })();
        return released;
      },
    };
    const held: Held = { lease, stop };
    this.#held.add(held);
    return lease;
  }
}

/** Settles when `promise` does (either way) or after `ms`, whichever is first. */
function untilOrAfter(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}
