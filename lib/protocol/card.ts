/** Agent cards as users write them: `supportedInterfaces` may be left for the router to fill in. */
import type { AgentCard, AgentInterface } from './schemas.js';
import { SERVED_VERSION } from './version.js';

export type AgentCardInput = Omit<AgentCard, 'supportedInterfaces'> & { supportedInterfaces?: AgentCard['supportedInterfaces'] };

/** The bindings a router serves (the `bindings` option; both by default). */
export interface ServedBindings {
  readonly jsonRpc: boolean;
  readonly rest: boolean;
}

const BOTH_BINDINGS: ServedBindings = Object.freeze({ jsonRpc: true, rest: true });

/** The JSON-RPC v1.0 interface a card states, if any. */
export function statedJsonRpcInterface(card: AgentCardInput) {
  return card.supportedInterfaces?.find((i) => i.protocolBinding === 'JSONRPC' && i.protocolVersion === SERVED_VERSION);
}

/** The HTTP+JSON v1.0 interface a card states, if any. */
export function statedRestInterface(card: AgentCardInput) {
  return card.supportedInterfaces?.find((i) => i.protocolBinding === 'HTTP+JSON' && i.protocolVersion === SERVED_VERSION);
}

/** The card with an interface per binding served unless it states one; HTTP+JSON beside a stated JSON-RPC one, else at `baseUrl`. */
export function cardForBaseUrl(card: AgentCardInput, baseUrl: string, bindings: ServedBindings = BOTH_BINDINGS): AgentCard {
  const interfaces: AgentInterface[] = [...(card.supportedInterfaces ?? [])];
  let jsonRpc = statedJsonRpcInterface(card);
  if (bindings.jsonRpc && !jsonRpc) {
    jsonRpc = { url: baseUrl, protocolBinding: 'JSONRPC', protocolVersion: SERVED_VERSION };
    interfaces.unshift(jsonRpc);
  }
  if (bindings.rest && !statedRestInterface(card)) {
    const at = jsonRpc ? interfaces.indexOf(jsonRpc) + 1 : 0;
    // A JSON-RPC interface this router does not serve may be elsewhere: then ours is at baseUrl.
    const sibling = bindings.jsonRpc ? jsonRpc : undefined;
    const tenant = sibling?.tenant ? { tenant: sibling.tenant } : {};
    interfaces.splice(at, 0, { url: sibling?.url ?? baseUrl, protocolBinding: 'HTTP+JSON', protocolVersion: SERVED_VERSION, ...tenant });
  }
  return { ...card, supportedInterfaces: interfaces };
}
