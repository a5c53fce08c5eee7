/** Public agent card (§8.2, §8.3.1, §8.6): where it is served, the filled-in JSON-RPC interface, mount checks, caching. */
import express from 'express';
import { createA2ARouter, silentLogger, type AgentCard, type AgentExecutor, type Logger, type TaskEvents } from '../../lib';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { listen } from '../helpers/http';

const executor: AgentExecutor = { execute: (_ctx, events) => events.complete('ok') };

const json = async (response: Response): Promise<any> => response.json();

const mockLogger = (): Logger & { warn: jest.Mock } => ({ debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() });

describe('agent card', () => {
  let server: TestServer;
  afterEach(() => server?.close());

  it('is served at <mount>/.well-known/agent-card.json with the JSON-RPC 1.0 interface filled in first', async () => {
    server = await startAgent(executor);
    const response = await fetch(`${server.url}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const card = await json(response);
    expect(card.supportedInterfaces[0]).toEqual({ url: `${server.baseUrl}/agent`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    expect(card).toMatchObject({
      name: testCard.name,
      description: testCard.description,
      version: testCard.version,
      capabilities: testCard.capabilities,
      defaultInputModes: testCard.defaultInputModes,
      defaultOutputModes: testCard.defaultOutputModes,
      skills: testCard.skills,
    });
  });

  it('has no v0.3 card fields or 0.3 interfaces with compatibility off (see v03-card.test.ts for them)', async () => {
    server = await startAgent(executor, { compatibility: { v0_3: false } });
    const card = await json(await fetch(`${server.url}/.well-known/agent-card.json`));
    for (const legacy of ['url', 'preferredTransport', 'protocolVersion', 'additionalInterfaces']) expect(card).not.toHaveProperty(legacy);
    expect(card.supportedInterfaces.map((i: { protocolVersion: string }) => i.protocolVersion)).not.toContain('0.3');
  });

  it('is not served at the origin root by the router itself', async () => {
    server = await startAgent(executor);
    const response = await fetch(`${server.baseUrl}/.well-known/agent-card.json`);
    expect(response.status).toBe(404);
  });

  it('keeps a stated JSON-RPC 1.0 interface as is', async () => {
    const stated = [
      { url: 'https://agents.example.com/agent', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: 'https://agents.example.com/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
    ];
    server = await startAgent(executor, { agentCard: { ...testCard, supportedInterfaces: stated } });
    const card = await json(await fetch(`${server.url}/.well-known/agent-card.json`));
    // Kept as stated, first; with v0.3 compatibility on, each is also announced as 0.3 after them.
    expect(card.supportedInterfaces).toEqual([
      ...stated,
      { url: 'https://agents.example.com/agent', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: 'https://agents.example.com/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ]);
  });

  it('warns at app.use time, before any request, when the stated interface path does not match the mount path', () => {
    const logger = mockLogger();
    const router = createA2ARouter({
      agentCard: {
        ...testCard,
        supportedInterfaces: [{ url: 'https://agents.example.com/a2a/v1', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      },
      executor,
      logger,
    });
    expect(logger.warn).not.toHaveBeenCalled();
    const app = express();
    app.use('/agent', router);
    expect(logger.warn).toHaveBeenCalledTimes(1);
    const [fields, message] = logger.warn.mock.calls[0];
    expect(JSON.stringify(fields) + String(message)).toContain('https://agents.example.com/a2a/v1');
    expect(JSON.stringify(fields) + String(message)).toContain('/agent');
  });

  it('does not warn when the stated interface path matches the mount path', () => {
    const logger = mockLogger();
    const router = createA2ARouter({
      agentCard: {
        ...testCard,
        supportedInterfaces: [{ url: 'https://agents.example.com/agent/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      },
      executor,
      logger,
    });
    express().use('/agent', router);
    expect(logger.warn).not.toHaveBeenCalled();
  });

  it('does not warn when the card states no interface', async () => {
    const logger = mockLogger();
    const app = express();
    app.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger }));
    const listening = await listen(app);
    try {
      await fetch(`${listening.baseUrl}/agent/.well-known/agent-card.json`);
      expect(logger.warn).not.toHaveBeenCalled();
    } finally {
      await listening.close();
    }
  });

  it('sends Cache-Control max-age and an ETag, and answers If-None-Match with 304', async () => {
    server = await startAgent(executor, { agentCardMaxAgeSeconds: 120 });
    const cardUrl = `${server.url}/.well-known/agent-card.json`;
    const first = await fetch(cardUrl);
    expect(first.headers.get('cache-control')).toMatch(/max-age=120\b/);
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    await first.text();

    const again = await fetch(cardUrl);
    expect(again.headers.get('etag')).toBe(etag);
    await again.text();

    const notModified = await fetch(cardUrl, { headers: { 'If-None-Match': etag! } });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');

    const stale = await fetch(cardUrl, { headers: { 'If-None-Match': '"some-other-etag"' } });
    expect(stale.status).toBe(200);
    expect((await json(stale)).name).toBe(testCard.name);
  });

  it('uses the default max-age of 300 s', async () => {
    server = await startAgent(executor);
    const response = await fetch(`${server.url}/.well-known/agent-card.json`);
    expect(response.headers.get('cache-control')).toMatch(/max-age=300\b/);
  });

  // LIBRARY BUG (lib/express/agent-card-route.ts compares If-None-Match to the ETag as one exact
  // string): RFC 9110 §13.1.2 makes If-None-Match a list compared with the weak function, so a list
  // containing the current tag, a W/-prefixed tag or "*" must get 304 (A2A §8.6.1 says honour it).
  it('answers 304 to an If-None-Match list or weak tag that contains the current ETag', async () => {
    server = await startAgent(executor);
    const cardUrl = `${server.url}/.well-known/agent-card.json`;
    const etag = (await fetch(cardUrl)).headers.get('etag')!;
    const list = await fetch(cardUrl, { headers: { 'If-None-Match': `"older", ${etag}` } });
    expect(list.status).toBe(304);
    const weak = await fetch(cardUrl, { headers: { 'If-None-Match': `W/${etag}` } });
    expect(weak.status).toBe(304);
  });
});

describe('the card at the origin root', () => {
  it('router.wellKnownCard serves the card with the JSON-RPC URL of the mount path', async () => {
    const app = express();
    const agent = createA2ARouter({
      agentCard: testCard,
      executor: { execute: (_ctx: unknown, events: TaskEvents) => events.reply('hi') },
      logger: silentLogger,
    });
    const api = express();
    api.use('/agent', agent);
    app.use('/api', api);
    app.get('/.well-known/agent-card.json', agent.wellKnownCard);
    const server = await listen(app);
    try {
      const card = (await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json()) as AgentCard;
      expect(card.supportedInterfaces[0]).toEqual({ url: `${server.baseUrl}/api/agent`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    } finally {
      await server.close();
    }
  });
});
