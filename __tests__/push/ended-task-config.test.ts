/**
 * A push config on an ended task (§3.1.7 lists only PushNotificationNotSupported and TaskNotFound
 * as errors; the A2A TCK's PUSH-CREATE-001): accepted over JSON-RPC and HTTP+JSON in v1.0 and, with
 * the official v0.3 client, in v0.3, on every config store (memory, SQLite, Redis); Get, List and
 * Delete then see it; it receives nothing (the task is not updated any more); a Redis sweep keeps it.
 */
// The SDK's CJS build requires jose v6 (ESM-only); the client never calls it (test-environment workaround).
jest.mock(require.resolve('jose', { paths: [require('node:path').dirname(require.resolve('a2a-sdk-v03/client'))] }), () => ({}));

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AgentCardResolver, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory } from 'a2a-sdk-v03/client';
import { silentLogger, type A2ARouterOptions, type A2ATaskEventInfo } from '../../lib';
import { createRedisBackend, type RedisBackend } from '../../lib/redis';
import { openSqliteTaskStore, sqlitePushStores, type SqliteTaskStore } from '../../lib/sqlite';
import { deferred, until, type Deferred } from '../helpers/async';
import { a2aClient, BINDINGS } from '../helpers/bindings';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { useTestRedis } from '../helpers/redis';
import { pushAgent, pushCall } from './helpers';
import { startReceiver, type Receiver } from './receiver';

const redis = useTestRedis();
let gate: Deferred<void>;

interface StoreSetup {
  /** Router options for this store (task store and push stores). */
  open(): Promise<Partial<A2ARouterOptions> & { pushNotifications?: object }>;
  /** After the router closed. */
  close(): Promise<void>;
  /** Redis: the sweep every replica runs (it drops the configs of ended tasks that owe nothing). */
  sweep?(): Promise<unknown>;
}

const dir = mkdtempSync(path.join(tmpdir(), 'a2a-ended-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const memory = (): StoreSetup => ({ open: async () => ({}), close: async () => undefined });

const sqlite = (): StoreSetup => {
  let store: SqliteTaskStore;
  return {
    open: async () => {
      store = await openSqliteTaskStore({ path: path.join(dir, 'tasks.sqlite') });
      return { taskStore: store, pushNotifications: sqlitePushStores(store) };
    },
    close: async () => store.close(),
  };
};

const redisStores = (): StoreSetup => {
  let backend: RedisBackend;
  return {
    open: async () => {
      backend = await createRedisBackend({ url: redis.url(), keyPrefix: redis.keyPrefix, logger: silentLogger });
      return { ...backend.options, pushNotifications: backend.push };
    },
    close: async () => backend.close(),
    sweep: () => backend.push.outbox.pending(),
  };
};

const STORES: [string, () => StoreSetup, jest.Describe][] = [
  ['memory', memory, describe],
  ['SQLite', sqlite, describe],
  ['Redis', redisStores, redis.describe],
];

describe.each(STORES)('a push config on an ended task, %s store', (_name, setup, describeIf) => {
  describeIf('', () => {
    const stores = setup();
    let server: TestServer;
    let receiver: Receiver;
    const committed: A2ATaskEventInfo[] = [];

    beforeAll(async () => {
      receiver = await startReceiver();
      const options = await stores.open();
      server = await startAgent(
        pushAgent(() => gate),
        {
          ...options,
          onTaskEvent: (info) => committed.push(info),
          pushNotifications: { allow: ['127.0.0.1'], retryBaseMs: 1, ...options.pushNotifications },
        },
      );
    });
    afterAll(async () => {
      await server.close();
      await stores.close();
      await receiver.close();
    });
    beforeEach(() => {
      gate = deferred();
    });
    afterEach(() => gate.resolve());

    /** A task the agent completed (SendMessage answers once it has). */
    const endedTask = async (): Promise<string> => {
      const task = (await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('report'))).result.task;
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      return task.id;
    };
    /** Where the configs of ended tasks point: nothing may arrive there. */
    const endedHook = () => `${receiver.origin}/ended`;

    describe.each(BINDINGS)('v1.0 over %s', (binding) => {
      const call = (method: string, params: Parameters<typeof pushCall>[3]) => pushCall(binding, server.url, method, params);

      it('Create answers the config; Get, List and Delete of it follow', async () => {
        const taskId = await endedTask();
        const created = await call('CreateTaskPushNotificationConfig', { taskId, url: endedHook(), token: 'tok' });
        expect(created.status).toBe(200);
        expect(created.result).toEqual({ id: expect.any(String), taskId, url: endedHook(), token: 'tok' });
        const id = created.result.id as string;
        expect((await call('GetTaskPushNotificationConfig', { taskId, id })).result).toEqual(created.result);
        expect((await call('ListTaskPushNotificationConfigs', { taskId })).result.configs).toEqual([created.result]);
        // The sweep every Redis replica runs keeps it (it owes nothing, and the client has not deleted it).
        await stores.sweep?.();
        expect((await call('ListTaskPushNotificationConfigs', { taskId })).result.configs).toEqual([created.result]);
        expect((await call('DeleteTaskPushNotificationConfig', { taskId, id })).status).toBe(200);
        expect((await call('ListTaskPushNotificationConfigs', { taskId })).result.configs).toEqual([]);
      });
    });

    describe.each([
      ['JSON-RPC', () => new JsonRpcTransportFactory()],
      ['HTTP+JSON', () => new RestTransportFactory()],
    ] as const)('v0.3 over %s (the official v0.3 client)', (_transport, transport) => {
      it('set answers the config; get, list and delete of it follow', async () => {
        const card = await AgentCardResolver.default.resolve(`${server.url}/`);
        const client = await new ClientFactory({ ...ClientFactoryOptions.default, transports: [transport()] }).createFromAgentCard(card);
        const taskId = await endedTask();
        const set = await client.setTaskPushNotificationConfig({ taskId, pushNotificationConfig: { url: endedHook(), token: 'tok' } });
        expect(set).toEqual({ taskId, pushNotificationConfig: { id: expect.any(String), url: endedHook(), token: 'tok' } });
        const byId = { id: taskId, pushNotificationConfigId: set.pushNotificationConfig.id! };
        expect(await client.getTaskPushNotificationConfig(byId)).toEqual(set);
        expect(await client.listTaskPushNotificationConfig({ id: taskId })).toEqual([set]);
        await client.deleteTaskPushNotificationConfig(byId);
        expect(await client.listTaskPushNotificationConfig({ id: taskId })).toEqual([]);
      });
    });

    it('such a config receives nothing, while a live task is delivered its events as before', async () => {
      const ended = await endedTask();
      const created = await pushCall('jsonrpc', server.url, 'CreateTaskPushNotificationConfig', { taskId: ended, url: endedHook() });
      expect(created.status).toBe(200);
      // A task that runs after it: its events arrive; the ended task's config, queued before them if at all, gets none.
      const reply = await a2aClient('jsonrpc', server.url).call('SendMessage', {
        ...userMessage('report'),
        configuration: { taskPushNotificationConfig: { url: `${receiver.origin}/live` } },
      });
      const live = reply.result.task.id as string;
      const events = committed.filter((info) => info.taskId === live);
      const received = await receiver.deliveredCount(events.length);
      await until(() => server.router.livePushDeliveries === 0, 'every delivery done');
      expect(received.map((r) => r.path)).toEqual(events.map(() => '/live'));
      expect(receiver.requests.filter((r) => r.path === '/ended')).toEqual([]);
      // Still there for Get and Delete.
      expect((await pushCall('jsonrpc', server.url, 'GetTaskPushNotificationConfig', { taskId: ended, id: created.result.id })).result).toEqual(
        created.result,
      );
    });
  });
});
