/** JSON-RPC 2.0 envelope (§9, digest §7/§11): parse/envelope/method/params errors, id echo, error data, no internal leaks. */
import type { AgentExecutor, Logger } from '../../lib';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const BAD_REQUEST = 'type.googleapis.com/google.rpc.BadRequest';

const executor: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'explode') throw new Error('secret-db-password');
    await events.complete('ok');
  },
};

const badRequestOf = (body: any) => body.error.data?.find((d: { '@type': string }) => d['@type'] === BAD_REQUEST);

describe('JSON-RPC envelope', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor);
  });
  afterAll(() => server.close());

  it('answers -32700 with id null for a body that is not JSON', async () => {
    const reply = await rpc(server.url, 'SendMessage', undefined, { raw: '{"jsonrpc": "2.0", "id": 5, "method": ' });
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  // LIBRARY BUG (lib/express/router.ts, express.json() left in strict mode): valid JSON that is not an
  // object/array is reported as -32700 Parse error; JSON-RPC 2.0 reserves -32700 for invalid JSON and
  // calls a valid-JSON non-object an Invalid Request (-32600). Digest §7.1.
  it.each([
    ['a JSON number', '42'],
    ['a JSON string', '"SendMessage"'],
    ['JSON null', 'null'],
  ])('answers -32600 with id null for a body that is valid JSON but not an object (%s)', async (_name, raw) => {
    const reply = await rpc(server.url, 'SendMessage', undefined, { raw });
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('answers -32600 with id null for a batch array', async () => {
    const one = { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } };
    const reply = await rpc(server.url, 'SendMessage', undefined, { raw: JSON.stringify([one, { ...one, id: 2 }]) });
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    expect(Array.isArray(reply.body)).toBe(false);
  });

  it('answers -32600 when jsonrpc is not "2.0", echoing the id', async () => {
    const raw = JSON.stringify({ jsonrpc: '1.0', id: 'v1', method: 'GetTask', params: { id: 'x' } });
    const reply = await rpc(server.url, 'GetTask', undefined, { raw });
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: 'v1', error: { code: -32600 } });
  });

  it('answers -32600 when method is missing', async () => {
    const raw = JSON.stringify({ jsonrpc: '2.0', id: 9, params: { id: 'x' } });
    const reply = await rpc(server.url, 'GetTask', undefined, { raw });
    expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: -32600 } });
  });

  it('answers -32601 for an unknown method (and for a v0.3 method name)', async () => {
    for (const method of ['DoSomethingElse', 'message/send']) {
      const reply = await rpc(server.url, method, {}, { id: 'm' });
      expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: 'm', error: { code: -32601 } });
    }
  });

  it('answers -32602 naming message.parts, with a google.rpc.BadRequest detail', async () => {
    const params = { message: { messageId: 'm-1', role: 'ROLE_USER' } };
    const reply = await rpc(server.url, 'SendMessage', params);
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toContain('message.parts');
    const detail = badRequestOf(reply.body);
    expect(detail).toBeDefined();
    expect(detail.fieldViolations).toEqual(
      expect.arrayContaining([expect.objectContaining({ field: 'message.parts', description: expect.any(String) })]),
    );
  });

  it('answers -32602 naming message.messageId when it is missing', async () => {
    const params = { message: { role: 'ROLE_USER', parts: [{ text: 'hi' }] } };
    const reply = await rpc(server.url, 'SendMessage', params);
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toContain('message.messageId');
    expect(badRequestOf(reply.body).fieldViolations.map((v: { field: string }) => v.field)).toContain('message.messageId');
  });

  it('answers -32602 naming a nested part path (message.parts[0])', async () => {
    const params = { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'a', data: { b: 1 } }] } };
    const reply = await rpc(server.url, 'SendMessage', params);
    expect(reply.body.error.code).toBe(-32602);
    expect(badRequestOf(reply.body).fieldViolations[0].field).toBe('message.parts[0]');
  });

  describe.each([
    ['0', 0],
    ['""', ''],
    ['a string', 'req-abc'],
    ['a number', 12345],
  ])('id %s', (_name, id) => {
    it('is echoed exactly on a success response', async () => {
      const reply = await rpc(server.url, 'SendMessage', userMessage('hello'), { id });
      expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(reply.body.id).toStrictEqual(id);
    });

    it('is echoed exactly on an error response (A2A error, params error, unknown method)', async () => {
      const notFound = await rpc(server.url, 'GetTask', { id: 'no-such-task' }, { id });
      expect(notFound.body.error.code).toBe(-32001);
      expect(notFound.body.id).toStrictEqual(id);
      const badParams = await rpc(server.url, 'GetTask', {}, { id });
      expect(badParams.body.error.code).toBe(-32602);
      expect(badParams.body.id).toStrictEqual(id);
      const unknown = await rpc(server.url, 'Nope', {}, { id });
      expect(unknown.body.error.code).toBe(-32601);
      expect(unknown.body.id).toStrictEqual(id);
    });
  });

  it('A2A errors carry a google.rpc.ErrorInfo with reason and domain a2a-protocol.org in error.data[0]', async () => {
    const reply = await rpc(server.url, 'GetTask', { id: 'missing-task' });
    expect(reply.body.error.code).toBe(-32001);
    expect(Array.isArray(reply.body.error.data)).toBe(true);
    expect(reply.body.error.data[0]).toMatchObject({ '@type': ERROR_INFO, reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' });
    for (const entry of reply.body.error.data) expect(typeof entry['@type']).toBe('string');

    const push = await rpc(server.url, 'GetTaskPushNotificationConfig', { taskId: 't', id: 'c' });
    expect(push.body.error.code).toBe(-32003);
    expect(push.body.error.data[0]).toMatchObject({
      '@type': ERROR_INFO,
      reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
      domain: 'a2a-protocol.org',
    });
  });
});

describe('an executor that throws', () => {
  it('fails the task with a generic message, leaks nothing to the client and logs the error', async () => {
    const logger: Logger = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    const server = await startAgent(executor, { logger });
    try {
      const reply = await rpc(server.url, 'SendMessage', userMessage('explode'));
      const task = reply.body.result.task;
      expect(task.status.state).toBe('TASK_STATE_FAILED');
      expect(task.status.message.role).toBe('ROLE_AGENT');
      const statusText = task.status.message.parts[0].text as string;
      expect(statusText.length).toBeGreaterThan(0);
      expect(statusText).not.toContain('secret');
      expect(reply.text).not.toContain('secret-db-password');
      expect(reply.text).not.toMatch(/\bat\s/); // no stack frame ("at fn (file:line:col)")
      expect(reply.text).not.toContain('Error:');

      const fetched = await rpc(server.url, 'GetTask', { id: task.id });
      expect(fetched.body.result.status.state).toBe('TASK_STATE_FAILED');
      expect(fetched.text).not.toContain('secret-db-password');
      expect(fetched.text).not.toMatch(/\bat\s/);

      const logged = (logger.error as jest.Mock).mock.calls.map((call) => call[0]);
      expect(logged).toEqual(expect.arrayContaining([expect.objectContaining({ err: expect.objectContaining({ message: 'secret-db-password' }) })]));
    } finally {
      await server.close();
    }
  });
});
