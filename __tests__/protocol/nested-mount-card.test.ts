/**
 * The card at the origin root (wellKnownCard): `publicUrl` states the URL outright; a trailing `/` in
 * the mount path gives the same URL in both cards (every mount: root-card-mounts.test.ts).
 */
import express from 'express';
import { createA2ARouter, silentLogger, type AgentExecutor, type Logger } from '../../lib';
import { testCard } from '../helpers/fixtures';
import { listen, V1, type Listening } from '../helpers/http';
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
