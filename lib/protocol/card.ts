/** Agent cards as users write them: `supportedInterfaces` may be left for the router to fill in. */
import type { AgentCard } from './schemas.js';
import { SERVED_VERSION } from './version.js';

export type AgentCardInput = Omit<AgentCard, 'supportedInterfaces'> & { supportedInterfaces?: AgentCard['supportedInterfaces'] };

/** The JSON-RPC v1.0 interface a card states, if any. */
export function statedJsonRpcInterface(card: AgentCardInput) {
  return card.supportedInterfaces?.find((i) => i.protocolBinding === 'JSONRPC' && i.protocolVersion === SERVED_VERSION);
}

/** The card with our JSON-RPC interface (at `baseUrl`) first, unless the card states one. */
export function cardForBaseUrl(card: AgentCardInput, baseUrl: string): AgentCard {
  const stated = card.supportedInterfaces ?? [];
  if (statedJsonRpcInterface(card)) return { ...card, supportedInterfaces: stated };
  return { ...card, supportedInterfaces: [{ url: baseUrl, protocolBinding: 'JSONRPC', protocolVersion: SERVED_VERSION }, ...stated] };
}
