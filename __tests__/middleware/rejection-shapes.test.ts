/**
 * A middleware's rejection answers in the binding and version the router serves the request with,
 * wherever the middleware is mounted (issue 29): as a router option, in front of the router, in a
 * nested Router in front of it, under Connect. Every binding x version x mount x rejection: JSON-RPC
 * 1.0 and 0.3 get an error envelope (id null: the rejection comes before the body is read), HTTP+JSON
 * 1.0 a google.rpc.Status, HTTP+JSON 0.3 (`/v1/...`, no A2A-Version) its `{code, message, data}` body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { createA2ARouter, type AgentExecutor } from '../../lib';
import { a2aAuth, a2aAuthErrors, a2aSecurity, a2aTenant, a2aTracing, bearerJwt, claim } from '../../lib/middleware';
import { testCard } from '../helpers/fixtures';
import { HS_SECRET, signToken, start, type Running } from './helpers';

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

type Next = (error?: unknown) => void;
interface ConnectApp {
  (req: IncomingMessage, res: ServerResponse): void;
  use(...args: unknown[]): ConnectApp;
}
const connect = require('connect') as () => ConnectApp;

const silent = { debug() {}, info() {}, warn() {}, error() {} };
// The app's own auth: a 403 (a scope check) when asked for by a header, answered through a2aAuthErrors.
const forbidOnAsk = (req: IncomingMessage, _res: ServerResponse, next: Next) =>
  next(req.headers['x-forbid'] ? Object.assign(new Error('insufficient scope'), { status: 403 }) : undefined);
const options = {
  security: { bodyLimit: '1kb' },
  tracing: { invalidRequestId: 'reject' as const },
  auth: { user: bearerJwt({ key: HS_SECRET }) },
  tenant: { from: claim('tid') },
};
const inFront = () => [
  a2aSecurity(options.security),
  a2aTracing(options.tracing),
  forbidOnAsk,
  a2aAuth(options.auth),
  a2aTenant(options.tenant),
  createA2ARouter({ agentCard: testCard, executor, logger: silent }),
];

type Mount = 'router option' | 'in front' | 'app-wide, in front' | 'nested Router, in front' | 'Connect, in front' | 'Connect, router option';
const MOUNTS: Record<Mount, () => (req: IncomingMessage, res: ServerResponse) => void> = {
  'router option': () => {
    const app = express();
    app.use('/agent', forbidOnAsk, createA2ARouter({ agentCard: testCard, executor, logger: silent, ...options }));
    app.use(a2aAuthErrors());
    return app;
  },
  'in front': () => {
    const app = express();
    app.use('/agent', ...inFront());
    app.use(a2aAuthErrors());
    return app;
  },
  'app-wide, in front': () => {
    const app = express();
    const chain = inFront();
    app.use(...chain.slice(0, -1));
    app.use('/agent', chain.at(-1)!);
    app.use(a2aAuthErrors());
    return app;
  },
  'nested Router, in front': () => {
    const app = express();
    const outer = express.Router();
    const inner = express.Router();
    inner.use(...inFront());
    outer.use('/agent', inner);
    app.use(outer);
    app.use(a2aAuthErrors());
    return app;
  },
  'Connect, in front': () => {
    const app = connect();
    for (const handle of inFront()) app.use('/agent', handle);
    app.use(a2aAuthErrors());
    return app;
  },
  'Connect, router option': () => {
    const app = connect();
    app.use('/agent', forbidOnAsk);
    app.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger: silent, ...options }));
    app.use(a2aAuthErrors());
    return app;
  },
};

describe.each(Object.keys(MOUNTS) as Mount[])('middleware rejections in the binding and version of the request: %s', (mount) => {
  let server: Running;
  beforeAll(async () => {
    server = await start(MOUNTS[mount]() as never);
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
  /**
   * a2aSecurity's headers on what the kit refuses once it ran (not on the app's own auth's answer
   * in front of the router's preset); the request id on everything after a2aTracing, and on the
   * app's auth errors that a2aAuthErrors answers.
   */
  const appAuthFirst = mount.includes('router option');
  const expectKitHeaders = (response: Response, { security = true, requestId = true } = {}) => {
    if (security) expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    if (requestId) expect(response.headers.get('x-request-id')).toMatch(/^[A-Za-z0-9._:-]+$/);
  };

  it.each(bindings)('%s: auth, no token: 401 A2A_AUTH_REQUIRED with a challenge', async (binding) => {
    const response = await send(binding);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="a2a"/);
    expectKitHeaders(response);
    await expectRejection(response, binding, 401, 'A2A_AUTH_REQUIRED', -32600);
  });

  it.each(bindings)('%s: auth, invalid token: 401 A2A_AUTH_INVALID', async (binding) => {
    const response = await send(binding, { authorization: 'Bearer not-a-jwt' });
    await expectRejection(response, binding, 401, 'A2A_AUTH_INVALID', -32600);
  });

  it.each(bindings)("%s: the app's own auth refuses (403, through a2aAuthErrors): A2A_AUTH_FORBIDDEN", async (binding) => {
    const response = await send(binding, { 'x-forbid': '1' });
    expect(response.headers.get('www-authenticate')).toMatch(/error="insufficient_scope"/);
    expectKitHeaders(response, { security: !appAuthFirst });
    await expectRejection(response, binding, 403, 'A2A_AUTH_FORBIDDEN', -32600);
  });

  it.each(bindings)('%s: tenant refused (none stated): 400 A2A_TENANT_REQUIRED', async (binding) => {
    const token = await signToken({ sub: 'carol' });
    const response = await send(binding, { authorization: `Bearer ${token}` });
    expectKitHeaders(response);
    await expectRejection(response, binding, 400, 'A2A_TENANT_REQUIRED', -32602);
  });

  it.each(bindings)('%s: body over the limit: 413 A2A_BODY_TOO_LARGE', async (binding) => {
    const token = await signToken({ sub: 'carol', tid: 'globex' });
    const response = await send(binding, { authorization: `Bearer ${token}` }, 2000);
    expectKitHeaders(response, { requestId: false }); // security runs before tracing
    await expectRejection(response, binding, 413, 'A2A_BODY_TOO_LARGE', -32600);
  });

  it.each(bindings)('%s: tracing refuses a malformed request id: 400 A2A_INVALID_REQUEST_ID', async (binding) => {
    const response = await send(binding, { 'x-request-id': 'not valid!' });
    expectKitHeaders(response);
    await expectRejection(response, binding, 400, 'A2A_INVALID_REQUEST_ID', -32600);
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
