/**
 * The Redis push stores: the PushConfigStore contract unchanged, then the shared outbox: a task
 * whose cursor is behind its event stream and whose claim expired is taken over by one sweeping
 * replica; a live delivery first catches up what its config is still owed; cursors never skip.
 */
import { randomUUID } from 'node:crypto';
import type { StreamResponse, Task, TaskScope } from 'a2a-express-kit';
import { RedisPushConfigStore, RedisPushOutbox, RedisTaskEventBus, RedisTaskStore } from 'a2a-express-kit/redis';
import { describePushConfigStoreContract } from 'a2a-express-kit/testing';
import type { RedisClient } from '../../lib/backends/redis/redis-client';
import { taskKey } from '../../lib/engine/seams/task-store';
import { useTestRedis } from '../helpers/redis';
import { takeoverRace, type SweepStep } from './takeover-race';

const redis = useTestRedis();
let client: RedisClient;
beforeAll(async () => {
  if (redis.describe !== describe) return;
  client = await redis.connect();
});
const keyPrefix = redis.keyPrefix;

describePushConfigStoreContract('RedisPushConfigStore', () => new RedisPushConfigStore({ client, keyPrefix }), { describe: redis.describe });

const scopeOf = (): TaskScope => ({ tenant: `t-${randomUUID()}`, owner: 'alice' });
const working = (id: string, text: string): Task => ({
  id,
  contextId: `ctx-${id}`,
  status: {
    state: 'TASK_STATE_WORKING',
    timestamp: new Date().toISOString(),
    message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }] },
  },
});
const statusEvent = (task: Task): StreamResponse => ({ statusUpdate: { taskId: task.id, contextId: task.contextId ?? '', status: task.status } });
const config = (taskId: string, id: string) => ({ id, taskId, url: `https://hooks.example.com/${id}`, protocol: '1.0' as const });

redis.describe('RedisPushOutbox', () => {
  /** One replica's view: its own outbox (its own claims) on the shared Redis. */
  const replica = (claimTtlMs = 60_000, connection: RedisClient = client) => {
    const taskStore = new RedisTaskStore({ client: connection, keyPrefix });
    const configStore = new RedisPushConfigStore({ client: connection, keyPrefix });
    return { taskStore, configStore, outbox: new RedisPushOutbox({ client: connection, keyPrefix, taskStore, configStore, claimTtlMs }) };
  };
  const bus = () => new RedisTaskEventBus({ client, keyPrefix });

  /** A task with a config, then `count` events committed and published after it. */
  async function taskWithEvents(count: number) {
    const a = replica();
    const scope = scopeOf();
    const id = `task-${randomUUID()}`;
    await a.taskStore.create(scope, working(id, 'v1'));
    await a.configStore.put(scope, config(id, 'c-1'), 10);
    const events = bus();
    for (let v = 1; v <= count; v++) {
      const task = working(id, `v${v + 1}`);
      await a.taskStore.update(scope, task, v, { kind: 'replace', event: statusEvent(task) });
      await events.publish(taskKey(scope, id), { event: statusEvent(task), task, version: v + 1 });
    }
    await events.close();
    return { scope, id };
  }

  it('a task behind its stream is claimed by one sweeping replica; another sees it claimed', async () => {
    const { id } = await taskWithEvents(2);
    const b = replica();
    const c = replica();
    const [fromB, fromC] = await Promise.all([b.outbox.pending(), c.outbox.pending()]);
    const mine = [...fromB, ...fromC].filter((d) => d.taskId === id);
    expect(mine.map((d) => d.version)).toEqual([2, 3]);
    // Only one of them has it.
    expect([fromB, fromC].filter((list) => list.some((d) => d.taskId === id))).toHaveLength(1);
    const owner = fromB.some((d) => d.taskId === id) ? b : c;
    for (const delivery of mine) await owner.outbox.remove(delivery.id);
    expect(owner.outbox.size).toBe(0);
    // Delivered: nothing owed any more, and the claim was released.
    expect((await replica().outbox.pending()).filter((d) => d.taskId === id)).toEqual([]);
  });

  it('a sweep over many tasks claims them with several commands in flight, not one round trip after another', async () => {
    const tasks = await Promise.all(Array.from({ length: 40 }, () => taskWithEvents(1)));
    // The same connection, counting the commands sent and not yet answered.
    let inFlight = 0;
    let most = 0;
    const counting = new Proxy(client, {
      get(target, name) {
        if (name === 'sendCommand') {
          return async (args: Parameters<RedisClient['sendCommand']>[0]) => {
            most = Math.max(most, ++inFlight);
            try {
              return await target.sendCommand(args);
            } finally {
              inFlight--;
            }
          };
        }
        const value = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const sweeper = replica(60_000, counting);
    const taken = await sweeper.outbox.pending();
    for (const { id } of tasks) expect({ id, versions: taken.filter((d) => d.taskId === id).map((d) => d.version) }).toEqual({ id, versions: [2] });
    expect(most).toBeGreaterThan(1);
    for (const delivery of taken) await sweeper.outbox.remove(delivery.id);
  });

  it('a live delivery first catches up the events its config is still owed', async () => {
    const { scope, id } = await taskWithEvents(2);
    const b = replica();
    const live = {
      id: 'live-4',
      scope,
      taskId: id,
      configId: 'c-1',
      version: 4,
      body: '{}',
      contentType: 'application/a2a+json',
      final: false,
      attempts: 0,
    };
    const queued = (await b.outbox.add([live])) ?? [];
    expect(queued.map((d) => d.version)).toEqual([2, 3, 4]);
    // Done out of order (4 first): the cursor waits for 2 and 3.
    await b.outbox.remove('live-4');
    expect((await b.configStore.cursors(scope, id))[0].delivered).toBe(1);
    for (const delivery of queued.slice(0, 2)) await b.outbox.remove(delivery.id);
    expect((await b.configStore.cursors(scope, id))[0].delivered).toBe(3);
  });

  it('a live event of a task whose deliveries another replica holds waits for them: delivered after the owed ones, in order, once', async () => {
    const { scope, id } = await taskWithEvents(2);
    const sweeper = replica();
    const taken = (await sweeper.outbox.pending()).filter((d) => d.taskId === id);
    expect(taken.map((d) => d.version)).toEqual([2, 3]);
    // Meanwhile another replica commits event 4 of the task: sent now it would overtake 2 and 3.
    const other = replica();
    const fourth = working(id, 'v4');
    await other.taskStore.update(scope, fourth, 3, { kind: 'replace', event: statusEvent(fourth) });
    const events = bus();
    await events.publish(taskKey(scope, id), { event: statusEvent(fourth), task: fourth, version: 4 });
    await events.close();
    const live = {
      id: 'live-4b',
      scope,
      taskId: id,
      configId: 'c-1',
      version: 4,
      body: '{}',
      contentType: 'application/a2a+json',
      final: false,
      attempts: 0,
    };
    expect((await other.outbox.add([live])) ?? []).toEqual([]);
    // The sweeper delivers what it took, advancing the cursor, then releases the claim.
    for (const delivery of taken) await sweeper.outbox.remove(delivery.id);
    expect((await sweeper.configStore.cursors(scope, id))[0].delivered).toBe(3);
    // The next sweep takes event 4 over, once.
    const after = (await other.outbox.pending()).filter((d) => d.taskId === id);
    expect(after.map((d) => d.version)).toEqual([4]);
    for (const delivery of after) await other.outbox.remove(delivery.id);
    expect((await other.configStore.cursors(scope, id))[0].delivered).toBe(4);
    expect((await sweeper.outbox.pending()).filter((d) => d.taskId === id)).toEqual([]);
  });

  describe('takeover while this replica commits an event of its own (the race forced, see takeover-race.ts)', () => {
    async function race(step: SweepStep) {
      const { scope, id } = await taskWithEvents(2);
      const heir = replica(400);
      return takeoverRace(heir, step, scope, id, async () => {
        const fourth = working(id, 'v4');
        await heir.taskStore.update(scope, fourth, 3, { kind: 'replace', event: statusEvent(fourth) });
        const events = bus();
        await events.publish(taskKey(scope, id), { event: statusEvent(fourth), task: fourth, version: 4 });
        await events.close();
      });
    }

    it('an event committed after the sweep read the log is delivered after the owed ones, not left to the sweep', async () => {
      expect(await race('task')).toEqual([2, 3, 4]);
    });

    it('an event the sweep read from the log is not delivered a second time by its live add', async () => {
      expect(await race('cursors')).toEqual([2, 3, 4]);
    });
  });
});
