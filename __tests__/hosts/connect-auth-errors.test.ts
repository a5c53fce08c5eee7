/**
 * Issue 30, item 4: under Connect 3, a2aAuthErrors' default scope finds the router (Connect states
 * its mount on it), so express-jwt's 401s for /agent get the A2A answer instead of Connect's HTML
 * page; the app's own routes keep theirs. Typed for Connect: no cast.
 */
import connect from 'connect';
import { expressjwt } from 'express-jwt';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib';
import { a2aAuth, a2aAuthErrors, a2aTracing, fromRequestUser } from '../../lib/middleware';
import { testCard } from '../helpers/fixtures';
import type { Listening } from '../helpers/http';
import { HS_SECRET, signToken } from '../middleware/helpers';
import { fetchAny, listenPlain } from './plain-host';

describe('a2aAuthErrors under Connect 3 (default scope)', () => {
  const executor: AgentExecutor = { execute: (ctx, events) => events.reply(`hello ${ctx.caller.id}`) };
  let server: Listening;

  beforeAll(async () => {
    const app = connect();
    const api = connect();
    const jwt = expressjwt({ secret: Buffer.from(HS_SECRET), algorithms: ['HS256'] });
    api.use('/agent', jwt as unknown as connect.NextHandleFunction); // express-jwt is typed for Express only
    api.use('/agent', a2aTracing());
    api.use('/agent', a2aAuth({ user: fromRequestUser() }));
    api.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger: silentLogger }));
    api.use('/account', (_req, _res, next) => next(Object.assign(new Error('log in first'), { status: 401 })));
    app.use('/api/v2', api);
    app.use(a2aAuthErrors());
    server = await listenPlain(app);
  });
  afterAll(() => server.close());

  it('answers a v0.3 HTTP+JSON GET refused by express-jwt in the v0.3 shape, with a challenge and a request id', async () => {
    const response = await fetchAny(`${server.baseUrl}/api/v2/agent/v1/tasks/x`, { headers: { 'x-request-id': 'req-42' } });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="a2a"');
    expect(response.headers.get('x-request-id')).toBe('req-42');
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({
      code: -32600,
      message: 'Authentication required',
      data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'A2A_AUTH_REQUIRED', domain: 'a2a-express-kit' }],
    });
  });

  it('answers a JSON-RPC POST refused by express-jwt as a JSON-RPC envelope (fresh request id)', async () => {
    const response = await fetchAny(`${server.baseUrl}/api/v2/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: '{}',
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await response.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it("leaves the app's own 401 on another route to Connect", async () => {
    const response = await fetchAny(`${server.baseUrl}/api/v2/account`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBeNull();
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('lets a valid token through to the agent', async () => {
    const response = await fetchAny(`${server.baseUrl}/api/v2/agent/message:send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${await signToken({ sub: 'alice' })}` },
      body: JSON.stringify({ message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }),
    });
    expect(response.status).toBe(200);
    expect((await response.json()).message.parts[0].text).toBe('hello alice');
  });
});
