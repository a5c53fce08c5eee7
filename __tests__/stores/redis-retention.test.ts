/**
 * RedisTaskStore.removeFinished beyond the contract: a removed task leaves no key behind (hash,
 * delta list, listing sets, event stream, push configs, order, claim, push-tasks member, its
 * finished-set member), and an unfinished task keeps every key it had.
 */
import { randomUUID } from 'node:crypto';
import type { StreamResponse, Task, TaskScope } from 'a2a-express-kit';
import { RedisPushConfigStore, RedisTaskEventBus, RedisTaskStore } from 'a2a-express-kit/redis';
import type { RedisClient } from '../../lib/backends/redis/redis-client';
import { useTestRedis } from '../helpers/redis';

const redis = useTestRedis();
let client: RedisClient;
beforeAll(async () => {
  if (redis.describe !== describe) return;
  client = await redis.connect();
});

const statusUpdate = (task: Task) => ({ taskId: task.id, contextId: task.contextId ?? '', status: task.status });
const statusEvent = (task: Task): StreamResponse => ({ statusUpdate: statusUpdate(task) });

redis.describe('RedisTaskStore retention', () => {
  /** A store linked to its bus (events go to the task's stream) and a push config store, on a prefix of their own. */
  const setUp = () => {
    const keyPrefix = `${redis.keyPrefix}retention-${randomUUID()}:`;
    const eventBus = new RedisTaskEventBus({ client, keyPrefix });
    return {
      keyPrefix,
      store: new RedisTaskStore({ client, keyPrefix, eventBus }),
      configs: new RedisPushConfigStore({ client, keyPrefix }),
      keys: async () => (await client.sendCommand<string[]>(['KEYS', `${keyPrefix}*`])).map((k) => k.slice(keyPrefix.length)).sort(),
    };
  };

  /** A task streamed as the engine writes it: created, an artifact in chunks, a status, with a push config put while it runs. */
  async function streamedTask(s: ReturnType<typeof setUp>, scope: TaskScope, state: 'TASK_STATE_COMPLETED' | 'TASK_STATE_WORKING') {
    const id = `task-${randomUUID()}`;
    const task: Task = { id, contextId: `ctx-${id}`, status: { state: 'TASK_STATE_WORKING', timestamp: '2001-01-01T00:00:00.000Z' } };
    await s.store.create(scope, task);
    await s.configs.put(scope, { id: 'hook', taskId: id, url: 'https://hooks.example.com/x', protocol: '1.0' }, 10);
    let version = 1;
    for (let i = 0; i < 3; i++) {
      const update = {
        taskId: id,
        contextId: task.contextId!,
        artifact: { artifactId: 'out', parts: [{ text: `${i}` }] },
        append: i > 0,
        lastChunk: false,
      };
      task.artifacts = [{ artifactId: 'out', parts: [...(task.artifacts?.[0].parts ?? []), { text: `${i}` }] }];
      version = await s.store.update(scope, task, version, { kind: 'artifact', update, event: { artifactUpdate: update } });
    }
    const next: Task = { ...task, status: { state, timestamp: '2001-01-01T00:00:01.000Z' } };
    await s.store.update(scope, next, version, { kind: 'status', update: statusUpdate(next), event: statusEvent(next) });
    return id;
  }

  it('removes every key of a finished task and leaves the keys of an unfinished one', async () => {
    const s = setUp();
    const running = { tenant: 'acme', owner: 'bob' };
    await streamedTask(s, running, 'TASK_STATE_WORKING');
    const keysOfRunning = await s.keys();
    await streamedTask(s, { tenant: 'acme', owner: 'alice' }, 'TASK_STATE_COMPLETED');
    // The finished task has its own hash, deltas, listing sets, stream, push keys; the finished set appears.
    expect((await s.keys()).length).toBeGreaterThan(keysOfRunning.length + 5);
    expect(await s.store.removeFinished('2001-01-02T00:00:00.000Z', 100)).toBe(1);
    expect(await s.keys()).toEqual(keysOfRunning);
  });

  it('keeps the push-tasks member of a running task and drops the finished one', async () => {
    const s = setUp();
    const running = await streamedTask(s, { tenant: 'acme', owner: 'bob' }, 'TASK_STATE_WORKING');
    await streamedTask(s, { tenant: 'acme', owner: 'alice' }, 'TASK_STATE_COMPLETED');
    expect(await s.store.removeFinished('2001-01-02T00:00:00.000Z', 100)).toBe(1);
    expect(await client.sendCommand<string[]>(['SMEMBERS', `${s.keyPrefix}push-tasks`])).toEqual([JSON.stringify(['acme', 'bob', running])]);
  });

  it('skips a task another sweeper removed between the read and the script, counting it once', async () => {
    const s = setUp();
    const scope = { tenant: 'acme', owner: 'alice' };
    await streamedTask(s, scope, 'TASK_STATE_COMPLETED');
    await streamedTask(s, scope, 'TASK_STATE_COMPLETED');
    const counts = await Promise.all([1, 2, 3].map(() => s.store.removeFinished('2001-01-02T00:00:00.000Z', 100)));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(2);
    expect(await s.keys()).toEqual([]);
  });
});
