/**
 * The leases contract on RedisTaskLeases against a real Redis, each instance on its own connection
 * (a replica each), with a 500 ms lease; then what only Redis shows: a lease taken from under its
 * holder is reported lost, keys are cleaned up, close() ends pending waits.
 */
import { describeTaskLeasesContract } from 'a2a-express-kit/testing';
import { RedisTaskLeases } from 'a2a-express-kit/redis';
import { silentLogger } from 'a2a-express-kit';
import { randomUUID } from 'node:crypto';
import { useTestRedis } from '../helpers/redis';
import { until } from '../helpers/async';
import type { RedisClient } from '../../lib/backends/redis/redis-client';

const TTL = 500;
const redis = useTestRedis();
let clients: RedisClient[] = [];
beforeAll(async () => {
  if (redis.describe !== describe) return;
  clients = await Promise.all([redis.connect(), redis.connect(), redis.connect()]);
});

let made = 0;
const makeLeases = (options: Partial<ConstructorParameters<typeof RedisTaskLeases>[0]> = {}) =>
  new RedisTaskLeases({ client: clients[made++ % clients.length], keyPrefix: redis.keyPrefix, leaseTtlMs: TTL, logger: silentLogger, ...options });

describeTaskLeasesContract('RedisTaskLeases', () => makeLeases(), { describe: redis.describe, ttlMs: TTL });

redis.describe('RedisTaskLeases on Redis', () => {
  const opened: RedisTaskLeases[] = [];
  const open = (options?: Parameters<typeof makeLeases>[0]) => {
    const leases = makeLeases(options);
    opened.push(leases);
    return leases;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((leases) => leases.close()));
  });
  const newTask = () => {
    const task = { scope: { tenant: 't', owner: 'o' }, taskId: `task-${randomUUID()}` };
    return { key: `key-${task.taskId}`, task };
  };
  const client = () => clients[0];

  it('stores the holder with a time to live, and lists the lease by its expiry until released', async () => {
    const leases = open();
    const { key, task } = newTask();
    const lease = (await leases.acquire(key, task, 0))!;
    const holder = await client().sendCommand<string>(['GET', `${redis.keyPrefix}lease:${key}`]);
    expect(holder).toMatch(new RegExp(`/${process.pid}/`));
    const ttl = await client().sendCommand<number>(['PTTL', `${redis.keyPrefix}lease:${key}`]);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(TTL);
    const member = JSON.stringify([key, 't', 'o', task.taskId]);
    expect(await client().sendCommand(['ZSCORE', `${redis.keyPrefix}leases`, member])).not.toBeNull();
    expect(leases.heldCount).toBe(1);
    await lease.release();
    expect(leases.heldCount).toBe(0);
    expect(await client().sendCommand(['EXISTS', `${redis.keyPrefix}lease:${key}`])).toBe(0);
    expect(await client().sendCommand(['ZSCORE', `${redis.keyPrefix}leases`, member])).toBeNull();
  });

  it('marks a lease lost when a renewal finds it taken by another holder', async () => {
    const leases = open();
    const { key, task } = newTask();
    const lease = (await leases.acquire(key, task, 0))!;
    await client().sendCommand(['SET', `${redis.keyPrefix}lease:${key}`, 'someone-else', 'PX', String(10 * TTL)]);
    await until(() => lease.lost, 'the lease to be reported lost', 5 * TTL);
    expect(leases.heldCount).toBe(0);
    // Releasing a lost lease leaves the new holder's alone.
    await lease.release();
    expect(await client().sendCommand(['GET', `${redis.keyPrefix}lease:${key}`])).toBe('someone-else');
  });

  it('close() ends a pending acquire with undefined and stops renewing', async () => {
    const [holder, waiter] = [open(), open()];
    const { key, task } = newTask();
    await holder.acquire(key, task, 0);
    const waiting = waiter.acquire(key, task, 60_000);
    await waiter.close();
    await expect(waiting).resolves.toBeUndefined();
    await expect(waiter.acquire(key, task, 0)).rejects.toThrow(/closed/);
  });

  it('a waiter subscribes to the release notice only while it waits', async () => {
    const [holder, waiter] = [open(), open()];
    const { key, task } = newTask();
    const lease = (await holder.acquire(key, task, 0))!;
    const waiting = waiter.acquire(key, task, 60_000);
    const channel = `${redis.keyPrefix}lease-released:${key}`;
    const numsub = async () => (await client().sendCommand<[string, number]>(['PUBSUB', 'NUMSUB', channel]))[1];
    let subscribed = 0;
    for (let i = 0; i < 500 && subscribed === 0; i++) subscribed = await numsub();
    expect(subscribed).toBe(1);
    await lease.release();
    await (await waiting)!.release();
    for (let i = 0; i < 500 && subscribed > 0; i++) subscribed = await numsub();
    expect(subscribed).toBe(0);
  });

  it('names the option in a construction error', () => {
    expect(() => makeLeases({ leaseTtlMs: 0 })).toThrow(/RedisTaskLeases: option "leaseTtlMs"/);
    expect(() => makeLeases({ leaseTTL: 5 } as never)).toThrow(/did you mean "leaseTtlMs"/);
  });
});
