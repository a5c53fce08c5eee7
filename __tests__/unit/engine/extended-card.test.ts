/** GetExtendedAgentCard without HTTP: who may have it, from a value or a function, with the public card's interfaces by default. */
import { extendedAgentCard } from '../../../lib/engine/request-handler';
import type { AgentCard } from '../../../lib/protocol/schemas';

const publicCard = {
  name: 'Agent',
  description: 'public',
  version: '1',
  capabilities: { extendedAgentCard: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [],
  supportedInterfaces: [{ url: 'http://127.0.0.1/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
} as unknown as AgentCard;
const alice = { id: 'alice', authenticated: true };
const extended = { ...publicCard, description: 'extended', supportedInterfaces: undefined };

describe('extendedAgentCard', () => {
  it('answers an authenticated caller with the extended card, its interfaces the public ones unless it states its own', async () => {
    const card = await extendedAgentCard(publicCard, extended, alice);
    expect(card.description).toBe('extended');
    expect(card.supportedInterfaces).toBe(publicCard.supportedInterfaces);
    const own = [{ url: 'http://127.0.0.1/other', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }] as AgentCard['supportedInterfaces'];
    const seen: unknown[] = [];
    const fromFunction = await extendedAgentCard(publicCard, (caller) => (seen.push(caller), { ...extended, supportedInterfaces: own }), alice);
    expect(fromFunction.supportedInterfaces).toBe(own);
    expect(seen).toEqual([alice]);
  });

  it.each([
    ['the card does not declare one', { ...publicCard, capabilities: {} } as AgentCard, extended, alice, 'UnsupportedOperation'],
    ['the caller is anonymous', publicCard, extended, { id: 'anonymous', authenticated: false }, 'Unauthenticated'],
    ['none is configured', publicCard, undefined, alice, 'ExtendedAgentCardNotConfigured'],
  ])('refuses when %s', async (_when, card, provider, caller, kind) => {
    await expect(extendedAgentCard(card, provider, caller)).rejects.toMatchObject({ kind });
  });
});
