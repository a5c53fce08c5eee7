/**
 * Every card the router serves (the public card, the one at the origin root, the extended card on
 * either binding) goes through one presenter: interfaces filled in from where the router is
 * mounted, the v0.3 discovery fields while compatibility is on, then the signatures (§8.4) when
 * `signCard` is set: signing comes last, since any later change would break them.
 */
import type { Request } from 'express';
import { cardWithoutDefaults } from '../protocol/card-canonical.js';
import { cardForBaseUrl, type AgentCardInput, type ServedBindings } from '../protocol/card.js';
import type { AgentCard } from '../protocol/schemas.js';
import { withV03Discovery } from '../protocol/v0_3/card.js';
import { toV03RestAgentCard } from '../protocol/v0_3/rest.js';
import type { CardSigner } from './card-signer.js';
import { baseUrlOf } from './base-url.js';

export interface CardPresenterOptions {
  readonly bindings?: ServedBindings;
  /** The bindings also served in v0.3 (announced as 0.3 interfaces); none when compatibility is off. */
  readonly v03Bindings: readonly string[];
  readonly signer?: CardSigner;
}

export interface CardPresenter {
  /** `card` as served with the router's endpoints at `baseUrl`; a promise only when signing. */
  at(card: AgentCardInput, baseUrl: string): AgentCard | Promise<AgentCard>;
  /** `card` as served to `req` (its origin and the router's mount path). */
  forRequest(req: Request, card: AgentCardInput): AgentCard | Promise<AgentCard>;
  /**
   * `card` as v0.3 HTTP+JSON serves it to `req` (`GET /v1/card`): the v0.3 proto's ProtoJSON of
   * the same presented card; when signing, with one signature over that form (a signature over
   * the JSON card would not verify over it).
   */
  v03RestCard(req: Request, card: AgentCardInput): object | Promise<object>;
}

export function cardPresenter(options: CardPresenterOptions): CardPresenter {
  const { bindings, v03Bindings, signer } = options;
  const unsigned = (card: AgentCardInput, baseUrl: string): AgentCard => {
    const filled = cardForBaseUrl(card, baseUrl, bindings);
    return v03Bindings.length > 0 ? withV03Discovery(filled, v03Bindings) : filled;
  };
  const at = signer ? (card: AgentCardInput, baseUrl: string) => signer.sign(unsigned(card, baseUrl)) : unsigned;
  const v03RestCard = (req: Request, card: AgentCardInput): object | Promise<object> => {
    const proto = toV03RestAgentCard(unsigned(card, baseUrlOf(req)));
    if (!signer) return proto;
    const served = cardWithoutDefaults(proto as unknown as AgentCard);
    return signer.signature(served).then((signature) => ({ ...served, signatures: [signature] }));
  };
  return { at, forRequest: (req, card) => at(card, baseUrlOf(req)), v03RestCard };
}
