/**
 * The card while v0.3 compatibility is on: one merged card that both generations of client read
 * (v1.0 fields and interfaces first, the 0.3 JSON-RPC and HTTP+JSON interfaces after them, and the
 * v0.3 discovery fields `url`, `preferredTransport`, `additionalInterfaces`, `protocolVersion`),
 * valid against the v0.3 JSON schema and still a valid v1.0 card; the extended card is presented
 * alike (over v0.3 HTTP+JSON in the v0.3 proto's ProtoJSON: see __tests__/rest/v03.test.ts).
 */
import express from 'express';
import { AgentCardSchema, createA2ARouter, silentLogger, type AgentCardInput, type AgentExecutor } from '../../lib';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { listen, rpc } from '../helpers/http';
import { expectV03 } from '../helpers/v03-schema';

const executor: AgentExecutor = { execute: (_ctx, events) => events.complete('ok') };

const getCard = async (url: string): Promise<any> => (await fetch(url)).json();

const securedCard: AgentCardInput = {
  ...testCard,
  capabilities: { ...testCard.capabilities, extendedAgentCard: true },
  securitySchemes: {
    bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
    key: { apiKeySecurityScheme: { location: 'header', name: 'x-api-key', description: 'An API key' } },
    oauth: {
      oauth2SecurityScheme: {
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://id.example.com/auth',
            tokenUrl: 'https://id.example.com/token',
            scopes: { read: 'Read' },
            pkceRequired: true,
          },
        },
      },
    },
    oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: 'https://id.example.com/.well-known/openid-configuration' } },
    mtls: { mtlsSecurityScheme: {} },
  },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { oauth: { list: ['read'] } } }],
  skills: [{ ...testCard.skills[0], securityRequirements: [{ schemes: { key: { list: [] } } }] }],
};

describe('the card with v0.3 compatibility on (the default)', () => {
  let server: TestServer;
  afterEach(() => server?.close());

  it('carries the v0.3 discovery fields beside the v1.0 ones: JSON-RPC preferred, HTTP+JSON as an additional interface', async () => {
    server = await startAgent(executor);
    const card = await getCard(`${server.url}/.well-known/agent-card.json`);
    const endpoint = `${server.baseUrl}/agent`;
    expect(card).toMatchObject({
      url: endpoint,
      preferredTransport: 'JSONRPC',
      protocolVersion: '0.3.0',
      additionalInterfaces: [
        { url: endpoint, transport: 'JSONRPC' },
        { url: endpoint, transport: 'HTTP+JSON' },
      ],
    });
    // The 1.0 interfaces first (preferred by v1.0 clients), the 0.3 ones after them.
    expect(card.supportedInterfaces).toEqual([
      { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: endpoint, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: endpoint, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ]);
    expectV03('AgentCard', card);
    expect(AgentCardSchema.safeParse(card).success).toBe(true);
  });

  it.each([
    ['JSON-RPC only', { jsonRpc: true, rest: false }, ['JSONRPC']],
    ['HTTP+JSON only', { jsonRpc: false, rest: true }, ['HTTP+JSON']],
  ])('announces the 0.3 interface of each binding served (%s)', async (_name, bindings, transports) => {
    server = await startAgent(executor, { bindings });
    const card = await getCard(`${server.url}/.well-known/agent-card.json`);
    const endpoint = `${server.baseUrl}/agent`;
    expect(card.preferredTransport).toBe(transports[0]);
    expect(card.additionalInterfaces).toEqual(transports.map((transport) => ({ url: endpoint, transport })));
    expect(
      card.supportedInterfaces
        .filter((i: { protocolVersion: string }) => i.protocolVersion === '0.3')
        .map((i: { protocolBinding: string }) => i.protocolBinding),
    ).toEqual(transports);
    expectV03('AgentCard', card);
  });

  it('translates the security schemes and requirements into their v0.3 shapes beside the v1.0 ones', async () => {
    server = await startAgent(executor, { agentCard: securedCard });
    const card = await getCard(`${server.url}/.well-known/agent-card.json`);
    expectV03('AgentCard', card);
    expect(card.securitySchemes.bearer).toEqual({
      type: 'http',
      scheme: 'Bearer',
      bearerFormat: 'JWT',
      httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' },
    });
    expect(card.securitySchemes.key).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key' });
    expect(card.securitySchemes.oauth).toMatchObject({
      type: 'oauth2',
      flows: {
        authorizationCode: { authorizationUrl: 'https://id.example.com/auth', tokenUrl: 'https://id.example.com/token', scopes: { read: 'Read' } },
      },
    });
    expect(card.securitySchemes.oauth.flows.authorizationCode).not.toHaveProperty('pkceRequired');
    expect(card.securitySchemes.oidc).toMatchObject({ type: 'openIdConnect' });
    expect(card.securitySchemes.mtls).toMatchObject({ type: 'mutualTLS' });
    expect(card.security).toEqual([{ bearer: [] }, { oauth: ['read'] }]);
    expect(card.skills[0].security).toEqual([{ key: [] }]);
    expect(card.supportsAuthenticatedExtendedCard).toBe(true);
    // The v1.0 reading is unchanged: zod (like any ProtoJSON parser) ignores the v0.3 fields.
    const v1 = AgentCardSchema.parse(card);
    expect(v1.securitySchemes).toEqual(securedCard.securitySchemes);
    expect(v1.securityRequirements).toEqual(securedCard.securityRequirements);
  });

  it('keeps 0.3 interfaces the card states, and announces none with compatibility off', async () => {
    const stated = [
      { url: 'https://agents.example.com/agent', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: 'https://legacy.example.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ];
    server = await startAgent(executor, { agentCard: { ...testCard, supportedInterfaces: stated } });
    const card = await getCard(`${server.url}/.well-known/agent-card.json`);
    expect(card.url).toBe('https://legacy.example.com/a2a');
    expect(card.supportedInterfaces.filter((i: { protocolVersion: string }) => i.protocolVersion === '0.3')).toEqual([stated[1]]);
    await server.close();
    server = await startAgent(executor, { compatibility: { v0_3: false } });
    const off = await getCard(`${server.url}/.well-known/agent-card.json`);
    expect(off).not.toHaveProperty('url');
    expect(off).not.toHaveProperty('protocolVersion');
  });

  it('the extended card is presented as the public one: merged over v0.3, exactly v1.0 over v1.0 (see card-shapes.test.ts)', async () => {
    server = await startAgent(executor, {
      agentCard: securedCard,
      extendedAgentCard: { ...securedCard, name: 'Extended' },
      callContext: () => ({ caller: { id: 'alice', authenticated: true } }),
    });
    const v1 = (await rpc(server.url, 'GetExtendedAgentCard', {})).body.result;
    const v03 = (await rpc(server.url, 'agent/getAuthenticatedExtendedCard', undefined, { headers: { 'A2A-Version': '' } })).body.result;
    expect(v03).toMatchObject({ name: 'Extended', url: `${server.baseUrl}/agent`, protocolVersion: '0.3.0' });
    expectV03('AgentCard', v03);
    // The same card without the v0.3 fields: what a v1.0 parser keeps of the merged one.
    expect(v1.name).toBe('Extended');
    expect(AgentCardSchema.parse(v1)).toEqual(AgentCardSchema.parse(v03));
    for (const field of ['url', 'preferredTransport', 'additionalInterfaces', 'protocolVersion', 'supportsAuthenticatedExtendedCard', 'security'])
      expect(v1).not.toHaveProperty(field);
  });
});

describe('the card at the origin root', () => {
  it('carries the v0.3 fields too, with the mount path', async () => {
    const agent = createA2ARouter({ agentCard: testCard, executor, logger: silentLogger });
    const app = express();
    app.use('/api/agent', agent);
    app.get('/.well-known/agent-card.json', agent.wellKnownCard);
    const server = await listen(app);
    try {
      const card = await getCard(`${server.baseUrl}/.well-known/agent-card.json`);
      expect(card.url).toBe(`${server.baseUrl}/api/agent`);
      expectV03('AgentCard', card);
    } finally {
      await server.close();
    }
  });
});
