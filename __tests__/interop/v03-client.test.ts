/**
 * Interop: the official A2A v0.3 client (`@a2a-js/sdk` 0.3.x, installed as `a2a-sdk-v03`) drives
 * the server over real HTTP through v0.3 compatibility, once per transport it has: JSON-RPC, and
 * HTTP+JSON (the `/v1/...` routes, in the ProtoJSON of the v0.3 proto). It finds the agent from the
 * served card (the transport it is given picks the interface), sends no A2A-Version, and uses send,
 * stream, get, cancel, resubscribe, push config and the extended card.
 */
import { randomUUID } from 'node:crypto';
import {
  A2AClient,
  AgentCardResolver,
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransport,
  JsonRpcTransportFactory,
  PushNotificationNotSupportedError,
  RestTransport,
  RestTransportFactory,
  TaskNotCancelableError,
  TaskNotFoundError,
  type Client,
} from 'a2a-sdk-v03/client';
import type { AgentCard, Message, MessageSendParams, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from 'a2a-sdk-v03';
import type express from 'express';
import type { AgentExecutor } from '../../lib';
import { deferred, type Deferred } from '../helpers/async';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';

let gate: Deferred<void>;
let running: Deferred<string>;

const executor: AgentExecutor = {
  async execute(ctx, events) {
    switch (ctx.userText) {
      case 'hello':
        return events.reply(`hello, ${ctx.caller.id}`);
      case 'report':
        await events.start('working');
        await events.artifact({ artifactId: 'r-1', name: 'report.txt', text: 'line 1\n' });
        await events.artifact({ artifactId: 'r-1', text: 'line 2\n', append: true, lastChunk: true });
        return events.complete('report ready');
      case 'book':
        return events.requireInput('which day?');
      case 'long':
        await events.start('running');
        running.resolve(ctx.taskId);
        await Promise.race([gate.promise, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))]);
        if (ctx.signal.aborted) return;
        return events.complete('long done');
      default:
        if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') return events.complete(`booked for ${ctx.userText}`);
        return events.reject('unknown request');
    }
  },
};

type StreamEvent = Message | Task | TaskStatusUpdateEvent | TaskArtifactUpdateEvent;

const send = (text: string, extra: Partial<Message> = {}, configuration?: MessageSendParams['configuration']): MessageSendParams => ({
  message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra },
  ...(configuration ? { configuration } : {}),
});

const textOf = (m: Message | undefined) => (m?.parts[0]?.kind === 'text' ? m.parts[0].text : undefined);

/** Every request with the token; the server's callContext makes it alice. */
const withToken: typeof fetch = (input, init) =>
  fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), authorization: 'Bearer alice' } });

const TRANSPORTS = [
  { name: 'JSON-RPC', transport: 'JSONRPC', factory: () => new JsonRpcTransportFactory({ fetchImpl: withToken }), type: JsonRpcTransport },
  { name: 'HTTP+JSON', transport: 'HTTP+JSON', factory: () => new RestTransportFactory({ fetchImpl: withToken }), type: RestTransport },
] as const;

describe.each(TRANSPORTS)('official A2A v0.3 client (a2a-sdk-v03) over $name', ({ transport, factory, type }) => {
  let server: TestServer;
  let client: Client;
  let card: AgentCard;
  const versions: (string | undefined)[] = [];
  const paths = new Set<string>();
  const recordVersion: express.RequestHandler = (req, _res, next) => {
    if (!req.path.endsWith('agent-card.json')) {
      versions.push(req.get('a2a-version'));
      paths.add(`${req.method} ${req.path}`);
    }
    next();
  };

  beforeAll(async () => {
    server = await startAgent(executor, {
      before: [recordVersion],
      agentCard: { ...testCard, capabilities: { ...testCard.capabilities, extendedAgentCard: true } },
      extendedAgentCard: { ...testCard, name: 'Extended Test Agent' },
      callContext: (req) => (req.get('authorization') ? { caller: { id: 'alice', authenticated: true } } : undefined),
    });
    // Only the transport under test (createFrom would merge in the default ones): the client then
    // finds that transport's interface in the card.
    const options = { ...ClientFactoryOptions.default, transports: [factory()] };
    // What createFromUrl does, in two steps to keep the card. The trailing slash matters: the card
    // path is resolved against it.
    card = await AgentCardResolver.default.resolve(`${server.url}/`);
    client = await new ClientFactory(options).createFromAgentCard(card);
  });
  afterAll(() => server.close());
  beforeEach(() => {
    gate = deferred();
    running = deferred();
  });
  afterEach(() => gate.resolve());

  it('finds its endpoint from the card (url, preferredTransport, additionalInterfaces) and sends no A2A-Version', async () => {
    expect(card.url).toBe(server.url);
    expect(card.preferredTransport).toBe('JSONRPC');
    expect(card.protocolVersion).toBe('0.3.0');
    expect(card.additionalInterfaces).toEqual([
      { url: server.url, transport: 'JSONRPC' },
      { url: server.url, transport: 'HTTP+JSON' },
    ]);
    expect(client.transport).toBeInstanceOf(type);
    await client.sendMessage(send('hello'));
    expect(versions.length).toBeGreaterThan(0);
    expect(new Set(versions)).toEqual(new Set([undefined]));
  });

  it('sendMessage: a direct Message reply', async () => {
    const reply = (await client.sendMessage(send('hello'))) as Message;
    expect(reply.kind).toBe('message');
    expect(reply.role).toBe('agent');
    expect(textOf(reply)).toBe('hello, alice');
    expect(reply.contextId).toEqual(expect.any(String));
  });

  it('sendMessage: a completed Task with its artifact', async () => {
    const task = (await client.sendMessage(send('report'))) as Task;
    expect(task.kind).toBe('task');
    expect(task.status.state).toBe('completed');
    expect(textOf(task.status.message)).toBe('report ready');
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts![0].parts.map((p) => (p.kind === 'text' ? p.text : ''))).toEqual(['line 1\n', 'line 2\n']);
  });

  it('a two-turn input-required task', async () => {
    const first = (await client.sendMessage(send('book'))) as Task;
    expect(first.status.state).toBe('input-required');
    expect(textOf(first.status.message)).toBe('which day?');
    const second = (await client.sendMessage(send('Friday', { taskId: first.id, contextId: first.contextId }))) as Task;
    expect(second.id).toBe(first.id);
    expect(second.status.state).toBe('completed');
    expect(textOf(second.status.message)).toBe('booked for Friday');
  });

  it('sendMessageStream: every event, in order, the last one a final status-update', async () => {
    const events: StreamEvent[] = [];
    for await (const event of client.sendMessageStream(send('report'))) events.push(event as StreamEvent);
    expect(events.map((e) => e.kind)).toEqual(['task', 'artifact-update', 'artifact-update', 'status-update']);
    const last = events.at(-1) as TaskStatusUpdateEvent;
    expect(last.status.state).toBe('completed');
    expect(last.final).toBe(true);
  });

  it('sendMessageStream: a Message reply is the only event', async () => {
    const kinds: string[] = [];
    for await (const event of client.sendMessageStream(send('hello'))) kinds.push((event as StreamEvent).kind);
    expect(kinds).toEqual(['message']);
  });

  it('getTask, with historyLength, and TaskNotFoundError for an unknown id', async () => {
    const created = (await client.sendMessage(send('report'))) as Task;
    const fetched = await client.getTask({ id: created.id });
    expect(fetched.id).toBe(created.id);
    expect(fetched.status.state).toBe('completed');
    expect(fetched.history!.length).toBeGreaterThanOrEqual(2);
    const short = await client.getTask({ id: created.id, historyLength: 1 });
    expect(short.history).toHaveLength(1);
    await expect(client.getTask({ id: 'no-such-task' })).rejects.toBeInstanceOf(TaskNotFoundError);
  });

  it('cancelTask: a running task becomes canceled; a completed one is not cancelable', async () => {
    const task = (await client.sendMessage(send('long', {}, { blocking: false }))) as Task;
    await running.promise;
    expect(task.status.state).toBe('working');
    const canceled = await client.cancelTask({ id: task.id });
    expect(canceled.status.state).toBe('canceled');
    const done = (await client.sendMessage(send('report'))) as Task;
    await expect(client.cancelTask({ id: done.id })).rejects.toBeInstanceOf(TaskNotCancelableError);
  });

  it('resubscribeTask: the task snapshot, then the follow-up through to the final status-update', async () => {
    const parked = (await client.sendMessage(send('book'))) as Task;
    const events: StreamEvent[] = [];
    const subscribed = deferred();
    const following = (async () => {
      for await (const event of client.resubscribeTask({ id: parked.id })) {
        events.push(event as StreamEvent);
        subscribed.resolve(); // the task snapshot comes once the subscription is open
      }
    })();
    await Promise.race([subscribed.promise, following]);
    await client.sendMessage(send('Sunday', { taskId: parked.id }));
    await following;
    expect(events[0]).toMatchObject({ kind: 'task', id: parked.id, status: { state: 'input-required' } });
    expect(events.at(-1)).toMatchObject({ kind: 'status-update', status: { state: 'completed' }, final: true });
  });

  it('getAgentCard: the authenticated extended card (the public card says supportsAuthenticatedExtendedCard)', async () => {
    expect(card.supportsAuthenticatedExtendedCard).toBe(true);
    const extended = await client.getAgentCard();
    expect(extended.name).toBe('Extended Test Agent');
    expect(extended.url).toBe(server.url);
    expect(extended.protocolVersion).toBe('0.3.0');
    expect(extended.additionalInterfaces?.map((i) => i.transport)).toEqual(['JSONRPC', 'HTTP+JSON']);
    expect(extended.skills.map((s) => s.id)).toEqual(['echo']);
  });

  it('push notification configs: every call answered PushNotificationNotSupportedError by the server', async () => {
    const task = (await client.sendMessage(send('report'))) as Task;
    // Through the transport: the Client refuses before sending, the card having no pushNotifications.
    const wire = client.transport;
    await expect(
      wire.setTaskPushNotificationConfig({ taskId: task.id, pushNotificationConfig: { id: 'c-1', url: 'https://hooks.example.com/a2a' } }),
    ).rejects.toBeInstanceOf(PushNotificationNotSupportedError);
    await expect(wire.getTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'c-1' })).rejects.toBeInstanceOf(
      PushNotificationNotSupportedError,
    );
    await expect(wire.listTaskPushNotificationConfig({ id: task.id })).rejects.toBeInstanceOf(PushNotificationNotSupportedError);
    await expect(wire.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: 'c-1' })).rejects.toBeInstanceOf(
      PushNotificationNotSupportedError,
    );
  });

  it(`reached the server on its ${transport} routes only`, () => {
    const reached = [...paths];
    if (transport === 'JSONRPC') expect(reached).toEqual(['POST /']);
    else
      expect(
        reached.every((p) =>
          / \/v1\/(message:send|message:stream|card|tasks\/[^/]+(:cancel|:subscribe|\/pushNotificationConfigs(\/c-1)?)?)$/.test(p),
        ),
      ).toBe(true);
  });
});

describe('official A2A v0.3 client (a2a-sdk-v03): the legacy A2AClient', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor);
  });
  afterAll(() => server.close());

  it('the legacy A2AClient, from the card URL, speaks to the same endpoint', async () => {
    const legacy = await A2AClient.fromCardUrl(`${server.url}/.well-known/agent-card.json`);
    const response = await legacy.sendMessage(send('report'));
    expect('result' in response && (response.result as Task).status.state).toBe('completed');
    await expect(legacy.getTask({ id: 'nope' })).rejects.toBeInstanceOf(TaskNotFoundError);
  });
});
