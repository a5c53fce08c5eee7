/**
 * Interop: both official clients read the card meant for them from an agent whose card has every
 * security scheme type (v0.3 compatibility on). The @a2a-js/sdk 1.x client states A2A-Version 1.0
 * on its card request, gets exactly the v1.0 card and talks 1.0 over either binding; the v0.3
 * client (`a2a-sdk-v03`) states none, gets the merged card (its `type`-discriminated schemes) and
 * talks 0.3 over either binding.
 */
// Each SDK's CJS build requires jose v6 (ESM-only); the clients never call it (test-environment workaround).
jest.mock(require.resolve('jose', { paths: [require('node:path').dirname(require.resolve('@a2a-js/sdk/client'))] }), () => ({}));
jest.mock(require.resolve('jose', { paths: [require('node:path').dirname(require.resolve('a2a-sdk-v03/client'))] }), () => ({}));

import { randomUUID } from 'node:crypto';
import { ClientFactory, ClientFactoryOptions } from '@a2a-js/sdk/client';
import type { Message } from '@a2a-js/sdk';
import {
  AgentCardResolver,
  ClientFactory as V03ClientFactory,
  ClientFactoryOptions as V03ClientFactoryOptions,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from 'a2a-sdk-v03/client';
import type { Message as V03Message } from 'a2a-sdk-v03';
import type express from 'express';
import type { AgentExecutor } from '../../lib';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { clientSend } from '../helpers/official-client';
import { everySchemeCard } from '../helpers/every-scheme-card';

const executor: AgentExecutor = { execute: (ctx, events) => events.reply(`hello, ${ctx.userText}`) };

describe('official clients and the card by A2A-Version', () => {
  let server: TestServer;
  /** The A2A-Version each card request stated ('' for none). */
  const cardRequests: string[] = [];
  /** The A2A-Version each POST stated ('' for none). */
  const posts: string[] = [];
  const record: express.RequestHandler = (req, _res, next) => {
    if (req.method === 'GET' && req.path.endsWith('agent-card.json')) cardRequests.push(req.get('a2a-version') ?? '');
    if (req.method === 'POST') posts.push(req.get('a2a-version') ?? '');
    next();
  };
  beforeAll(async () => {
    server = await startAgent(executor, {
      agentCard: everySchemeCard,
      extendedAgentCard: { ...everySchemeCard, name: 'Extended' },
      callContext: () => ({ caller: { id: 'alice', authenticated: true } }),
      before: [record],
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    cardRequests.length = 0;
    posts.length = 0;
  });

  it.each(['JSONRPC', 'HTTP+JSON'])(
    '@a2a-js/sdk 1.x over %s: asks for the 1.0 card, reads its schemes and the extended card, sends in 1.0',
    async (transport) => {
      const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [transport] }));
      const client = await factory.createFromUrl(`${server.url}/`);
      expect(cardRequests).toEqual(['1.0']);
      // The extended card (the public one says there is one), over the 1.0 binding: the v1.0 shape too.
      const card = await client.getAgentCard();
      expect(card.name).toBe('Extended');
      expect(Object.keys(card.securitySchemes).sort()).toEqual(Object.keys(everySchemeCard.securitySchemes!).sort());
      expect(card.securitySchemes.bearer.scheme).toEqual({
        $case: 'httpAuthSecurityScheme',
        value: expect.objectContaining({ scheme: 'Bearer', bearerFormat: 'JWT' }),
      });
      const reply = (await client.sendMessage(clientSend('one'))) as Message;
      expect(reply.parts[0].content).toEqual({ $case: 'text', value: 'hello, one' });
      expect(posts.length).toBeGreaterThan(0);
      expect(new Set(posts)).toEqual(new Set(['1.0']));
    },
  );

  it.each([
    ['JSON-RPC', () => new JsonRpcTransportFactory()],
    ['HTTP+JSON', () => new RestTransportFactory()],
  ] as const)('the v0.3 client over %s: asks with no version, reads the merged card, sends in 0.3', async (_name, transport) => {
    const card = await AgentCardResolver.default.resolve(`${server.url}/`);
    expect(cardRequests).toEqual(['']);
    expect(card.securitySchemes!.bearer).toMatchObject({ type: 'http', scheme: 'Bearer' });
    expect(card.securitySchemes!.key).toMatchObject({ type: 'apiKey', in: 'header', name: 'x-api-key' });
    const client = await new V03ClientFactory({ ...V03ClientFactoryOptions.default, transports: [transport()] }).createFromAgentCard(card);
    const reply = (await client.sendMessage({
      message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'two' }] },
    })) as V03Message;
    expect(reply.parts[0]).toMatchObject({ kind: 'text', text: 'hello, two' });
    expect(posts).toEqual(['']);
  });
});
