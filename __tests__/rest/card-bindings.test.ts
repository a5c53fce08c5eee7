/**
 * What the card advertises (§8.3, §5.2: every binding served is declared) and the `bindings` option:
 * both interfaces at URLs derived from the mount path; one binding off answers 404 and leaves the card.
 */
import express from 'express';
import { A2AOptionsError, createA2ARouter, silentLogger, type A2ARouterOptions, type AgentCard, type AgentExecutor } from '../../lib';
import { cardForBaseUrl } from '../../lib/protocol/card';
import { startAgent, testCard } from '../helpers/fixtures';
import { listen, rpc, userMessage } from '../helpers/http';
import { rest, sendBody } from './helpers';

const executor: AgentExecutor = { execute: (_ctx, events) => events.reply('hi') };

const getCard = async (url: string) => (await (await fetch(url)).json()) as AgentCard;
/** The v1.0 interfaces of a card (v0.3 compatibility adds its own, tested with it). */
const v1 = (card: AgentCard) => card.supportedInterfaces.filter((i) => i.protocolVersion === '1.0');

describe('the interfaces in the card', () => {
  it('JSON-RPC first, then HTTP+JSON, both at the mount path (router card and origin-root card)', async () => {
    const app = express();
    const agent = createA2ARouter({ agentCard: testCard, executor, logger: silentLogger });
    const api = express();
    api.use('/agent', agent);
    app.use('/api', api);
    app.get('/.well-known/agent-card.json', agent.wellKnownCard);
    const server = await listen(app);
    try {
      const expected = [
        { url: `${server.baseUrl}/api/agent`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: `${server.baseUrl}/api/agent`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      ];
      expect(v1(await getCard(`${server.baseUrl}/api/agent/.well-known/agent-card.json`))).toEqual(expected);
      expect(v1(await getCard(`${server.baseUrl}/.well-known/agent-card.json`))).toEqual(expected);
      // JSON-RPC first: the first interface of the card is the preferred one (§8.3.1).
      expect((await getCard(`${server.baseUrl}/.well-known/agent-card.json`)).supportedInterfaces[0]).toEqual(expected[0]);
      // The advertised HTTP+JSON URL is where the routes are.
      expect((await rest(expected[1].url, 'POST', '/message:send', { body: sendBody('x') })).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('a stated JSON-RPC interface: HTTP+JSON goes right after it, at its URL and with its tenant', () => {
    const stated = [
      { url: 'https://agents.example.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'acme' },
      { url: 'https://agents.example.com/grpc', protocolBinding: 'GRPC', protocolVersion: '1.0' },
    ];
    const card = cardForBaseUrl({ ...testCard, supportedInterfaces: stated }, 'http://ignored');
    expect(card.supportedInterfaces).toEqual([
      stated[0],
      { url: 'https://agents.example.com/a2a', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: 'acme' },
      stated[1],
    ]);
  });

  it('a stated HTTP+JSON interface is kept as stated, never doubled', () => {
    const stated = [{ url: 'https://agents.example.com/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }];
    const card = cardForBaseUrl({ ...testCard, supportedInterfaces: stated }, 'http://h/agent');
    expect(card.supportedInterfaces).toEqual([{ url: 'http://h/agent', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }, stated[0]]);
  });
});

describe('the bindings option', () => {
  it('rest: false: the card lists JSON-RPC only, the HTTP+JSON routes answer 404', async () => {
    const server = await startAgent(executor, { bindings: { rest: false } });
    try {
      const card = await getCard(`${server.url}/.well-known/agent-card.json`);
      expect(v1(card)).toEqual([{ url: server.url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]);
      expect(card.supportedInterfaces.some((i) => i.protocolBinding === 'HTTP+JSON')).toBe(false);
      for (const [method, path] of [
        ['GET', '/tasks'],
        ['POST', '/message:send'],
        ['GET', '/acme/tasks/t-1'],
      ]) {
        const reply = await rest(server.url, method, path, { body: method === 'POST' ? sendBody('x') : undefined });
        expect([path, reply.status]).toEqual([path, 404]);
        expect(reply.body.error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
        expect(reply.body.error.message).not.toContain('HTTP+JSON');
      }
      expect((await rpc(server.url, 'SendMessage', userMessage('x'))).body.result.message).toBeDefined();
    } finally {
      await server.close();
    }
  });

  it('jsonRpc: false: the card lists HTTP+JSON only, POST <mount> answers 404', async () => {
    const server = await startAgent(executor, { bindings: { jsonRpc: false } });
    try {
      const card = await getCard(`${server.url}/.well-known/agent-card.json`);
      expect(v1(card)).toEqual([{ url: server.url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }]);
      expect(card.supportedInterfaces.some((i) => i.protocolBinding === 'JSONRPC')).toBe(false);
      const refused = await rpc(server.url, 'SendMessage', userMessage('x'));
      expect(refused.status).toBe(404);
      expect(refused.body.error.message).not.toContain('JSON-RPC');
      expect((await rest(server.url, 'POST', '/message:send', { body: sendBody('x') })).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it('the extended card lists what the router serves, over either binding', async () => {
    const agentCard = { ...testCard, capabilities: { ...testCard.capabilities, extendedAgentCard: true } };
    const options = { agentCard, extendedAgentCard: agentCard, callContext: () => ({ caller: { id: 'a', authenticated: true } }) };
    const rpcOnly = await startAgent(executor, { ...options, bindings: { rest: false } });
    const restOnly = await startAgent(executor, { ...options, bindings: { jsonRpc: false } });
    try {
      const viaRpc = (await rpc(rpcOnly.url, 'GetExtendedAgentCard')).body.result as AgentCard;
      expect(v1(viaRpc).map((i) => i.protocolBinding)).toEqual(['JSONRPC']);
      const viaRest = (await rest(restOnly.url, 'GET', '/extendedAgentCard')).body as AgentCard;
      expect(v1(viaRest).map((i) => i.protocolBinding)).toEqual(['HTTP+JSON']);
    } finally {
      await Promise.all([rpcOnly.close(), restOnly.close()]);
    }
  });

  it("with unmatched: 'next', a binding turned off passes its paths on", async () => {
    const app = express();
    app.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, bindings: { rest: false }, unmatched: 'next' }));
    app.get('/agent/tasks', (_req, res) => void res.json({ mine: true }));
    const server = await listen(app);
    try {
      expect(await (await fetch(`${server.baseUrl}/agent/tasks`)).json()).toEqual({ mine: true });
    } finally {
      await server.close();
    }
  });

  const construct = (bindings: unknown) => () =>
    createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, bindings } as A2ARouterOptions);

  it('both off, a typo or a wrong type: an options error at construction', () => {
    expect(construct({ jsonRpc: false, rest: false })).toThrow(A2AOptionsError);
    expect(construct({ jsonRpc: false, rest: false })).toThrow('turns off both bindings');
    expect(construct({ jsonrpc: false })).toThrow(/"bindings.jsonrpc".*did you mean "bindings.jsonRpc"/);
    expect(construct({ json: false })).toThrow('"bindings.json" is unknown (known: jsonRpc, rest)');
    expect(construct({ rest: 'no' })).toThrow('bindings.rest');
    expect(construct({})).not.toThrow();
  });
});
