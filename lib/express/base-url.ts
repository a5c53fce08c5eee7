/** Where the router is reached from a request, and an agent card as served from there. */
import type { IncomingMessage } from 'node:http';
import { cardForBaseUrl, type AgentCardInput, type ServedBindings } from '../protocol/card.js';
import type { AgentCard } from '../protocol/schemas.js';
import { mountPathOf, originOf } from '../context/node-request.js';

/** Origin plus mount path, as this request reached the router (Express, Connect or plain Node). */
export const baseUrlOf = (req: IncomingMessage): string => originOf(req) + mountPathOf(req);

/** `card` with our interfaces at the URL this request reached (unless the card states them). */
export function cardAsServedTo(req: IncomingMessage, card: AgentCardInput, bindings?: ServedBindings): AgentCard {
  return cardForBaseUrl(card, baseUrlOf(req), bindings);
}
