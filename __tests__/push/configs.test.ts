/**
 * Push notification configs (§3.1.7-3.1.10) on both bindings: the official @a2a-js/sdk 1.x client
 * (JSON-RPC and HTTP+JSON) creates, reads, lists and deletes them; inline configs; server ids;
 * the bound per task; masking of credentials; scoping (another owner's or tenant's task answers
 * TaskNotFound byte-identical to a missing one, with no side effect); the card and the options.
 */
// The SDK's CJS build requires jose v6 (ESM-only); the client never calls it (test-environment workaround).
jest.mock(require.resolve('jose', { paths: [require('node:path').dirname(require.resolve('@a2a-js/sdk/client'))] }), () => ({}));

import { ClientFactory, ClientFactoryOptions, type Client } from '@a2a-js/sdk/client';
import type { Task as SdkTask } from '@a2a-js/sdk';
import type { Request } from 'express';
import { createA2ARouter, silentLogger, InMemoryTaskStore } from '../../lib';
import { deferred, type Deferred } from '../helpers/async';
import { BINDINGS, a2aClient } from '../helpers/bindings';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { clientSend } from '../helpers/official-client';
import { userMessage } from '../helpers/http';
import { pushAgent, pushCall, reasonOf } from './helpers';
import { startReceiver, type Receiver } from './receiver';

let gate: Deferred<void>;
const identity = (req: Request) => ({ caller: { id: req.get('x-user') ?? 'alice', authenticated: true }, tenant: req.get('x-tenant') ?? '' });

describe('push notification configs', () => {
  let server: TestServer;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startAgent(
      pushAgent(() => gate),
      {
        callContext: identity,
        pushNotifications: { allow: ['127.0.0.1'], maxConfigsPerTask: 3, retryBaseMs: 1 },
      },
    );
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });
  beforeEach(() => {
    gate = deferred();
  });
  afterEach(() => gate.resolve());

  const parkedTask = async (headers: Record<string, string> = {}): Promise<string> =>
    (await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('park'), { headers })).result.task.id;

  it('the served card states pushNotifications: true', async () => {
    const card = (await (await fetch(`${server.url}/.well-known/agent-card.json`)).json()) as { capabilities: { pushNotifications?: boolean } };
    expect(card.capabilities.pushNotifications).toBe(true);
  });

  describe.each([
    ['JSON-RPC', 'JSONRPC'],
    ['HTTP+JSON', 'HTTP+JSON'],
  ] as const)('with the official 1.x client over %s', (_name, transport) => {
    let client: Client;
    beforeAll(async () => {
      const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [transport] }));
      client = await factory.createFromUrl(`${server.url}/`);
      expect(client.transport.protocolName).toBe(transport);
    });

    it('create assigns an id and masks the credentials; get, list and delete (idempotent) follow', async () => {
      const task = (await client.sendMessage(clientSend('park'))) as SdkTask;
      const created = await client.createTaskPushNotificationConfig({
        tenant: '',
        id: '',
        taskId: task.id,
        url: receiver.url,
        token: 'tok-1',
        authentication: { scheme: 'Bearer', credentials: 's3cr3t' },
      });
      expect(created.id).not.toBe('');
      expect(created).toMatchObject({
        taskId: task.id,
        url: receiver.url,
        token: 'tok-1',
        authentication: { scheme: 'Bearer', credentials: '********' },
      });

      const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
      expect(got).toEqual(created);
      const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
      expect(listed.configs).toEqual([created]);

      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id });
      await expect(client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: created.id })).rejects.toMatchObject({
        name: 'TaskNotFoundError',
      });
      expect((await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' })).configs).toEqual([]);
    });

    it('an inline config (SendMessageConfiguration.taskPushNotificationConfig) is registered for the new task', async () => {
      const params = clientSend('park');
      const task = (await client.sendMessage({
        ...params,
        configuration: {
          acceptedOutputModes: [],
          returnImmediately: false,
          taskPushNotificationConfig: { tenant: '', id: '', taskId: '', url: receiver.url, token: 'inline', authentication: undefined },
        },
      })) as SdkTask;
      const { configs } = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
      expect(configs).toHaveLength(1);
      expect(configs[0]).toMatchObject({ taskId: task.id, url: receiver.url, token: 'inline' });
      expect(configs[0].id).not.toBe('');
    });
  });

  describe.each(BINDINGS)('over %s', (binding) => {
    const call = (method: string, params: Parameters<typeof pushCall>[3], headers?: Record<string, string>, id?: number) =>
      pushCall(binding, server.url, method, params, headers, id);

    it('keeps a client-given id; the same id again replaces that config', async () => {
      const taskId = await parkedTask();
      const first = await call('CreateTaskPushNotificationConfig', { taskId, id: 'mine', url: receiver.url, token: 'a' });
      expect(first.result).toMatchObject({ id: 'mine', token: 'a' });
      await call('CreateTaskPushNotificationConfig', { taskId, id: 'mine', url: receiver.url, token: 'b' });
      const list = await call('ListTaskPushNotificationConfigs', { taskId });
      expect(list.result.configs).toEqual([{ id: 'mine', taskId, url: receiver.url, token: 'b' }]);
    });

    it('several configs per task, up to the bound (maxConfigsPerTask: 3)', async () => {
      const taskId = await parkedTask();
      for (let i = 0; i < 3; i++)
        expect((await call('CreateTaskPushNotificationConfig', { taskId, url: `${receiver.url}?n=${i}` })).result).toBeDefined();
      const over = await call('CreateTaskPushNotificationConfig', { taskId, url: receiver.url });
      expect(reasonOf(over)).toBe('UNSUPPORTED_OPERATION');
      const list = await call('ListTaskPushNotificationConfigs', { taskId });
      expect(list.result.configs.map((c: { url: string }) => c.url)).toEqual([0, 1, 2].map((i) => `${receiver.url}?n=${i}`));
      expect(new Set(list.result.configs.map((c: { id: string }) => c.id)).size).toBe(3);
    });

    it('pages when pageSize asks for it', async () => {
      const taskId = await parkedTask();
      for (let i = 0; i < 3; i++) await call('CreateTaskPushNotificationConfig', { taskId, url: receiver.url });
      const all = (await call('ListTaskPushNotificationConfigs', { taskId })).result.configs;
      if (binding === 'jsonrpc') {
        const first = (await call('ListTaskPushNotificationConfigs', { taskId, pageSize: 2 })).result;
        expect(first.configs).toEqual(all.slice(0, 2));
        const second = (await call('ListTaskPushNotificationConfigs', { taskId, pageSize: 2, pageToken: first.nextPageToken })).result;
        expect(second.configs).toEqual(all.slice(2));
        expect(second.nextPageToken).toBe('');
      }
    });

    it('refuses bad values (field violations), and a URL the SSRF guard refuses', async () => {
      const taskId = await parkedTask();
      for (const params of [
        { taskId, url: 'http://10.0.0.1/hook' },
        { taskId, url: 'ftp://127.0.0.1/hook' },
        { taskId, url: receiver.url, token: 'a\r\nX-Injected: 1' },
        { taskId, url: receiver.url, authentication: { scheme: 'Bearer token', credentials: 'x' } },
      ]) {
        const reply = await call('CreateTaskPushNotificationConfig', params);
        expect(binding === 'jsonrpc' ? reply.error.code : reply.status).toBe(binding === 'jsonrpc' ? -32602 : 400);
      }
      expect((await call('ListTaskPushNotificationConfigs', { taskId })).result.configs).toEqual([]);
    });

    it('a missing config of a visible task is TaskNotFound; Delete of it succeeds', async () => {
      const taskId = await parkedTask();
      expect(reasonOf(await call('GetTaskPushNotificationConfig', { taskId, id: 'nope' }))).toBe('TASK_NOT_FOUND');
      expect((await call('DeleteTaskPushNotificationConfig', { taskId, id: 'nope' })).status).toBe(200);
    });

    it('a terminal task takes a config too (§3.1.7; see ended-task-config.test.ts)', async () => {
      const taskId = (await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('report'))).result.task.id;
      const created = await call('CreateTaskPushNotificationConfig', { taskId, url: receiver.url });
      expect(created.status).toBe(200);
      expect(created.result).toMatchObject({ taskId, url: receiver.url });
    });

    describe('scoping', () => {
      const alice = { 'x-user': 'alice', 'x-tenant': 't1' };
      const others = [
        ['another owner', { 'x-user': 'bob', 'x-tenant': 't1' }],
        ['another tenant', { 'x-user': 'alice', 'x-tenant': 't2' }],
      ] as const;

      it.each(others)("%s: every method on alice's task answers exactly as for a missing task, and changes nothing", async (_who, headers) => {
        const taskId = await parkedTask(alice);
        const created = (await call('CreateTaskPushNotificationConfig', { taskId, url: receiver.url, token: 't' }, alice)).result;
        const missing = 'no-such-task';
        const cases: [string, (taskId: string) => Parameters<typeof pushCall>[3]][] = [
          ['CreateTaskPushNotificationConfig', (t) => ({ taskId: t, url: receiver.url })],
          ['GetTaskPushNotificationConfig', (t) => ({ taskId: t, id: created.id })],
          ['ListTaskPushNotificationConfigs', (t) => ({ taskId: t })],
          ['DeleteTaskPushNotificationConfig', (t) => ({ taskId: t, id: created.id })],
        ];
        for (const [method, params] of cases) {
          const theirs = await call(method, params(taskId), headers, 77);
          const none = await call(method, params(missing), headers, 77);
          expect(reasonOf(theirs)).toBe('TASK_NOT_FOUND');
          expect(theirs.status).toBe(none.status);
          // Byte-identical but for the id itself (the answer names the task id asked for).
          expect(theirs.text.split(taskId).join('<id>')).toBe(none.text.split(missing).join('<id>'));
        }
        // Nothing happened to alice's config.
        const list = await call('ListTaskPushNotificationConfigs', { taskId }, alice);
        expect(list.result.configs).toEqual([created]);
      });
    });
  });
});

describe('push notifications off', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(pushAgent(() => gate));
  });
  afterAll(() => server.close());

  it.each(BINDINGS)('%s: the four methods and an inline config answer PushNotificationNotSupported', async (binding) => {
    const taskId = (await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('park'))).result.task.id;
    for (const method of [
      'CreateTaskPushNotificationConfig',
      'GetTaskPushNotificationConfig',
      'ListTaskPushNotificationConfigs',
      'DeleteTaskPushNotificationConfig',
    ]) {
      expect(reasonOf(await pushCall(binding, server.url, method, { taskId, id: 'c', url: 'https://hooks.example.com' }))).toBe(
        'PUSH_NOTIFICATION_NOT_SUPPORTED',
      );
    }
    const inline = await a2aClient(binding, server.url).call('SendMessage', {
      ...userMessage('park'),
      configuration: { taskPushNotificationConfig: { url: 'https://hooks.example.com' } },
    });
    expect(inline.error?.reason).toBe('PUSH_NOTIFICATION_NOT_SUPPORTED');
  });
});

describe('the pushNotifications option and the card', () => {
  const base = { agentCard: testCard, executor: pushAgent(() => gate), logger: silentLogger, taskStore: new InMemoryTaskStore() };

  it('refuses a card stating pushNotifications: true without push configured', () => {
    expect(() => createA2ARouter({ ...base, agentCard: { ...testCard, capabilities: { pushNotifications: true } } })).toThrow(
      /option "agentCard\.capabilities\.pushNotifications": is true, but push notifications are not configured/,
    );
  });

  it('accepts true for every default, and names a typo or a bad allow-list entry', () => {
    expect(() => createA2ARouter({ ...base, pushNotifications: true })).not.toThrow();
    expect(() => createA2ARouter({ ...base, pushNotifications: { maxAtempts: 3 } as never })).toThrow(
      /"pushNotifications\.maxAtempts" is unknown \(did you mean "pushNotifications\.maxAttempts"\?\)/,
    );
    expect(() => createA2ARouter({ ...base, pushNotifications: { allow: ['10.0.0.0/99'] } })).toThrow(/pushNotifications\.allow.*not a CIDR range/);
    expect(() => createA2ARouter({ ...base, pushNotifications: { timeoutMs: 0 } })).toThrow(/pushNotifications\.timeoutMs/);
  });
});
