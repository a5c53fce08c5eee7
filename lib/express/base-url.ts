/** Where the router is reached from a request, and an agent card as served from there. */
import type { Request } from 'express';
import { cardForBaseUrl, type AgentCardInput, type ServedBindings } from '../protocol/card.js';
import type { AgentCard } from '../protocol/schemas.js';

/** Origin plus mount path, as this request reached the router. */
export const baseUrlOf = (req: Request): string => `${req.protocol}://${req.get('host') ?? 'localhost'}${req.baseUrl}`;

/** `card` with our interfaces at the URL this request reached (unless the card states them). */
export function cardAsServedTo(req: Request, card: AgentCardInput, bindings?: ServedBindings): AgentCard {
  return cardForBaseUrl(card, baseUrlOf(req), bindings);
}
