/**
 * A RedisTaskStore linked to its backend's bus appends each committed event to the task's stream
 * and publishes it in the write's own script: a replica killed between the store write and the
 * bus's publish loses nothing (Last-Event-ID resumes and durable push read that stream). The bus's
 * publish() then adds no second copy, and still publishes what no store wrote.
 */
import { createRedisBackend, RedisTaskEventBus, RedisTaskStore, type RedisBackend } from 'a2a-express-kit/redis';
import { silentLogger, type AgentExecutor, type CommittedEvent, type StreamResponse, type Task, type TaskEventBus } from 'a2a-express-kit';
import { randomUUID } from 'node:crypto';
import { until } from '../helpers/async';
import { startAgent } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { useTestRedis } from '../helpers/redis';
import type { RedisClient } from '../../lib/backends/redis/redis-client';
import { taskKey } from '../../lib/engine/seams/task-store';

const redis = useTestRedis();
const scope = { tenant: 't', owner: 'o' };

const working = (id: string, text: string): Task => ({
  id,
  contextId: 'c',
  status: {
    state: 'TASK_STATE_WORKING',
    timestamp: new Date().toISOString(),
    message: { role: 'ROLE_AGENT', messageId: randomUUID(), parts: [{ text }] },
  },
});
const statusEvent = (task: Task): StreamResponse => ({ statusUpdate: { taskId: task.id, contextId: 'c', status: task.status } });

redis.describe('RedisTaskStore linked to the bus (createRedisBackend)', () => {
  let client: RedisClient;
  let backend: RedisBackend;
  let peer: RedisTaskEventBus;
  beforeAll(async () => {
    const peerClient = await redis.connect();
    client = await redis.connect();
    backend = await createRedisBackend({ client, keyPrefix: redis.keyPrefix, logger: silentLogger, streamMaxLength: 50, streamRetentionMs: 60_000 });
    // Another replica's bus: its own connections, the same Redis and prefix.
    peer = new RedisTaskEventBus({ client: peerClient, keyPrefix: redis.keyPrefix, logger: silentLogger });
  });
  afterAll(async () => {
    await peer?.close();
    await backend?.close();
  });

  const streamKey = (id: string) => `${redis.keyPrefix}events:${taskKey(scope, id)}`;
  const entries = (id: string) => client.sendCommand<Array<[string, [string, string]]>>(['XRANGE', streamKey(id), '-', '+']);

  it('puts a written event in the stream and on the channel with no bus.publish after the write', async () => {
    const id = `crash-${randomUUID()}`;
    const key = taskKey(scope, id);
    const heard: CommittedEvent[] = [];
    const stop = peer.subscribe(key, (committed) => heard.push(committed));
    await peer.subscribed();

    const first = working(id, 'first');
    expect(await backend.taskStore.create(scope, first)).toBe(1);
    const second = working(id, 'second');
    expect(await backend.taskStore.update(scope, second, 1, { kind: 'replace', event: statusEvent(second) })).toBe(2);
    // The replica "dies" here: the engine's bus.publish of either event never runs.

    const expected: CommittedEvent[] = [
      { event: { task: first }, task: first, version: 1 },
      { event: statusEvent(second), task: second, version: 2 },
    ];
    expect(await backend.eventBus.history(key, 0)).toEqual(expected);
    expect(await peer.history(key, 1)).toEqual(expected.slice(1));
    await until(() => heard.length === 2, 'the live events on the other replica');
    expect(heard).toEqual(expected);
    stop();

    // The bus's own format, byte for byte, under the bus's entry ids, trimmed and expiring as the bus's.
    const raw = await entries(id);
    expect(raw.map(([entryId]) => entryId)).toEqual(['1-0', '2-0']);
    expect(raw.map(([, fields]) => fields)).toEqual(expected.map((committed) => ['e', JSON.stringify(committed)]));
    const ttl = await client.sendCommand<number>(['PTTL', streamKey(id)]);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('publish() of an event the store wrote adds no copy and sends nothing; another event is published as before', async () => {
    const id = `dup-${randomUUID()}`;
    const key = taskKey(scope, id);
    const task = working(id, 'one');
    await backend.taskStore.create(scope, task);
    const next = working(id, 'two');
    await backend.taskStore.update(scope, next, 1, { kind: 'replace', event: statusEvent(next) });

    const sent = jest.spyOn(client, 'sendCommand');
    try {
      await backend.eventBus.publish(key, { event: { task }, task, version: 1 });
      await backend.eventBus.publish(key, { event: statusEvent(next), task: next, version: 2 });
      expect(sent).not.toHaveBeenCalled();
      // Not written through the store (another store, or a direct call): the bus publishes it.
      const third = working(id, 'three');
      await backend.eventBus.publish(key, { event: statusEvent(third), task: third, version: 3 });
      expect(sent).toHaveBeenCalled();
    } finally {
      sent.mockRestore();
    }
    expect((await entries(id)).map(([entryId]) => entryId)).toEqual(['1-0', '2-0', '3-0']);
  });

  it('appends nothing for a write without an event, nor for a refused write', async () => {
    const id = `quiet-${randomUUID()}`;
    await backend.taskStore.create(scope, working(id, 'one'));
    // A follow-up joining the history: the version moves, no event is logged.
    expect(await backend.taskStore.update(scope, working(id, 'joined'), 1, { kind: 'replace' })).toBe(2);
    expect(await backend.taskStore.update(scope, working(id, 'no change'), 2)).toBe(3);
    const stale = working(id, 'stale');
    await expect(backend.taskStore.update(scope, stale, 1, { kind: 'replace', event: statusEvent(stale) })).rejects.toThrow(/no longer at version 1/);
    await expect(backend.taskStore.update({ tenant: 't', owner: 'other' }, stale, 3, { kind: 'replace', event: statusEvent(stale) })).rejects.toThrow(
      /does not exist in this scope/,
    );
    await expect(backend.taskStore.create(scope, working(id, 'again'))).rejects.toThrow(/already exists/);
    expect((await entries(id)).map(([entryId]) => entryId)).toEqual(['1-0']);
    const last = working(id, 'last');
    await backend.taskStore.update(scope, last, 3, { kind: 'replace', event: statusEvent(last) });
    expect((await backend.eventBus.history(taskKey(scope, id), 3))?.map((c) => c.version)).toEqual([4]);
  });

  it('a store without the bus writes no stream (as before)', async () => {
    const store = new RedisTaskStore({ client, keyPrefix: redis.keyPrefix });
    const id = `alone-${randomUUID()}`;
    await store.create(scope, working(id, 'one'));
    const next = working(id, 'two');
    await store.update(scope, next, 1, { kind: 'replace', event: statusEvent(next) });
    expect(await entries(id)).toEqual([]);
    expect(() => new RedisTaskStore({ client, eventBus: {} as never })).toThrow(/RedisTaskStore: option "eventBus": must be a RedisTaskEventBus/);
  });

  it('behind a router whose bus never publishes, every event of a task is still in the stream', async () => {
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start();
        await events.artifact({ artifactId: 'a', text: 'result' });
        return events.complete('done');
      },
    };
    // The replica's publishes are lost, every one of them (as if it died after each store write).
    const bus = backend.eventBus;
    const mute: TaskEventBus = {
      publish: () => undefined,
      subscribe: (key, listener) => bus.subscribe(key, listener),
      requestCancel: (key) => bus.requestCancel(key),
      onCancelRequest: (key, listener) => bus.onCancelRequest(key, listener),
      get subscriberCount() {
        return bus.subscriberCount;
      },
    };
    const server = await startAgent(executor, { taskStore: backend.taskStore, eventBus: mute });
    try {
      const reply = await rpc(server.url, 'SendMessage', userMessage('hello'));
      const task: Task = reply.body.result.task;
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      const streams = await client.sendCommand<string[]>(['KEYS', `${redis.keyPrefix}events:*${task.id}`]);
      expect(streams).toHaveLength(1);
      const logged = (await client.sendCommand<Array<[string, [string, string]]>>(['XRANGE', streams[0], '-', '+'])).map(
        ([, fields]) => JSON.parse(fields[1]) as CommittedEvent,
      );
      // start() creates the task (its `{ task }` event), then the artifact, then the final status.
      expect(logged.map((c) => c.version)).toEqual([1, 2, 3]);
      expect(logged.map((c) => Object.keys(c.event)[0])).toEqual(['task', 'artifactUpdate', 'statusUpdate']);
      expect(logged[2].task).toEqual(task);
    } finally {
      await server.close();
    }
  });
});
