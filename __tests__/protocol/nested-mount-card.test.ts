/**
 * The card at the origin root (wellKnownCard) for a router Express never announced a mount for
 * (issue 19, item 2): nested in an express.Router(), it learns its mount path from the first request
 * it serves and warns once before then; `publicUrl` states the URL outright; a trailing `/` in the
 * mount path gives the same URL in both cards.
 */
import express from 'express';
import { createA2ARouter, silentLogger, type AgentExecutor, type Logger } from '../../lib';
import { testCard } from '../helpers/fixtures';
import { listen, rpc, userMessage, V1, type Listening } from '../helpers/http';
import { fetchAny } from '../hosts/plain-host';

const executor: AgentExecutor = {
  async execute(_ctx, events) {
    await events.reply('ok');
  },
};

function recordingLogger(): Logger & { codes: string[] } {
  const codes: string[] = [];
  return {
    ...silentLogger,
    warn: (fields: unknown) => {
      const code = (fields as { code?: string } | null)?.code;
      if (code) codes.push(code);
    },
    codes,
  };
}

const interfaceUrls = async (url: string): Promise<string[]> =>
  ((await (await fetchAny(url, { headers: V1 })).json()).supportedInterfaces as { url: string }[]).map((i) => i.url);

describe('wellKnownCard of a router nested in an express.Router()', () => {
  let server: Listening;
  const logger = recordingLogger();
  const agent = createA2ARouter({ agentCard: testCard, executor, logger });
  beforeAll(async () => {
    const app = express();
    const api = express.Router();
    api.use('/agent', agent);
    app.use('/api/v2', api);
    app.get('/.well-known/agent-card.json', agent.wellKnownCard);
    server = await listen(app);
  });
  afterAll(() => server.close());

  it('warns once, naming publicUrl, while it cannot know its mount path; then learns it from a request', async () => {
    const rootCard = `${server.baseUrl}/.well-known/agent-card.json`;
    expect(await interfaceUrls(rootCard)).toContain(server.baseUrl);
    await interfaceUrls(rootCard);
    expect(logger.codes.filter((code) => code === 'A2A_WIRING_CARD_URL_UNKNOWN')).toHaveLength(1);

    const agentUrl = `${server.baseUrl}/api/v2/agent`;
    expect((await rpc(agentUrl, 'SendMessage', userMessage('hi'))).status).toBe(200);
    const urls = await interfaceUrls(rootCard);
    expect(urls.every((url) => url === agentUrl)).toBe(true);
    expect(urls).toEqual(await interfaceUrls(`${agentUrl}/.well-known/agent-card.json`));
    expect(logger.codes.filter((code) => code === 'A2A_WIRING_CARD_URL_UNKNOWN')).toHaveLength(1);
  });
});

describe('the publicUrl option', () => {
  let server: Listening;
  const logger = recordingLogger();
  const publicUrl = 'https://agents.example.com/api/v2/agent';
  const agent = createA2ARouter({ agentCard: testCard, executor, logger, publicUrl: `${publicUrl}/` });
  beforeAll(async () => {
    const app = express();
    const api = express.Router();
    api.use('/agent', agent);
    app.use('/api/v2', api);
    app.get('/.well-known/agent-card.json', agent.wellKnownCard);
    server = await listen(app);
  });
  afterAll(() => server.close());

  it('is the interface URL of the root card before any request, and of the mounted card, without a warning', async () => {
    const root = await interfaceUrls(`${server.baseUrl}/.well-known/agent-card.json`);
    expect(root.length).toBeGreaterThan(0);
    expect(root.every((url) => url === publicUrl)).toBe(true);
    expect(await interfaceUrls(`${server.baseUrl}/api/v2/agent/.well-known/agent-card.json`)).toEqual(root);
    expect(logger.codes).not.toContain('A2A_WIRING_CARD_URL_UNKNOWN');
  });

  it('is checked as an options error when it is not an absolute http(s) URL', () => {
    expect(() => createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, publicUrl: '/agent' })).toThrow(/publicUrl/);
    expect(() => createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, publicUrl: 'https://a.example/agent?x=1' })).toThrow(
      /publicUrl/,
    );
  });
});

describe('a mount path with a trailing slash', () => {
  let server: Listening;
  const logger = recordingLogger();
  const agent = createA2ARouter({ agentCard: testCard, executor, logger });
  beforeAll(async () => {
    const app = express();
    app.use('/agent/', agent);
    app.get('/.well-known/agent-card.json', agent.wellKnownCard);
    server = await listen(app);
  });
  afterAll(() => server.close());

  it('gives the same interface URLs at the origin root and below the mount, before any request and without a warning', async () => {
    const root = await interfaceUrls(`${server.baseUrl}/.well-known/agent-card.json`);
    expect(root[0]).toBe(`${server.baseUrl}/agent`);
    expect(await interfaceUrls(`${server.baseUrl}/agent/.well-known/agent-card.json`)).toEqual(root);
    expect(logger.codes).not.toContain('A2A_WIRING_CARD_URL_UNKNOWN');
  });
});
