/**
 * examples/existing-app as a user runs it: the app's passport-jwt auth in front of the agent, the
 * public root card, per-user and per-tenant tasks, streaming, and the official client through it.
 */
// The SDK's CJS build requires jose v6, which is ESM-only; Jest's CommonJS runtime cannot load it and the
// client never calls it, so it is replaced by an empty module (test-environment workaround only).
jest.mock(require.resolve('jose', { paths: [require('node:path').dirname(require.resolve('@a2a-js/sdk/client'))] }), () => ({}));

import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, createAuthenticatingFetchWithRetry, type Client } from '@a2a-js/sdk/client';
import { TaskState, type Task } from '@a2a-js/sdk';
import { createApp } from '../../examples/existing-app/app';
import type { AuditEntry } from '../../examples/existing-app/agent';
import { signDevToken } from '../../examples/existing-app/auth';
import { clientSend } from '../helpers/official-client';
import { listen, rpc, rpcStream, userMessage, type Listening } from '../helpers/http';

const SECRET = 'existing-app-test-secret-0123456789abcdef';

describe('examples/existing-app', () => {
  let server: Listening;
  let audit: AuditEntry[];
  let alice: Record<string, string>;
  let bob: Record<string, string>;
  let url: string;

  beforeAll(async () => {
    audit = [];
    const { app } = createApp({ jwtSecret: SECRET, audit: (entry) => audit.push(entry) });
    server = await listen(app);
    url = `${server.baseUrl}/agent`;
    alice = { authorization: `Bearer ${await signDevToken({ sub: 'alice', name: 'Alice' }, SECRET)}`, 'x-tenant-id': 't1' };
    bob = { authorization: `Bearer ${await signDevToken({ sub: 'bob', name: 'Bob' }, SECRET)}`, 'x-tenant-id': 't1' };
  });
  afterAll(() => server.close());
  beforeEach(() => {
    audit.length = 0;
  });

  it('serves the card at the origin root without credentials, pointing at /agent', async () => {
    const response = await fetch(`${server.baseUrl}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const card = (await response.json()) as {
      name: string;
      supportedInterfaces: unknown;
      securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: string } } };
    };
    expect(card.name).toBe('Expense Assistant');
    expect(card.supportedInterfaces).toEqual([
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      // v0.3 compatibility (on by default): both endpoints also speak 0.3 (HTTP+JSON under /v1).
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ]);
    expect(card.securitySchemes.bearer.httpAuthSecurityScheme.scheme).toBe('Bearer');
  });

  it("keeps the app's own routes and auth as they were", async () => {
    expect((await fetch(`${server.baseUrl}/`)).status).toBe(200);
    expect((await fetch(`${server.baseUrl}/api/me`)).status).toBe(401);
    const me = await fetch(`${server.baseUrl}/api/me`, { headers: { authorization: alice.authorization } });
    expect(await me.json()).toEqual({ id: 'alice', displayName: 'Alice' });
  });

  it("answers 401 from the app's passport without a valid token; the agent never runs", async () => {
    const missing = await rpc(url, 'SendMessage', userMessage('file an expense'), { headers: { 'x-tenant-id': 't1' } });
    expect(missing.status).toBe(401);
    expect(missing.text).toBe('Unauthorized');
    const forged = await signDevToken({ sub: 'alice' }, 'another-secret-that-is-long-enough-0123456789');
    const bad = await rpc(url, 'SendMessage', userMessage('file an expense'), {
      headers: { authorization: `Bearer ${forged}`, 'x-tenant-id': 't1' },
    });
    expect(bad.status).toBe(401);
    expect(audit).toEqual([]);
  });

  it('asks for a tenant when the header is missing (a2aTenant, after the app let the user in)', async () => {
    const reply = await rpc(url, 'ListTasks', {}, { headers: { authorization: alice.authorization } });
    expect(reply.status).toBe(400);
    expect(reply.body.error.data[0].reason).toBe('A2A_TENANT_REQUIRED');
  });

  it('alice in t1: a two-turn task, and execute() saw alice, t1 and each request id', async () => {
    const first = await rpc(url, 'SendMessage', userMessage('file an expense'), { headers: { ...alice, 'x-request-id': 'req-a1' } });
    expect(first.headers.get('x-request-id')).toBe('req-a1');
    const task = first.body.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(task.status.message.parts[0].text).toBe('Sure, Alice: how much, and what for?');

    const second = await rpc(url, 'SendMessage', userMessage('42 EUR taxi', { taskId: task.id }), {
      headers: { ...alice, 'x-request-id': 'req-a2' },
    });
    const done = second.body.result.task;
    expect(done.status.state).toBe('TASK_STATE_COMPLETED');
    expect(done.artifacts[0].parts[0].text).toBe('Expense "42 EUR taxi" filed for Alice at t1.');
    expect(done.artifacts[0].metadata).toEqual({ filedBy: 'alice', tenant: 't1', requestId: 'req-a2' });
    expect(audit).toEqual([
      { taskId: task.id, turn: 'ask', user: 'alice', tenant: 't1', requestId: 'req-a1' },
      { taskId: task.id, turn: 'file', user: 'alice', tenant: 't1', requestId: 'req-a2' },
    ]);
  });

  it("bob cannot see or continue alice's task, nor can alice from another tenant", async () => {
    const task = (await rpc(url, 'SendMessage', userMessage('file an expense'), { headers: alice })).body.result.task;
    for (const headers of [bob, { ...alice, 'x-tenant-id': 't2' }]) {
      expect((await rpc(url, 'GetTask', { id: task.id }, { headers })).body.error.code).toBe(-32001);
      expect((await rpc(url, 'SendMessage', userMessage('1 EUR', { taskId: task.id }), { headers })).body.error.code).toBe(-32001);
      expect((await rpc(url, 'ListTasks', {}, { headers })).body.result.tasks.map((t: Task) => t.id)).not.toContain(task.id);
    }
    expect((await rpc(url, 'GetTask', { id: task.id }, { headers: alice })).body.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('streams both turns', async () => {
    const first = await rpcStream(url, 'SendStreamingMessage', userMessage('file an expense'), { headers: bob });
    expect(first.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const taskId = first.events[0].result.task.id;
    const last = first.events.at(-1).result;
    expect((last.task ?? last.statusUpdate).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const second = await rpcStream(url, 'SendStreamingMessage', userMessage('lunch', { taskId }), { headers: bob });
    const kinds = second.events.map((event) => Object.keys(event.result)[0]);
    expect(kinds).toContain('artifactUpdate');
    expect(second.events.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(audit.map((entry) => [entry.user, entry.tenant, entry.turn])).toEqual([
      ['bob', 't1', 'ask'],
      ['bob', 't1', 'file'],
    ]);
  });

  describe('the official @a2a-js/sdk client', () => {
    /** Discovers the agent from the public root card; every A2A call carries the user's token and tenant. */
    async function clientFor(headers: Record<string, string>): Promise<Client> {
      const fetchImpl = createAuthenticatingFetchWithRetry(fetch, {
        headers: async () => ({ Authorization: headers.authorization, 'X-Tenant-Id': headers['x-tenant-id'] }),
        shouldRetryWithHeaders: async () => undefined,
      });
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl })] }),
      );
      return factory.createFromUrl(`${server.baseUrl}/`);
    }

    const send = (text: string, taskId = '') => clientSend(text, { taskId });

    it('runs a two-turn task, streams, and gets TaskNotFound for another user', async () => {
      const client = await clientFor(alice);
      const first = (await client.sendMessage(send('file an expense'))) as Task;
      expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      const second = (await client.sendMessage(send('train ticket', first.id))) as Task;
      expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(second.artifacts[0].parts[0].content).toEqual({ $case: 'text', value: 'Expense "train ticket" filed for Alice at t1.' });

      const cases: string[] = [];
      for await (const event of client.sendMessageStream(send('hello'))) cases.push(event.payload!.$case);
      expect(cases).toEqual(['message']);

      expect((await client.getTask({ tenant: '', id: first.id })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      const asBob = await clientFor(bob);
      await expect(asBob.getTask({ tenant: '', id: first.id })).rejects.toMatchObject({ name: 'TaskNotFoundError' });
      expect(audit.filter((entry) => entry.taskId === first.id).map((entry) => [entry.user, entry.tenant])).toEqual([
        ['alice', 't1'],
        ['alice', 't1'],
      ]);
    });
  });
});
