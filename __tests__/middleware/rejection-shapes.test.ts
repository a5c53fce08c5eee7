/**
 * A middleware's rejection answers in the binding and version the router serves the request with:
 * the router records them before its preset runs (lib/context), so no middleware guesses from the
 * path. Every binding x version x rejection of the preset: JSON-RPC 1.0 and 0.3 get an error
 * envelope (id null: the preset runs before the body is read), HTTP+JSON 1.0 a google.rpc.Status, HTTP+JSON 0.3 (`/v1/...`,
 * no A2A-Version) its `{code, message, data}` body.
 */
import express from 'express';
import { createA2ARouter, type AgentExecutor } from '../../lib';
import { bearerJwt, claim } from '../../lib/middleware';
import { testCard } from '../helpers/fixtures';
import { signToken, start, type Running } from './helpers';

const executor: AgentExecutor = {
  async execute(_ctx, events) {
    await events.reply('never reached');
  },
};

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const v1Message = { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] };
const v03Message = { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] };
const v03RestMessage = { messageId: 'm-1', role: 'ROLE_USER', content: [{ text: 'hi' }] };

type Binding = 'JSON-RPC 1.0' | 'JSON-RPC 0.3' | 'HTTP+JSON 1.0' | 'HTTP+JSON 0.3';

/** The request of each binding and version: path, headers, and a body padded to `pad` characters. */
function requestOf(binding: Binding, pad: number): { path: string; headers: Record<string, string>; body: string } {
  const padding = 'x'.repeat(pad);
  switch (binding) {
    case 'JSON-RPC 1.0':
      return {
        path: '/agent',
        headers: { 'A2A-Version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: { message: v1Message }, padding }),
      };
    case 'JSON-RPC 0.3':
      return {
        path: '/agent',
        headers: {},
        body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'message/send', params: { message: v03Message }, padding }),
      };
    case 'HTTP+JSON 1.0':
      return { path: '/agent/message:send', headers: { 'A2A-Version': '1.0' }, body: JSON.stringify({ message: v1Message, padding }) };
    case 'HTTP+JSON 0.3':
      return { path: '/agent/v1/message:send', headers: {}, body: JSON.stringify({ message: v03RestMessage, padding }) };
  }
}

/** Asserts the answer is `reason` with `status`, in the shape of `binding`. */
async function expectRejection(response: Response, binding: Binding, status: number, reason: string, code: number): Promise<void> {
  const body: unknown = await response.json();
  expect(response.status).toBe(status);
  const info = expect.objectContaining({ '@type': ERROR_INFO, reason, domain: 'a2a-express-kit' });
  if (binding.startsWith('JSON-RPC')) {
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    // The preset runs before the body is read (a rejected request is not read): no id to echo.
    expect(body).toEqual({ jsonrpc: '2.0', id: null, error: { code, message: expect.any(String), data: [info] } });
  } else if (binding === 'HTTP+JSON 1.0') {
    expect(response.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
    expect(body).toEqual({ error: { code: status, status: expect.any(String), message: expect.any(String), details: [info] } });
  } else {
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(body).toEqual({ code, message: expect.any(String), data: [info] });
  }
}

describe('middleware rejections in the binding and version of the request', () => {
  let server: Running;
  beforeAll(async () => {
    const app = express();
    app.use(
      '/agent',
      createA2ARouter({
        agentCard: testCard,
        executor,
        security: { bodyLimit: '1kb' },
        auth: { user: bearerJwt({ key: new TextEncoder().encode('a-test-secret-that-is-at-least-32-bytes-long!') }) },
        tenant: { from: claim('tid') },
        logger: { debug() {}, info() {}, warn() {}, error() {} },
      }),
    );
    server = await start(app);
  });
  afterAll(() => server.close());

  const send = (binding: Binding, headers: Record<string, string> = {}, pad = 0) => {
    const request = requestOf(binding, pad);
    return fetch(server.url + request.path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...request.headers, ...headers },
      body: request.body,
    });
  };
  const bindings: Binding[] = ['JSON-RPC 1.0', 'JSON-RPC 0.3', 'HTTP+JSON 1.0', 'HTTP+JSON 0.3'];

  it.each(bindings)('%s: auth, no token: 401 A2A_AUTH_REQUIRED with a challenge', async (binding) => {
    const response = await send(binding);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="a2a"/);
    await expectRejection(response, binding, 401, 'A2A_AUTH_REQUIRED', -32600);
  });

  it.each(bindings)('%s: auth, invalid token: 401 A2A_AUTH_INVALID', async (binding) => {
    const response = await send(binding, { authorization: 'Bearer not-a-jwt' });
    await expectRejection(response, binding, 401, 'A2A_AUTH_INVALID', -32600);
  });

  it.each(bindings)('%s: tenant refused (none stated): 400 A2A_TENANT_REQUIRED', async (binding) => {
    const token = await signToken({ sub: 'carol' });
    const response = await send(binding, { authorization: `Bearer ${token}` });
    await expectRejection(response, binding, 400, 'A2A_TENANT_REQUIRED', -32602);
  });

  it.each(bindings)('%s: body over the limit: 413 A2A_BODY_TOO_LARGE', async (binding) => {
    const token = await signToken({ sub: 'carol', tid: 'globex' });
    const response = await send(binding, { authorization: `Bearer ${token}` }, 2000);
    await expectRejection(response, binding, 413, 'A2A_BODY_TOO_LARGE', -32600);
  });

  it('a v0.3 HTTP+JSON GET without A2A-Version or token gets the v0.3 body, not a google.rpc.Status', async () => {
    const response = await fetch(`${server.url}/agent/v1/tasks/x`);
    await expectRejection(response, 'HTTP+JSON 0.3', 401, 'A2A_AUTH_REQUIRED', -32600);
  });

  it('the same path stating A2A-Version 1.0 is v1.0 (`v1` a tenant): a google.rpc.Status', async () => {
    const response = await fetch(`${server.url}/agent/v1/tasks/x`, { headers: { 'A2A-Version': '1.0' } });
    await expectRejection(response, 'HTTP+JSON 1.0', 401, 'A2A_AUTH_REQUIRED', -32600);
  });

  it('a request that passes every middleware reaches the agent (the rejections above are the middlewares’)', async () => {
    const token = await signToken({ sub: 'carol', tid: 'globex' });
    const response = await send('HTTP+JSON 1.0', { authorization: `Bearer ${token}` });
    expect(response.status).toBe(200);
    expect(((await response.json()) as { message: { parts: Array<{ text: string }> } }).message.parts[0].text).toBe('never reached');
  });
});
