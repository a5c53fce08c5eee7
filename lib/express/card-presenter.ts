/** The one presenter of every served card: interfaces from the mount, the shape asked for, then signatures (last). */
import type { IncomingMessage } from 'node:http';
import { cardWithoutDefaults } from '../protocol/card-canonical.js';
import { cardForBaseUrl, type AgentCardInput, type ServedBindings } from '../protocol/card.js';
import type { AgentCard } from '../protocol/schemas.js';
import { withV03Discovery, withV03Interfaces } from '../protocol/v0_3/card.js';
import { toV03RestAgentCard } from '../protocol/v0_3/rest.js';
import type { CardSigner } from './card-signer.js';
import { mountPathOf, originOf } from '../context/node-request.js';
import { requestedVersion } from '../context/request-state.js';
import { isLegacyVersion } from '../protocol/version.js';

/** With v0.3 on: `v1.0` (strict ProtoJSON) for a stated version but 0.3; `merged` (v0.3 fields added) for 0.3 or none. */
export type CardShape = 'v1.0' | 'merged';

/** Origin plus mount path, as this request reached the router (Express, Connect or plain Node). */
export const baseUrlOf = (req: IncomingMessage): string => originOf(req) + mountPathOf(req);

export const cardShapeOf = (req: IncomingMessage): CardShape => (isLegacyVersion(requestedVersion(req)) ? 'merged' : 'v1.0');

interface CardPresenterOptions {
  readonly bindings?: ServedBindings;
  /** The bindings also served in v0.3; none when compatibility is off. */
  readonly v03Bindings: readonly string[];
  readonly signer?: CardSigner;
  readonly baseUrlFor?: (req: IncomingMessage) => string;
}

/** `card` as served with the router's endpoints at `baseUrl`, in `shape`; a promise only when signing. */
export type PresentCardAt = ((card: AgentCardInput, baseUrl: string, shape?: CardShape) => AgentCard | Promise<AgentCard>) & {
  /** Whether the shapes differ (v0.3 compatibility on): a response then varies by A2A-Version. */
  readonly variesByVersion?: boolean;
};

interface CardPresenter {
  readonly at: PresentCardAt;
  /** `card` as served to `req` (its origin, the router's mount path, the shape it asks for). */
  forRequest(req: IncomingMessage, card: AgentCardInput): AgentCard | Promise<AgentCard>;
  /** `card` for v0.3 `GET /v1/card`: its v0.3 ProtoJSON, signed over that form when signing. */
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
