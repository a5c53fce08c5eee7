/**
 * The router in a Connect-style app and in a bare `http.createServer` handler (issue 19, item 1):
 * no Express helper on the request or response, yet the card, both bindings, SSE, the preset
 * middlewares and the wiring checks behave as under Express.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createA2ARouter, silentLogger, type AgentExecutor, type Logger } from '../../lib';
import { a2aAuth, bearerJwt, header } from '../../lib/middleware';
import { testCard } from '../helpers/fixtures';
import { rpc, rpcStream, userMessage, type Listening } from '../helpers/http';
import { HS_SECRET, signToken } from '../middleware/helpers';
import { fetchAny, listenPlain, plainHost } from './plain-host';

const executor: AgentExecutor = {
  async execute(ctx, events) {
    await events.reply(`${ctx.caller.id}@${ctx.tenant || '-'}: ${ctx.userText ?? ''}`);
  },
};

function warnings(): Logger & { codes: string[]; messages: string[] } {
  const codes: string[] = [];
  const messages: string[] = [];
  const warn = (fields: unknown, message?: string) => {
    const code = (fields as { code?: string } | null)?.code;
    if (code) codes.push(code);
    if (message) messages.push(message);
  };
  return { ...silentLogger, warn, codes, messages };
}

describe('a Connect-style host (mount path cut from req.url, req.originalUrl kept)', () => {
  let server: Listening;
  let agentUrl: string;
  const logger = warnings();
  const router = createA2ARouter({
    agentCard: testCard,
    executor,
    logger,
    security: true,
    tracing: { opentelemetry: false },
    auth: { user: bearerJwt({ key: HS_SECRET }) },
    tenant: { from: header('x-tenant') },
  });

  beforeAll(async () => {
    const app = plainHost();
    app.use('/.well-known/agent-card.json', (req, res, next) => (req.url === '/' ? router.wellKnownCard(req, res, next) : next()));
    app.use('/agent', router);
    server = await listenPlain((req, res) => app(req, res));
    agentUrl = `${server.baseUrl}/agent`;
  });
  afterAll(() => server.close());

  const authorized = async () => ({ authorization: `Bearer ${await signToken({ sub: 'carol' })}`, 'x-tenant': 'acme' });

  it('serves the card below the mount with its interface URLs, ETag and 304', async () => {
    const response = await fetchAny(`${agentUrl}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } });
    expect(response.status).toBe(200);
    const card = await response.json();
    expect(card.supportedInterfaces.map((i: { url: string }) => i.url)).toContain(agentUrl);
    expect(response.headers.get('vary')).toBe('A2A-Version');
    const again = await fetchAny(`${agentUrl}/.well-known/agent-card.json`, {
      headers: { 'A2A-Version': '1.0', 'If-None-Match': response.headers.get('etag')! },
    });
    expect(again.status).toBe(304);
  });

  it('reads A2A-Version from the query string without req.query', async () => {
    const v1 = await (await fetchAny(`${agentUrl}/.well-known/agent-card.json?A2A-Version=1.0`)).json();
    const merged = await (await fetchAny(`${agentUrl}/.well-known/agent-card.json`)).json();
    expect(v1.url).toBeUndefined();
    expect(merged.url).toBe(agentUrl);
  });

  it('answers JSON-RPC through the preset: security headers, request id, auth, tenant', async () => {
    const reply = await rpc(agentUrl, 'SendMessage', userMessage('hi'), { headers: { ...(await authorized()), 'x-request-id': 'r-1' } });
    expect(reply.status).toBe(200);
    expect(reply.body.result.message.parts[0].text).toBe('carol@acme: hi');
    expect(reply.headers.get('x-request-id')).toBe('r-1');
    expect(reply.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
  });

  it('rejects an anonymous caller with 401 and a challenge, in JSON-RPC', async () => {
    const reply = await rpc(agentUrl, 'SendMessage', userMessage('hi'));
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(reply.body.error.code).toBeDefined();
  });

  it('serves v0.3 JSON-RPC (no A2A-Version) too', async () => {
    const reply = await rpc(
      agentUrl,
      'message/send',
      { message: { kind: 'message', messageId: 'm-03', role: 'user', parts: [{ kind: 'text', text: 'old' }] } },
      {
        headers: { ...(await authorized()), 'A2A-Version': '0.3' },
      },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.result.parts[0].text).toBe('carol@acme: old');
  });

  it('answers HTTP+JSON: message:send, then GET tasks/{id} with a query string', async () => {
    const headers = { ...(await authorized()), 'Content-Type': 'application/json', 'A2A-Version': '1.0' };
    const sent = await fetchAny(`${agentUrl}/message:send`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ...userMessage('rest'), configuration: { returnImmediately: false } }),
    });
    expect(sent.status).toBe(200);
    const body = await sent.json();
    expect(body.message.parts[0].text).toBe('carol@acme: rest');
    const missing = await fetchAny(`${agentUrl}/tasks/nope?historyLength=1`, { headers });
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.details[0].reason).toBe('TASK_NOT_FOUND');
  });

  it('streams over SSE', async () => {
    const reply = await rpcStream(agentUrl, 'SendStreamingMessage', userMessage('stream'), { headers: await authorized() });
    expect(reply.status).toBe(200);
    expect(reply.events.at(-1).result.message.parts[0].text).toBe('carol@acme: stream');
  });

  it('answers its own JSON 404 and 405 under the mount, and leaves other paths to the host', async () => {
    const notFound = await fetchAny(`${agentUrl}/nowhere`);
    expect(notFound.status).toBe(404);
    expect((await notFound.json()).error).toBeDefined();
    const notAllowed = await fetchAny(agentUrl, { method: 'GET' });
    expect(notAllowed.status).toBe(405);
    expect(notAllowed.headers.get('allow')).toBe('POST, OPTIONS');
    expect(await (await fetchAny(`${server.baseUrl}/elsewhere`)).text()).toBe('host 404');
  });

  it('serves the card at the origin root with the mount path it learned from the requests', async () => {
    const card = await (await fetchAny(`${server.baseUrl}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json();
    expect(card.supportedInterfaces[0].url).toBe(agentUrl);
    expect(logger.codes).not.toContain('A2A_WIRING_CARD_URL_UNKNOWN');
  });
});

describe('a bare http.createServer handler', () => {
  let server: Listening;
  const logger = warnings();
  const router = createA2ARouter({ agentCard: testCard, executor, logger, auth: { user: bearerJwt({ key: HS_SECRET }) } });
  beforeAll(async () => {
    server = await listenPlain((req: IncomingMessage, res: ServerResponse) =>
      router(req, res, (error) => {
        res.statusCode = error ? 500 : 404;
        res.end();
      }),
    );
  });
  afterAll(() => server.close());

  it('serves the card, with the origin as its URL', async () => {
    const card = await (await fetchAny(`${server.baseUrl}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json();
    expect(card.supportedInterfaces[0].url).toBe(server.baseUrl);
  });

  it('answers JSON-RPC and HTTP+JSON', async () => {
    const token = await signToken({ sub: 'dave' });
    const reply = await rpc(server.baseUrl, 'SendMessage', userMessage('plain'), { headers: { authorization: `Bearer ${token}` } });
    expect(reply.body.result.message.parts[0].text).toBe('dave@-: plain');
    const rest = await fetchAny(`${server.baseUrl}/message:send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify(userMessage('rest')),
    });
    expect((await rest.json()).message.parts[0].text).toBe('dave@-: rest');
  });

  it('reports a wiring mistake (auth twice) through the logger', async () => {
    const twice = createA2ARouter({ agentCard: testCard, executor, logger, auth: { user: bearerJwt({ key: HS_SECRET }) } });
    const token = await signToken({ sub: 'erin' });
    const outer = a2aAuth({ user: bearerJwt({ key: HS_SECRET }) });
    const host = plainHost();
    host.use('/a', outer);
    host.use('/a', twice);
    const listening = await listenPlain((req, res) => host(req, res));
    try {
      const reply = await rpc(`${listening.baseUrl}/a`, 'SendMessage', userMessage('x'), { headers: { authorization: `Bearer ${token}` } });
      expect(reply.status).toBe(200);
      expect(logger.codes).toContain('A2A_WIRING_AUTH_TWICE');
    } finally {
      await listening.close();
    }
  });
});
