/**
 * The store contract, unchanged, on RedisTaskStore against a real Redis: directly and behind 1-5 ms
 * of random latency per call. Plus what the contract cannot see: the listing sets follow updates
 * (no leftover entries) and option errors.
 */
import { describeTaskStoreContract, withLatency } from 'a2a-express-kit/testing';
import { RedisTaskStore } from 'a2a-express-kit/redis';
import { useTestRedis } from '../helpers/redis';
import type { RedisClient } from '../../lib/backends/redis/redis-client';

const redis = useTestRedis();
let client: RedisClient;
beforeAll(async () => {
  if (redis.describe !== describe) return;
  client = await redis.connect();
});

const makeStore = () => new RedisTaskStore({ client, keyPrefix: redis.keyPrefix });

describeTaskStoreContract('RedisTaskStore', makeStore, { describe: redis.describe });

describeTaskStoreContract('RedisTaskStore behind withLatency', () => withLatency(makeStore()), { describe: redis.describe });

redis.describe('RedisTaskStore beyond the contract', () => {
  const scope = { tenant: 't', owner: 'o' };
  const task = (id: string, state: 'TASK_STATE_WORKING' | 'TASK_STATE_COMPLETED', timestamp: string, contextId = 'c1') => ({
    id,
    contextId,
    status: { state, timestamp },
  });

  it('keeps exactly one listing entry per set after updates move a task between states and contexts', async () => {
    const prefix = `${redis.keyPrefix}index-${Date.now()}:`;
    const store = new RedisTaskStore({ client, keyPrefix: prefix });
    await store.create(scope, task('a', 'TASK_STATE_WORKING', '2026-01-01T00:00:00.000Z'));
    await store.update(scope, task('a', 'TASK_STATE_WORKING', '2026-01-01T00:00:01.000Z', 'c2'), 1);
    await store.update(scope, task('a', 'TASK_STATE_COMPLETED', '2026-01-01T00:00:02.000Z', 'c2'), 2);
    const keys = (await client.sendCommand<string[]>(['KEYS', `${prefix}*`])).sort();
    const sizes = await Promise.all(keys.filter((k) => !k.includes('task:')).map((k) => client.sendCommand<number>(['ZCARD', k])));
    expect(keys.filter((k) => !k.includes('task:')).map((k) => k.slice(prefix.length))).toEqual([
      // Retention's set of finished tasks: the task finished once, so it is there once.
      'tasks-finished',
      'tasks:1:t1:oall',
      'tasks:1:t1:octx-state:2:c2TASK_STATE_COMPLETED',
      'tasks:1:t1:octx:2:c2',
      'tasks:1:t1:ostate:TASK_STATE_COMPLETED',
    ]);
    expect(sizes).toEqual([1, 1, 1, 1, 1]);
  });

  it('lists a task without a context id, and no contextId filter matches it', async () => {
    const store = makeStore();
    const s = { tenant: `t-${Date.now()}`, owner: 'o' };
    await store.create(s, { id: `nc-${Date.now()}`, status: { state: 'TASK_STATE_WORKING', timestamp: '2026-01-01T00:00:00.000Z' } });
    expect((await store.list(s, { pageSize: 10 })).totalSize).toBe(1);
    expect((await store.list(s, { pageSize: 10, contextId: '' })).totalSize).toBe(0);
  });

  it('names the option in a construction error', () => {
    expect(() => new RedisTaskStore({ client: {} as RedisClient })).toThrow(/RedisTaskStore: option "client"/);
    expect(() => new RedisTaskStore({ client, keyPrefx: 'x' } as never)).toThrow(/did you mean "keyPrefix"/);
  });
});
