/** Interop: the official @a2a-js/sdk 1.3.0 client over its HTTP+JSON transport (RestTransport), over real HTTP. */
// The SDK's CJS build requires jose v6, which is ESM-only; Jest's CommonJS runtime cannot load it and the
// client never calls it, so it is replaced by an empty module (test-environment workaround only).
jest.mock(require.resolve('jose', { paths: [require('node:path').dirname(require.resolve('@a2a-js/sdk/client'))] }), () => ({}));

import { ClientFactory, ClientFactoryOptions, type Client } from '@a2a-js/sdk/client';
import { TaskState, type AgentCard as SdkAgentCard, type Message, type Task } from '@a2a-js/sdk';
import type express from 'express';
import { testCard } from '../helpers/fixtures';
import { clientSend } from '../helpers/official-client';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { gates, restAgent, type Gates } from './agent';

let g: Gates;
const executor = restAgent(() => g);

const send = (text: string, extra: Partial<Message> = {}, returnImmediately = false) => clientSend(text, extra, returnImmediately);
const textOf = (m: Message | undefined) => (m?.parts[0]?.content?.$case === 'text' ? m.parts[0].content.value : undefined);
const isTask = (r: Message | Task): r is Task => 'status' in r;

/** The SDK's default transports, HTTP+JSON preferred. */
const restFirst = () => new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: ['HTTP+JSON'] }));

describe('official @a2a-js/sdk client, HTTP+JSON transport', () => {
  let server: TestServer;
  let client: Client;
  const seen: { method: string; path: string; version?: string; contentType?: string }[] = [];
  const record: express.RequestHandler = (req, _res, next) => {
    seen.push({ method: req.method, path: req.url, version: req.get('a2a-version'), contentType: req.get('content-type') });
    next();
  };

  beforeAll(async () => {
    server = await startAgent(executor, {
      before: [record],
      agentCard: { ...testCard, capabilities: { ...testCard.capabilities, extendedAgentCard: true } },
      extendedAgentCard: { ...testCard, name: 'Test Agent (extended)' },
      callContext: () => ({ caller: { id: 'sdk-user', authenticated: true } }),
    });
    // The trailing slash matters: the client resolves the relative '.well-known/agent-card.json' against it.
    client = await restFirst().createFromUrl(`${server.url}/`);
  });
  afterAll(() => server.close());
  beforeEach(() => {
    g = gates();
    seen.length = 0;
  });
  afterEach(() => g.gate.resolve());

  it('selects the HTTP+JSON 1.0 interface from the served card and calls the REST paths with A2A-Version: 1.0', async () => {
    expect(client.transport.protocolName).toBe('HTTP+JSON');
    expect(client.protocolVersion).toBe('1.0');
    await client.sendMessage(send('hello'));
    expect(seen).toEqual([{ method: 'POST', path: '/message:send', version: '1.0', contentType: 'application/json' }]);
  });

  it('sendMessage: a direct Message reply', async () => {
    const reply = (await client.sendMessage(send('hello'))) as Message;
    expect(isTask(reply)).toBe(false);
    expect(textOf(reply)).toBe('hello, sdk-user');
  });

  it('sendMessage: a completed Task with its artifact; a two-turn task', async () => {
    const task = (await client.sendMessage(send('report'))) as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(task.artifacts[0].parts.map((p) => (p.content?.$case === 'text' ? p.content.value : ''))).toEqual(['line 1\n', 'line 2\n']);
    const first = (await client.sendMessage(send('book'))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const second = (await client.sendMessage(send('Friday', { taskId: first.id }))) as Task;
    expect(second.id).toBe(first.id);
    expect(textOf(second.status?.message)).toBe('booked for Friday');
  });

  it('sendMessageStream: every event, in order', async () => {
    const cases: string[] = [];
    for await (const event of client.sendMessageStream(send('report'))) cases.push(event.payload!.$case);
    expect(cases).toEqual(['task', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
    const single: string[] = [];
    for await (const event of client.sendMessageStream(send('hello'))) single.push(event.payload!.$case);
    expect(single).toEqual(['message']);
  });

  it('getTask, with historyLength, and TaskNotFoundError for an unknown id', async () => {
    const created = (await client.sendMessage(send('report'))) as Task;
    const fetched = await client.getTask({ tenant: '', id: created.id });
    expect(fetched.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(fetched.history.length).toBeGreaterThanOrEqual(2);
    expect((await client.getTask({ tenant: '', id: created.id, historyLength: 1 })).history).toHaveLength(1);
    await expect(client.getTask({ tenant: '', id: 'no-such-task' })).rejects.toMatchObject({ name: 'TaskNotFoundError', statusCode: 404 });
  });

  it('listTasks with filters', async () => {
    const contextId = `ctx-rest-${Date.now()}`;
    const one = (await client.sendMessage(send('report', { contextId }))) as Task;
    const two = (await client.sendMessage(send('report', { contextId }))) as Task;
    const page = await client.listTasks({
      tenant: '',
      contextId,
      status: TaskState.TASK_STATE_COMPLETED,
      pageToken: '',
      statusTimestampAfter: undefined,
      pageSize: 10,
      includeArtifacts: true,
    });
    expect(page.tasks.map((t) => t.id).sort()).toEqual([one.id, two.id].sort());
    expect(page).toMatchObject({ totalSize: 2, pageSize: 10, nextPageToken: '' });
    for (const task of page.tasks) expect(task.artifacts).toHaveLength(1);
  });

  it('cancelTask on a running task, then idempotent; TaskNotCancelableError on a completed one', async () => {
    const created = (await client.sendMessage(send('long', {}, true))) as Task;
    expect(await g.running.promise).toBe(created.id);
    const canceled = await client.cancelTask({ tenant: '', id: created.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ tenant: '', id: created.id, metadata: undefined })).resolves.toMatchObject({ id: created.id });
    const done = (await client.sendMessage(send('report'))) as Task;
    await expect(client.cancelTask({ tenant: '', id: done.id, metadata: undefined })).rejects.toMatchObject({ name: 'TaskNotCancelableError' });
  });

  it('resubscribeTask to a running task: the task first, then the live events to completion', async () => {
    const created = (await client.sendMessage(send('long', {}, true))) as Task;
    await g.running.promise;
    const stream = client.resubscribeTask({ tenant: '', id: created.id });
    const first = await stream.next();
    expect(first.value!.payload!.$case).toBe('task');
    g.gate.resolve();
    const rest: string[] = [];
    for (let next = await stream.next(); !next.done; next = await stream.next()) rest.push(next.value.payload!.$case);
    expect(rest).toEqual(['artifactUpdate', 'statusUpdate']);
    expect(seen.some((s) => s.method === 'POST' && s.path === `/tasks/${created.id}:subscribe`)).toBe(true);
  });

  it('resubscribeTask to a finished task: UnsupportedOperationError', async () => {
    const done = (await client.sendMessage(send('report'))) as Task;
    await expect(client.resubscribeTask({ tenant: '', id: done.id }).next()).rejects.toMatchObject({ name: 'UnsupportedOperationError' });
  });

  it('push notification configs: PushNotificationNotSupportedError from the server', async () => {
    // The client refuses these itself for a card without pushNotifications: call its transport.
    const options = { serviceParameters: { 'A2A-Version': '1.0' } };
    const transport = client.transport;
    const calls = [
      transport.createTaskPushNotificationConfig(
        { tenant: '', id: '', taskId: 't-1', url: 'https://client.example.com/hook', token: '', authentication: undefined },
        options,
      ),
      transport.getTaskPushNotificationConfig({ tenant: '', taskId: 't-1', id: 'c-1' }, options),
      transport.listTaskPushNotificationConfig({ tenant: '', taskId: 't-1', pageSize: 0, pageToken: '' }, options),
      transport.deleteTaskPushNotificationConfig({ tenant: '', taskId: 't-1', id: 'c-1' }, options),
    ];
    for (const call of calls) await expect(call).rejects.toMatchObject({ name: 'PushNotificationNotSupportedError', statusCode: 400 });
    expect(seen.map((s) => s.method).sort()).toEqual(['DELETE', 'GET', 'GET', 'POST']);
  });

  it('getAgentCard: the extended card, through GET /extendedAgentCard', async () => {
    const card = await client.getAgentCard();
    expect(card.name).toBe('Test Agent (extended)');
    expect(seen).toEqual([expect.objectContaining({ method: 'GET', path: '/extendedAgentCard', version: '1.0' })]);
  });

  it('an interface with a tenant: the client prefixes every path, the agent works in that tenant', async () => {
    const card = (await (await fetch(`${server.url}/.well-known/agent-card.json`)).json()) as SdkAgentCard;
    const tenanted: SdkAgentCard = {
      ...card,
      supportedInterfaces: card.supportedInterfaces.filter((i) => i.protocolBinding === 'HTTP+JSON').map((i) => ({ ...i, tenant: 'acme' })),
    };
    const tenantClient = await restFirst().createFromAgentCard(tenanted);
    const created = (await tenantClient.sendMessage(send('report'))) as Task;
    expect(seen.at(-1)!.path).toBe('/acme/message:send');
    expect((await tenantClient.getTask({ tenant: '', id: created.id })).id).toBe(created.id);
    expect(seen.at(-1)!.path).toBe(`/acme/tasks/${created.id}`);
    // Not visible without the tenant.
    await expect(client.getTask({ tenant: '', id: created.id })).rejects.toMatchObject({ name: 'TaskNotFoundError' });
  });
});
