/** Where the router is reached from a request, and an agent card as served from there. */
import type { Request } from 'express';
import { cardForBaseUrl, type AgentCardInput } from '../protocol/card.js';
import type { AgentCard } from '../protocol/schemas.js';

/** Origin plus mount path, as this request reached the router. */
export const baseUrlOf = (req: Request): string => `${req.protocol}://${req.get('host') ?? 'localhost'}${req.baseUrl}`;

/** `card` with our JSON-RPC interface at the URL this request reached (unless the card states one). */
export function cardAsServedTo(req: Request, card: AgentCardInput): AgentCard {
  return cardForBaseUrl(card, baseUrlOf(req));
}
