/**
 * The event bus contract on RedisTaskEventBus against a real Redis, with a peer on its own
 * connection (another process's view); then what only Redis shows: channels released once the last
 * subscriber leaves, streams trimmed and expiring, catch-up after a lost subscriber connection.
 */
import { describeTaskEventBusContract } from 'a2a-express-kit/testing';
import { RedisTaskEventBus } from 'a2a-express-kit/redis';
import { silentLogger, type CommittedEvent } from 'a2a-express-kit';
import { randomUUID } from 'node:crypto';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { useTestRedis } from '../helpers/redis';
import { until } from '../helpers/async';
import type { RedisClient } from '../../lib/backends/redis/redis-client';

const redis = useTestRedis();
let client: RedisClient;
let peerClient: RedisClient;
beforeAll(async () => {
  if (redis.describe !== describe) return;
  [client, peerClient] = await Promise.all([redis.connect(), redis.connect()]);
});

const makeBus = (c: RedisClient = client, options: Partial<ConstructorParameters<typeof RedisTaskEventBus>[0]> = {}) =>
  new RedisTaskEventBus({ client: c, keyPrefix: redis.keyPrefix, ...options });

// Buses of the tests below, closed even when a test fails (an open one would reconnect forever).
const opened: RedisTaskEventBus[] = [];
const openBus = (...args: Parameters<typeof makeBus>) => {
  const bus = makeBus(...args);
  opened.push(bus);
  return bus;
};
afterEach(async () => {
  await Promise.all(opened.splice(0).map((bus) => bus.close()));
});

describeTaskEventBusContract('RedisTaskEventBus', () => makeBus(), {
  describe: redis.describe,
  makePeer: () => makeBus(peerClient),
  whenSubscribed: (bus) => bus.subscribed(),
});

const event = (key: string, version: number): CommittedEvent => ({
  event: { statusUpdate: { taskId: key, contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } },
  task: { id: key, contextId: 'c', status: { state: 'TASK_STATE_WORKING' } },
  version,
});

redis.describe('RedisTaskEventBus on Redis', () => {
  const numsub = async (channel: string) => (await client.sendCommand<[string, number]>(['PUBSUB', 'NUMSUB', channel]))[1];

  it("follows a task's channel only while it has subscribers, and holds nothing for it after", async () => {
    const bus = openBus();
    const key = `k-${randomUUID()}`;
    const channel = `${redis.keyPrefix}events:${key}`;
    const stops = [bus.subscribe(key, () => {}), bus.subscribe(key, () => {})];
    const cancel = bus.onCancelRequest(key, () => {});
    await bus.subscribed();
    expect(await numsub(channel)).toBe(1);
    expect(bus.followedTasks).toBe(1);
    stops[0]();
    expect(bus.followedTasks).toBe(1);
    stops[1]();
    cancel();
    expect(bus.followedTasks).toBe(0);
    let subscribed = 1;
    for (let i = 0; i < 200 && subscribed > 0; i++) subscribed = (await numsub(channel)) + (await numsub(`${redis.keyPrefix}cancel:${key}`));
    expect(subscribed).toBe(0);
  });

  it("keeps a task's stream with a time to live and about streamMaxLength entries; history() is undefined once the start is trimmed", async () => {
    const bus = openBus(client, { streamMaxLength: 10, streamRetentionMs: 60_000 });
    const key = `k-${randomUUID()}`;
    for (let v = 1; v <= 250; v++) void bus.publish(key, event(key, v));
    await bus.publish(key, event(key, 251));
    const stream = `${redis.keyPrefix}events:${key}`;
    const length = await client.sendCommand<number>(['XLEN', stream]);
    expect(length).toBeLessThan(251);
    const ttl = await client.sendCommand<number>(['PTTL', stream]);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
    expect(await bus.history(key, 0)).toBeUndefined();
    const tail = await bus.history(key, 245);
    expect(tail?.map((e) => e.version)).toEqual([246, 247, 248, 249, 250, 251]);
  });

  it('history() is undefined once the stream expired', async () => {
    const bus = openBus(client, { streamRetentionMs: 1000 });
    const key = `k-${randomUUID()}`;
    await bus.publish(key, event(key, 1));
    expect(await bus.history(key, 0)).toHaveLength(1);
    // Expire it now rather than wait the retention out.
    await client.sendCommand(['PEXPIRE', `${redis.keyPrefix}events:${key}`, '1']);
    let gone: CommittedEvent[] | undefined = [];
    for (let i = 0; i < 100 && gone !== undefined; i++) gone = await bus.history(key, 0);
    expect(gone).toBeUndefined();
  });

  it('catches up from the stream after its subscriber connection was cut', async () => {
    const bus = openBus(client, { logger: silentLogger }); // the cut connection is reported as a warning
    const publisher = openBus(peerClient);
    const key = `k-${randomUUID()}`;
    const got: number[] = [];
    bus.subscribe(key, (c) => got.push(c.version));
    await bus.subscribed();
    await publisher.publish(key, event(key, 1));
    await until(() => got.length === 1, 'the first event');
    // Cut every connection whose name we gave the subscriber: node-redis reconnects and resubscribes.
    const clients = await client.sendCommand<string>(['CLIENT', 'LIST', 'TYPE', 'pubsub']);
    const ids = clients
      .split('\n')
      .filter((line) => line.includes('sub=1'))
      .map((line) => /id=(\d+)/.exec(line)![1]);
    for (const id of ids) await client.sendCommand(['CLIENT', 'KILL', 'ID', id]);
    await publisher.publish(key, event(key, 2));
    await publisher.publish(key, event(key, 3));
    await until(() => got.length === 3, 'the events published while the connection was down', 10_000);
    expect(got).toEqual([1, 2, 3]);
  });

  it('hears a cancel sent while its subscriber connection was down, once it is back', async () => {
    // The bus reaches Redis through a proxy that cuts its connections and refuses new ones until told.
    let refusing = false;
    const sockets = new Set<Socket>();
    const proxy = createServer((socket) => {
      if (refusing) return void socket.destroy();
      const upstream = connect(Number(new URL(redis.url()).port), '127.0.0.1');
      for (const end of [socket, upstream]) {
        sockets.add(end);
        end.on('error', () => {});
        end.on('close', () => (socket.destroy(), upstream.destroy()));
      }
      socket.pipe(upstream).pipe(socket);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const proxied = (await import('redis')).createClient({
      url: `redis://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
      socket: { reconnectStrategy: () => 20 },
    });
    proxied.on('error', () => {});
    await proxied.connect();
    const bus = openBus(proxied as unknown as RedisClient, { logger: silentLogger });
    let heard = 0;
    bus.onCancelRequest('gap-task', () => heard++);
    await bus.subscribed();
    // A subscriber of the test's own, straight to Redis, sees the cancel go out.
    const watcher = client.duplicate();
    await watcher.connect();
    let published!: () => void;
    const sent = new Promise<void>((resolve) => (published = resolve));
    await watcher.subscribe(`${redis.keyPrefix}cancel:gap-task`, () => published());
    refusing = true;
    for (const socket of sockets) socket.destroy();
    openBus(peerClient).requestCancel('gap-task');
    await sent;
    await watcher.close();
    expect(heard).toBe(0);
    refusing = false;
    await until(() => heard > 0, 'the cancel sent while the subscriber connection was down');
    await bus.subscribed();
    expect(heard).toBe(1);
    await bus.close();
    await proxied.close();
    await new Promise((resolve) => proxy.close(resolve));
  });

  it('refuses a version that is not a positive integer', async () => {
    const bus = openBus();
    await expect(bus.publish('k', event('k', 0))).rejects.toThrow(RangeError);
    await expect(bus.publish('k', event('k', 1.5))).rejects.toThrow(RangeError);
  });

  it('names the option in a construction error', () => {
    expect(() => makeBus(client, { streamMaxLength: 0 })).toThrow(/RedisTaskEventBus: option "streamMaxLength"/);
    expect(() => makeBus(client, { streamRetention: 5 } as never)).toThrow(/did you mean "streamRetentionMs"/);
  });
});
