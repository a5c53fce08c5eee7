/**
 * Every card the router serves (the public card, the one at the origin root, the extended card on
 * either binding) goes through one presenter: interfaces filled in from where the router is
 * mounted, then the shape the request's A2A-Version asks for, then the signatures (§8.4) when
 * `signCard` is set: signing comes last, since any later change would break them.
 */
import type { IncomingMessage } from 'node:http';
import { cardWithoutDefaults } from '../protocol/card-canonical.js';
import { cardForBaseUrl, type AgentCardInput, type ServedBindings } from '../protocol/card.js';
import type { AgentCard } from '../protocol/schemas.js';
import { withV03Discovery, withV03Interfaces } from '../protocol/v0_3/card.js';
import { toV03RestAgentCard } from '../protocol/v0_3/rest.js';
import type { CardSigner } from './card-signer.js';
import { baseUrlOf } from './base-url.js';
import { requestedVersion } from '../context/request-state.js';
import { isLegacyVersion } from '../protocol/version.js';

/**
 * Which card a request gets while v0.3 compatibility is on. `v1.0`: exactly the v1.0 card (0.3
 * interfaces listed among the others), for a request that states A2A-Version 1.0 (header or query
 * parameter) or any version but 0.3: a strict ProtoJSON parser takes it (a security scheme is its
 * oneof alone). `merged`: the v0.3 discovery fields beside the v1.0 ones, for a request that states
 * no version or 0.3 (v0.3 clients never send one; §3.6.2 reads none as 0.3).
 */
export type CardShape = 'v1.0' | 'merged';

/** The shape `req` asks for (see CardShape). */
export const cardShapeOf = (req: IncomingMessage): CardShape => (isLegacyVersion(requestedVersion(req)) ? 'merged' : 'v1.0');

interface CardPresenterOptions {
  readonly bindings?: ServedBindings;
  /** The bindings also served in v0.3 (announced as 0.3 interfaces); none when compatibility is off. */
  readonly v03Bindings: readonly string[];
  readonly signer?: CardSigner;
  /** Where the router's endpoints are, as seen by a request (default: its origin and mount path). */
  readonly baseUrlFor?: (req: IncomingMessage) => string;
}

/** `card` as served with the router's endpoints at `baseUrl`, in `shape`; a promise only when signing. */
export type PresentCardAt = ((card: AgentCardInput, baseUrl: string, shape?: CardShape) => AgentCard | Promise<AgentCard>) & {
  /** Whether the shapes differ (v0.3 compatibility on): a response then varies by A2A-Version. */
  readonly variesByVersion?: boolean;
};

interface CardPresenter {
  /** `card` as served with the router's endpoints at `baseUrl` in `shape` (default `merged`). */
  readonly at: PresentCardAt;
  /** `card` as served to `req` (its origin, the router's mount path, the shape it asks for). */
  forRequest(req: IncomingMessage, card: AgentCardInput): AgentCard | Promise<AgentCard>;
  /**
   * `card` as v0.3 HTTP+JSON serves it to `req` (`GET /v1/card`): the v0.3 proto's ProtoJSON of
   * the same presented card; when signing, with one signature over that form (a signature over
   * the JSON card would not verify over it).
   */
  v03RestCard(req: IncomingMessage, card: AgentCardInput): object | Promise<object>;
}

export function cardPresenter(options: CardPresenterOptions): CardPresenter {
  const { bindings, v03Bindings, signer, baseUrlFor = baseUrlOf } = options;
  const compatible = v03Bindings.length > 0;
  const unsigned = (card: AgentCardInput, baseUrl: string, shape: CardShape): AgentCard => {
    const filled = cardForBaseUrl(card, baseUrl, bindings);
    if (!compatible) return filled;
    return shape === 'v1.0' ? withV03Interfaces(filled, v03Bindings) : withV03Discovery(filled, v03Bindings);
  };
  const present = signer
    ? (card: AgentCardInput, baseUrl: string, shape: CardShape = 'merged') => signer.sign(unsigned(card, baseUrl, shape))
    : (card: AgentCardInput, baseUrl: string, shape: CardShape = 'merged') => unsigned(card, baseUrl, shape);
  const at: PresentCardAt = Object.assign(present, { variesByVersion: compatible });
  const v03RestCard = (req: IncomingMessage, card: AgentCardInput): object | Promise<object> => {
    const proto = toV03RestAgentCard(unsigned(card, baseUrlFor(req), 'merged'));
    if (!signer) return proto;
    const served = cardWithoutDefaults(proto as unknown as AgentCard);
    return signer.signature(served).then((signature) => ({ ...served, signatures: [signature] }));
  };
  return { at, forRequest: (req, card) => at(card, baseUrlFor(req), cardShapeOf(req)), v03RestCard };
}
