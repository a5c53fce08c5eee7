/**
 * The card by A2A-Version while v0.3 compatibility is on: a request that states 1.0 (header or
 * query parameter) gets exactly the v1.0 card, checked key by key against a2a.proto's ProtoJSON
 * (a security scheme is its oneof alone: the A2A TCK's `assert 5 == 1`); a request stating no
 * version (or 0.3) gets the merged card, valid against the v0.3 JSON schema. The public card, the
 * one at the origin root and the extended card (both bindings) alike; `Vary: A2A-Version` and an
 * ETag per shape; with compatibility off, one card and no Vary.
 */
import express from 'express';
import { AgentCardSchema, createA2ARouter, silentLogger, type AgentExecutor } from '../../lib';
import { everySchemeCard } from '../helpers/every-scheme-card';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { listen, rpc, V1 } from '../helpers/http';
import { expectProtoJson } from '../helpers/proto-json';
import { expectV03 } from '../helpers/v03-schema';

const executor: AgentExecutor = { execute: (_ctx, events) => events.complete('ok') };

type Card = any;

const V03_FIELDS = ['url', 'preferredTransport', 'additionalInterfaces', 'protocolVersion', 'supportsAuthenticatedExtendedCard', 'security'];

/** Exactly v1.0: ProtoJSON of AgentCard, no v0.3 field left, every scheme its oneof alone. */
function expectV1Card(card: Card): void {
  expectProtoJson('AgentCard', card);
  for (const field of V03_FIELDS) expect(card).not.toHaveProperty(field);
  for (const [name, scheme] of Object.entries(card.securitySchemes as Record<string, object>))
    expect({ name, keys: Object.keys(scheme).length }).toEqual({ name, keys: 1 });
  for (const skill of card.skills as object[]) expect(skill).not.toHaveProperty('security');
}

describe('the card by A2A-Version (v0.3 compatibility on)', () => {
  let server: TestServer;
  const cardUrl = () => `${server.url}/.well-known/agent-card.json`;
  beforeAll(async () => {
    server = await startAgent(executor, {
      agentCard: everySchemeCard,
      extendedAgentCard: { ...everySchemeCard, name: 'Extended' },
      callContext: () => ({ caller: { id: 'alice', authenticated: true } }),
    });
  });
  afterAll(() => server.close());

  it.each([
    ['the A2A-Version header', '', V1],
    ['the A2A-Version query parameter', '?A2A-Version=1.0', {}],
    ['a patch version', '', { 'A2A-Version': '1.0.2' }],
  ])('a request stating 1.0 by %s gets exactly the v1.0 card', async (_how, query, headers) => {
    const response = await fetch(`${cardUrl()}${query}`, { headers });
    expect(response.status).toBe(200);
    const card: Card = await response.json();
    expectV1Card(card);
    const endpoint = `${server.baseUrl}/agent`;
    // The 0.3 interfaces stay listed (valid v1.0 AgentInterfaces), after the 1.0 ones.
    expect(card.supportedInterfaces).toEqual([
      { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: endpoint, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: endpoint, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ]);
    // What a lenient v1.0 parser read from the merged card, nothing more and nothing less.
    const merged: Card = await (await fetch(cardUrl())).json();
    expect(card).toEqual(AgentCardSchema.parse(merged));
  });

  it.each([
    ['no A2A-Version', {}],
    ['an empty A2A-Version', { 'A2A-Version': '' }],
    ['A2A-Version: 0.3', { 'A2A-Version': '0.3' }],
  ])('a request with %s gets the merged card, valid against the v0.3 JSON schema', async (_how, headers) => {
    const card: Card = await (await fetch(cardUrl(), { headers })).json();
    expectV03('AgentCard', card);
    expect(card).toMatchObject({ url: `${server.baseUrl}/agent`, protocolVersion: '0.3.0', supportsAuthenticatedExtendedCard: true });
    expect(card.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'Bearer' });
  });

  it('varies by A2A-Version for caches: Vary on both, an ETag per shape, each revalidated on its own', async () => {
    const v1 = await fetch(cardUrl(), { headers: V1 });
    const merged = await fetch(cardUrl());
    for (const response of [v1, merged]) expect(response.headers.get('vary')).toMatch(/\bA2A-Version\b/i);
    const v1Tag = v1.headers.get('etag')!;
    expect(v1Tag).toBeTruthy();
    expect(merged.headers.get('etag')).not.toBe(v1Tag);
    const revalidated = await fetch(cardUrl(), { headers: { ...V1, 'If-None-Match': v1Tag } });
    expect(revalidated.status).toBe(304);
    expect(revalidated.headers.get('vary')).toMatch(/\bA2A-Version\b/i);
    // The other shape does not match that tag.
    expect((await fetch(cardUrl(), { headers: { 'If-None-Match': v1Tag } })).status).toBe(200);
  });

  it('the extended card: exactly v1.0 over JSON-RPC 1.0 and HTTP+JSON 1.0, merged over v0.3', async () => {
    const overJsonRpc: Card = (await rpc(server.url, 'GetExtendedAgentCard', {})).body.result;
    const overRest: Card = await (await fetch(`${server.url}/extendedAgentCard`, { headers: V1 })).json();
    for (const card of [overJsonRpc, overRest]) {
      expect(card.name).toBe('Extended');
      expectV1Card(card);
    }
    const overV03: Card = (await rpc(server.url, 'agent/getAuthenticatedExtendedCard', undefined, { headers: { 'A2A-Version': '' } })).body.result;
    expect(overV03.name).toBe('Extended');
    expectV03('AgentCard', overV03);
  });
});

describe('the card at the origin root (wellKnownCard), by A2A-Version', () => {
  it('exactly v1.0 for 1.0, merged without a version, with Vary', async () => {
    const agent = createA2ARouter({ agentCard: everySchemeCard, executor, logger: silentLogger });
    const app = express();
    app.use('/api/agent', agent);
    app.get('/.well-known/agent-card.json', agent.wellKnownCard);
    const server = await listen(app);
    try {
      const v1 = await fetch(`${server.baseUrl}/.well-known/agent-card.json`, { headers: V1 });
      expect(v1.headers.get('vary')).toMatch(/\bA2A-Version\b/i);
      const card: Card = await v1.json();
      expectV1Card(card);
      expect(card.supportedInterfaces[0].url).toBe(`${server.baseUrl}/api/agent`);
      const merged: Card = await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json();
      expect(merged.url).toBe(`${server.baseUrl}/api/agent`);
      expectV03('AgentCard', merged);
    } finally {
      await server.close();
    }
  });
});

describe('the card with v0.3 compatibility off', () => {
  it('is the v1.0 card whatever the request states, without Vary', async () => {
    const server = await startAgent(executor, { agentCard: everySchemeCard, compatibility: { v0_3: false } });
    try {
      const url = `${server.url}/.well-known/agent-card.json`;
      const [v1, none] = await Promise.all([fetch(url, { headers: V1 }), fetch(url)]);
      expect(v1.headers.get('vary')).toBeNull();
      expect(none.headers.get('etag')).toBe(v1.headers.get('etag'));
      const card: Card = await none.json();
      expectV1Card(card);
      expect(card.supportedInterfaces.map((i: { protocolVersion: string }) => i.protocolVersion)).toEqual(['1.0', '1.0']);
    } finally {
      await server.close();
    }
  });
});
