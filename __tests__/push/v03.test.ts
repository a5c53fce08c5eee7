/**
 * Push notifications for v0.3 clients (compatibility): the official v0.3 client (`a2a-sdk-v03`)
 * sets, gets, lists and deletes configs over JSON-RPC (`tasks/pushNotificationConfig/*`) and
 * HTTP+JSON (`/v1/tasks/{id}/pushNotificationConfigs`), and registers one inline; a config
 * registered by a v0.3 client is delivered the v0.3 body (the Task, `kind: "task"`, as JSON).
 */
import { randomUUID } from 'node:crypto';
import {
  AgentCardResolver,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
  TaskNotFoundError,
  type Client,
} from 'a2a-sdk-v03/client';
import type { MessageSendParams, Task } from 'a2a-sdk-v03';
import type { A2ATaskEventInfo } from '../../lib';
import { deferred, until, type Deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { pushAgent } from './helpers';
import { startReceiver, type Receiver } from './receiver';

let gate: Deferred<void>;

const send = (text: string, configuration?: MessageSendParams['configuration']): MessageSendParams => ({
  message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] },
  ...(configuration ? { configuration } : {}),
});

const TRANSPORTS = [
  { name: 'JSON-RPC', factory: () => new JsonRpcTransportFactory() },
  { name: 'HTTP+JSON', factory: () => new RestTransportFactory() },
] as const;

describe.each(TRANSPORTS)('official A2A v0.3 client over $name: push notifications', ({ factory }) => {
  let server: TestServer;
  let receiver: Receiver;
  let client: Client;
  const committed: A2ATaskEventInfo[] = [];

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startAgent(
      pushAgent(() => gate),
      {
        onTaskEvent: (info) => committed.push(info),
        pushNotifications: { allow: ['127.0.0.1'] },
      },
    );
    const card = await AgentCardResolver.default.resolve(`${server.url}/`);
    expect(card.capabilities.pushNotifications).toBe(true);
    client = await new ClientFactory({ ...ClientFactoryOptions.default, transports: [factory()] }).createFromAgentCard(card);
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });
  beforeEach(() => {
    gate = deferred();
  });
  afterEach(() => gate.resolve());

  it('set (server id, masked credentials), get, list and delete', async () => {
    const task = (await client.sendMessage(send('park'))) as Task;
    const set = await client.setTaskPushNotificationConfig({
      taskId: task.id,
      pushNotificationConfig: { url: receiver.url, token: 'tok', authentication: { schemes: ['Bearer'], credentials: 's3cr3t' } },
    });
    const id = set.pushNotificationConfig.id!;
    expect(id).toEqual(expect.any(String));
    expect(set).toMatchObject({
      taskId: task.id,
      pushNotificationConfig: { url: receiver.url, token: 'tok', authentication: { schemes: ['Bearer'], credentials: '********' } },
    });
    // A variable: the Client's type names only TaskIdParams, the wire takes the config id too.
    const byId = { id: task.id, pushNotificationConfigId: id };
    expect(await client.getTaskPushNotificationConfig(byId)).toEqual(set);
    expect(await client.listTaskPushNotificationConfig({ id: task.id })).toEqual([set]);
    await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: id });
    await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: id });
    expect(await client.listTaskPushNotificationConfig({ id: task.id })).toEqual([]);
    await expect(client.getTaskPushNotificationConfig(byId)).rejects.toBeInstanceOf(TaskNotFoundError);
    await expect(client.listTaskPushNotificationConfig({ id: 'no-such-task' })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('an inline config gets every event as the v0.3 Task, in order, with the token', async () => {
    receiver.delivered.length = 0;
    const task = (await client.sendMessage(
      send('report', { blocking: true, pushNotificationConfig: { url: receiver.url, token: 'inline-tok' } }),
    )) as Task;
    expect(task.status.state).toBe('completed');
    const mine = committed.filter((i) => i.taskId === task.id);
    const delivered = await receiver.deliveredCount(mine.length);
    expect(delivered.map((r) => r.body.kind)).toEqual(mine.map(() => 'task'));
    expect(delivered.map((r) => r.body.status.state)).toEqual(
      mine.map((i) => i.task.status.state.replace('TASK_STATE_', '').toLowerCase().replace('_', '-')),
    );
    for (const request of delivered) {
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-a2a-notification-token']).toBe('inline-tok');
      expect(request.body.id).toBe(task.id);
    }
    await until(() => server.router.livePushDeliveries === 0, 'idle');
  });
});
