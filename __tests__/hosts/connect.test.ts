/**
 * The router in a real Connect 3 app (issue 19, item 1): card, both bindings, SSE and the middleware
 * preset. (`plain-node.test.ts` covers a bare http.createServer handler.)
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib';
import { bearerJwt } from '../../lib/middleware';
import { testCard } from '../helpers/fixtures';
import { rpc, rpcStream, userMessage, type Listening } from '../helpers/http';
import { HS_SECRET, signToken } from '../middleware/helpers';
import { fetchAny, listenPlain } from './plain-host';

type Handle = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;
interface ConnectApp {
  (req: IncomingMessage, res: ServerResponse): void;
  use(path: string, handle: Handle): ConnectApp;
}

const connect = require('connect') as () => ConnectApp;

describe('createA2ARouter in a Connect 3 app', () => {
  const executor: AgentExecutor = {
    async execute(ctx, events) {
      await events.reply(`${ctx.caller.id}: ${ctx.userText}`);
    },
  };
  let server: Listening;
  let agentUrl: string;
  const router = createA2ARouter({
    agentCard: testCard,
    executor,
    logger: silentLogger,
    security: true,
    auth: { user: bearerJwt({ key: HS_SECRET }) },
  });

  beforeAll(async () => {
    const app = connect!();
    const api = connect!();
    app.use('/.well-known/agent-card.json', router.wellKnownCard);
    api.use('/agent', router);
    app.use('/api/v2', api);
    server = await listenPlain(app);
    agentUrl = `${server.baseUrl}/api/v2/agent`;
  });
  afterAll(() => server.close());

  it('serves the card below the mount, with the nested mount path', async () => {
    const response = await fetchAny(`${agentUrl}/.well-known/agent-card.json?A2A-Version=1.0`);
    expect(response.status).toBe(200);
    expect((await response.json()).supportedInterfaces[0].url).toBe(agentUrl);
  });

  it('answers JSON-RPC, HTTP+JSON and SSE through its preset', async () => {
    const authorization = `Bearer ${await signToken({ sub: 'carol' })}`;
    const reply = await rpc(agentUrl, 'SendMessage', userMessage('hi'), { headers: { authorization } });
    expect(reply.body.result.message.parts[0].text).toBe('carol: hi');
    expect(reply.headers.get('content-security-policy')).toBeTruthy();
    const rest = await fetchAny(`${agentUrl}/message:send`, {
      method: 'POST',
      headers: { authorization, 'Content-Type': 'application/json', 'A2A-Version': '1.0' },
      body: JSON.stringify(userMessage('rest')),
    });
    expect((await rest.json()).message.parts[0].text).toBe('carol: rest');
    const stream = await rpcStream(agentUrl, 'SendStreamingMessage', userMessage('sse'), { headers: { authorization } });
    expect(stream.events.at(-1).result.message.parts[0].text).toBe('carol: sse');
    expect((await rpc(agentUrl, 'SendMessage', userMessage('x'))).status).toBe(401);
  });

  it('serves the card at the origin root with the mount path learned from the requests', async () => {
    const card = await (await fetchAny(`${server.baseUrl}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json();
    expect(card.supportedInterfaces[0].url).toBe(agentUrl);
  });
});
