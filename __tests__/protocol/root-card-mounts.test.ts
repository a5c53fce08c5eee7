/**
 * The card at the origin root names the router's URL on the very first request, in every mount the docs
 * show (direct, sub-app, Routers two deep, Connect), and the official client's createFromUrl(origin)
 * then reaches the agent; where the mount cannot be known, the card is not cacheable and one warning names publicUrl.
 */
// The SDK's CJS build requires jose v6 (ESM-only); the client never calls it (test-environment workaround).
jest.mock(require.resolve('jose', { paths: [require('node:path').dirname(require.resolve('@a2a-js/sdk/client'))] }), () => ({}));
import type { IncomingMessage, ServerResponse } from 'node:http';
import express from 'express';
import { ClientFactory } from '@a2a-js/sdk/client';
import type { Message } from '@a2a-js/sdk';
import { createA2ARouter, silentLogger, type A2ARouter, type AgentExecutor, type Logger } from '../../lib';
import { testCard } from '../helpers/fixtures';
import { V1, type Listening } from '../helpers/http';
import { clientSend } from '../helpers/official-client';
import { fetchAny, listenPlain } from '../hosts/plain-host';

type Handle = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;
interface ConnectApp {
  (req: IncomingMessage, res: ServerResponse): void;
  use(path: string, handle: Handle): ConnectApp;
}
const connect = require('connect') as () => ConnectApp;

const executor: AgentExecutor = {
  async execute(ctx, events) {
    await events.reply(`echo ${ctx.userText}`);
  },
};

function warnings(): Logger & { codes: string[] } {
  const codes: string[] = [];
  return { ...silentLogger, warn: (fields: unknown) => void codes.push(String((fields as { code?: string } | null)?.code)), codes };
}

type Mount = (agent: A2ARouter) => (req: IncomingMessage, res: ServerResponse) => void;

const mounts: Array<[string, string, Mount]> = [
  [
    'app.use directly',
    '/agent',
    (agent) => {
      const app = express();
      app.use('/agent', agent);
      app.get('/.well-known/agent-card.json', agent.wellKnownCard);
      return app;
    },
  ],
  [
    'a sub-app',
    '/svc/agent',
    (agent) => {
      const app = express();
      const sub = express();
      sub.use('/agent', agent);
      app.use('/svc', sub);
      app.get('/.well-known/agent-card.json', agent.wellKnownCard);
      return app;
    },
  ],
  [
    'express.Router() two deep',
    '/api/v2/agent',
    (agent) => {
      const app = express();
      const api = express.Router();
      const v2 = express.Router();
      v2.use('/agent/', agent);
      api.use('/v2', v2);
      app.use('/api', api);
      app.get('/.well-known/agent-card.json', agent.wellKnownCard);
      return app;
    },
  ],
  [
    'Connect',
    '/agent',
    (agent) => {
      const app = connect();
      app.use('/.well-known/agent-card.json', agent.wellKnownCard);
      app.use('/agent', agent);
      return app;
    },
  ],
];

describe.each(mounts)('the root card, router mounted by %s', (_name, path, mount) => {
  let server: Listening;
  const logger = warnings();
  beforeAll(async () => {
    server = await listenPlain(mount(createA2ARouter({ agentCard: testCard, executor, logger })));
  });
  afterAll(() => server.close());

  it('names the router on the first request, cacheable, without a warning; the official client reaches the agent from the origin', async () => {
    const response = await fetchAny(`${server.baseUrl}/.well-known/agent-card.json`, { headers: V1 });
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    const urls = ((await response.json()).supportedInterfaces as Array<{ url: string }>).map((i) => i.url);
    expect(new Set(urls)).toEqual(new Set([`${server.baseUrl}${path}`]));
    const client = await new ClientFactory().createFromUrl(server.baseUrl);
    const reply = (await client.sendMessage(clientSend('hi'))) as Message;
    expect(reply.parts[0].content).toEqual({ $case: 'text', value: 'echo hi' });
    expect(logger.codes).not.toContain('A2A_WIRING_CARD_URL_UNKNOWN');
  });
});

describe('the root card where the mount cannot be known (Connect apps nested)', () => {
  let server: Listening;
  const logger = warnings();
  beforeAll(async () => {
    const agent = createA2ARouter({ agentCard: testCard, executor, logger });
    const app = connect();
    const api = connect();
    api.use('/agent', agent);
    app.use('/api/v2', api);
    app.use('/.well-known/agent-card.json', agent.wellKnownCard);
    server = await listenPlain(app);
  });
  afterAll(() => server.close());

  it('names the bare origin uncached and warns once, naming publicUrl; learns the path from the first request the router serves', async () => {
    const rootCard = `${server.baseUrl}/.well-known/agent-card.json`;
    const first = await fetchAny(rootCard, { headers: V1 });
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect((await first.json()).supportedInterfaces[0].url).toBe(server.baseUrl);
    await fetchAny(rootCard, { headers: V1 });
    expect(logger.codes.filter((code) => code === 'A2A_WIRING_CARD_URL_UNKNOWN')).toHaveLength(1);

    expect((await fetchAny(`${server.baseUrl}/api/v2/agent/.well-known/agent-card.json`)).status).toBe(200);
    const learned = await fetchAny(rootCard, { headers: V1 });
    expect(learned.headers.get('cache-control')).toBe('public, max-age=300');
    expect((await learned.json()).supportedInterfaces[0].url).toBe(`${server.baseUrl}/api/v2/agent`);
  });
});
