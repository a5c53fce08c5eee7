/**
 * The 503 a request gets while router.close() drains says what it is and when to come back: a
 * `Retry-After` header and an ErrorInfo `A2A_SHUTTING_DOWN` (domain a2a-express-kit), in the shape
 * of every binding and version (issue 20).
 */
import type { AgentExecutor } from '../../lib';
import { deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';

const SHUTTING_DOWN = { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'A2A_SHUTTING_DOWN', domain: 'a2a-express-kit' };
const v03Message = { kind: 'message', messageId: 'm-late', role: 'user', parts: [{ kind: 'text', text: 'too late' }] };

describe('the shutdown 503', () => {
  let server: TestServer;
  const release = deferred();
  let blocking: Promise<unknown>;
  let closed: Promise<void>;

  beforeAll(async () => {
    const started = deferred();
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start();
        started.resolve();
        await release.promise;
        await events.complete('finished during the drain');
      },
    };
    server = await startAgent(executor);
    blocking = rpc(server.url, 'SendMessage', userMessage('work'));
    await started.promise;
    closed = server.router.close({ graceMs: 60_000 });
  });
  afterAll(async () => {
    release.resolve();
    await blocking;
    await closed;
    await server.close();
  });

  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });

  it('JSON-RPC v1.0: an error envelope with the ErrorInfo, and Retry-After', async () => {
    const reply = await rpc(server.url, 'SendMessage', userMessage('too late'), { id: 'late' });
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(reply.body).toEqual({
      jsonrpc: '2.0',
      id: 'late',
      error: { code: -32603, message: 'This agent is shutting down; send the message again later', data: [SHUTTING_DOWN] },
    });
  });

  it('HTTP+JSON v1.0: a google.rpc.Status UNAVAILABLE with the ErrorInfo, and Retry-After', async () => {
    const response = await post('/message:send', userMessage('too late'), { 'A2A-Version': '1.0' });
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    expect(await response.json()).toEqual({
      error: { code: 503, status: 'UNAVAILABLE', message: 'This agent is shutting down; send the message again later', details: [SHUTTING_DOWN] },
    });
  });

  it('JSON-RPC v0.3: the ErrorInfo in error.data, and Retry-After', async () => {
    const response = await post('', { jsonrpc: '2.0', id: 3, method: 'message/send', params: { message: v03Message } }, {});
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    const body = (await response.json()) as { id: unknown; error: { code: number; data: unknown[] } };
    expect(body.id).toBe(3);
    expect(body.error.code).toBe(-32603);
    expect(body.error.data).toEqual([SHUTTING_DOWN]);
  });

  it('HTTP+JSON v0.3: the ErrorInfo in data, and Retry-After', async () => {
    const response = await post('/v1/message:send', { message: { messageId: 'm-late', role: 'ROLE_USER', content: [{ text: 'too late' }] } }, {});
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('1');
    const body = (await response.json()) as { code: number; data: unknown[] };
    expect(body.data).toEqual([SHUTTING_DOWN]);
  });
});
