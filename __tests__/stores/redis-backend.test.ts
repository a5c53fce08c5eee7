/**
 * createRedisBackend(): option errors, a client it connects from a URL (and closes) or one it is
 * given (and leaves open), and a router built from `...backend.options` serving a task end to end
 * with the task in Redis.
 */
import { createRedisBackend, type RedisBackend } from 'a2a-express-kit/redis';
import { silentLogger, type AgentExecutor } from 'a2a-express-kit';
import { until } from '../helpers/async';
import { startAgent } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { useTestRedis } from '../helpers/redis';

const redis = useTestRedis();

describe('createRedisBackend options', () => {
  it('needs exactly one of url and client', async () => {
    await expect(createRedisBackend({})).rejects.toThrow(/createRedisBackend: option "url": pass either url or client/);
    const client = { sendCommand() {}, duplicate() {}, connect() {}, subscribe() {}, unsubscribe() {}, on() {}, isOpen: true };
    await expect(createRedisBackend({ url: 'redis://127.0.0.1:1', client: client as never })).rejects.toThrow(/exactly one/);
  });

  it('names a bad or misspelt option', async () => {
    await expect(createRedisBackend({ url: 'http://localhost' })).rejects.toThrow(/option "url": must be a redis:\/\/ or rediss:\/\/ URL/);
    await expect(createRedisBackend({ url: 'redis://x', leaseTTLMs: 5 } as never)).rejects.toThrow(/did you mean "leaseTtlMs"/);
    await expect(createRedisBackend({ url: 'redis://x', streamMaxLength: 0 })).rejects.toThrow(/option "streamMaxLength"/);
  });

  it('gives up connecting after connectTimeoutMs, without showing the password', async () => {
    const attempt = createRedisBackend({ url: 'redis://:secret@127.0.0.1:1', connectTimeoutMs: 200, logger: silentLogger });
    await expect(attempt).rejects.toThrow(/could not connect to redis:\/\/:\*\*\*@127\.0\.0\.1:1 within 200 ms/);
    await expect(attempt).rejects.not.toThrow(/secret/);
  });
});

redis.describe('createRedisBackend on Redis', () => {
  it('connects from url, and close() closes what it opened', async () => {
    const backend = await createRedisBackend({ url: redis.url(), keyPrefix: redis.keyPrefix, logger: silentLogger });
    expect(Object.keys(backend.options).sort()).toEqual(['eventBus', 'taskLeases', 'taskStore']);
    const scope = { tenant: 't', owner: 'o' };
    await backend.taskStore.create(scope, { id: `url-${Date.now()}`, status: { state: 'TASK_STATE_WORKING' } });
    await backend.close();
    await backend.close();
    await expect(backend.taskStore.get(scope, 'x')).rejects.toThrow();
  });

  it('uses a client it is given and leaves it open', async () => {
    const client = await redis.connect();
    const backend = await createRedisBackend({ client, keyPrefix: redis.keyPrefix, logger: silentLogger });
    await backend.close();
    expect(client.isOpen).toBe(true);
    expect(await client.sendCommand(['PING'])).toBe('PONG');
  });

  describe('behind createA2ARouter', () => {
    let backend: RedisBackend;
    beforeAll(async () => {
      backend = await createRedisBackend({ url: redis.url(), keyPrefix: redis.keyPrefix, logger: silentLogger, leaseTtlMs: 1_000 });
    });
    afterAll(() => backend?.close());

    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start();
        await events.artifact({ artifactId: 'a', text: 'result' });
        return events.complete('done');
      },
    };

    it('serves SendMessage with the task stored in Redis and its events in the stream', async () => {
      const server = await startAgent(executor, { ...backend.options });
      try {
        const reply = await rpc(server.url, 'SendMessage', userMessage('hello'));
        expect(reply.body.error).toBeUndefined();
        const task = reply.body.result.task;
        expect(task.status.state).toBe('TASK_STATE_COMPLETED');
        const got = await rpc(server.url, 'GetTask', { id: task.id });
        expect(got.body.result.status.state).toBe('TASK_STATE_COMPLETED');
        const client = await redis.connect();
        expect(await client.sendCommand(['EXISTS', `${redis.keyPrefix}task:${task.id}`])).toBe(1);
        const streams = await client.sendCommand<string[]>(['KEYS', `${redis.keyPrefix}events:*${task.id}`]);
        expect(streams).toHaveLength(1);
        expect(await client.sendCommand<number>(['XLEN', streams[0]])).toBeGreaterThanOrEqual(3);
        // The execution went idle: its lease is given back.
        await until(() => backend.taskLeases.heldCount === 0, 'the lease to be released');
      } finally {
        await server.router.close();
        await server.close();
      }
    });
  });
});
