/** The v0.3 discovery fields of a served card: 0.3 interfaces mirroring the 1.0 ones, v0.3 top-level fields and schemes. */
// Beside the v1.0 fields: each generation's parser ignores the other's (§5.7).
import type { AgentCard, AgentInterface, AgentSkill, OAuthFlows, SecurityRequirement, SecurityScheme } from '../schemas.js';

/** `protocolVersion` of a v0.3 card (v0.3 cards carry the full semver). */
const V03_CARD_PROTOCOL_VERSION = '0.3.0';
/** `AgentInterface.protocolVersion` of an interface that speaks v0.3. */
const V03_INTERFACE_VERSION = '0.3';

export interface V03AgentInterface {
  url: string;
  transport: string;
}

/** The fields a v0.3 client reads from a card. */
export interface V03CardFields {
  url: string;
  preferredTransport: string;
  additionalInterfaces: V03AgentInterface[];
  protocolVersion: string;
  supportsAuthenticatedExtendedCard?: boolean;
  security?: Record<string, string[]>[];
}

type MergedAgentCard = AgentCard & V03CardFields;

const isV03 = (version: string) => version === V03_INTERFACE_VERSION || version.startsWith(`${V03_INTERFACE_VERSION}.`);

/** The 0.3 interfaces `card` states, else one per served 1.0 interface at its URL (not one with a tenant: v0.3 cannot carry it). */
function v03Interfaces(card: AgentCard, bindings: readonly string[]): AgentInterface[] {
  const stated = card.supportedInterfaces.filter((i) => isV03(i.protocolVersion));
  if (stated.length > 0) return stated;
  return card.supportedInterfaces
    .filter((i) => i.protocolVersion === '1.0' && !i.tenant && bindings.includes(i.protocolBinding))
    .map((i) => ({ url: i.url, protocolBinding: i.protocolBinding, protocolVersion: V03_INTERFACE_VERSION }));
}

const toV03Security = (requirements: readonly SecurityRequirement[]): Record<string, string[]>[] =>
  requirements.map((requirement) => Object.fromEntries(Object.entries(requirement.schemes).map(([name, scopes]) => [name, [...scopes.list]])));

/** v0.3 OAuthFlows: several flows may be listed; deviceCode and pkceRequired did not exist yet. */
function toV03Flows(flows: OAuthFlows): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const all = flows as Partial<Record<string, Record<string, unknown> | undefined>>;
  for (const name of ['authorizationCode', 'clientCredentials', 'implicit', 'password'] as const) {
    const flow = all[name];
    if (!flow) continue;
    const { pkceRequired: _v1Only, ...rest } = flow;
    // v0.3 requires scopes (and, for implicit, authorizationUrl; for password, tokenUrl).
    if (rest.scopes === undefined) rest.scopes = {};
    if (name === 'implicit' && !rest.authorizationUrl) continue;
    if (name === 'password' && !rest.tokenUrl) continue;
    out[name] = rest;
  }
  return out;
}

/** The v0.3 (OpenAPI-style, `type`-discriminated) fields of a v1.0 security scheme. */
function toV03SecurityScheme(scheme: SecurityScheme): Record<string, unknown> {
  const described = (description: string | undefined) => (description ? { description } : {});
  if ('apiKeySecurityScheme' in scheme) {
    const s = scheme.apiKeySecurityScheme;
    return { type: 'apiKey', in: s.location, name: s.name, ...described(s.description) };
  }
  if ('httpAuthSecurityScheme' in scheme) {
    const s = scheme.httpAuthSecurityScheme;
    return { type: 'http', scheme: s.scheme, ...(s.bearerFormat ? { bearerFormat: s.bearerFormat } : {}), ...described(s.description) };
  }
  if ('oauth2SecurityScheme' in scheme) {
    const s = scheme.oauth2SecurityScheme;
    return {
      type: 'oauth2',
      flows: toV03Flows(s.flows),
      ...(s.oauth2MetadataUrl ? { oauth2MetadataUrl: s.oauth2MetadataUrl } : {}),
      ...described(s.description),
    };
  }
  if ('openIdConnectSecurityScheme' in scheme) {
    const s = scheme.openIdConnectSecurityScheme;
    return { type: 'openIdConnect', openIdConnectUrl: s.openIdConnectUrl, ...described(s.description) };
  }
  return { type: 'mutualTLS', ...described(scheme.mtlsSecurityScheme.description) };
}

/** `card` for a v1.0 client: the v1.0 card with its 0.3 interfaces appended (1.0 first, preferred; §8.3.1). */
export function withV03Interfaces(card: AgentCard, bindings: readonly string[]): AgentCard {
  const legacy = v03Interfaces(card, bindings);
  if (legacy.length === 0 || card.supportedInterfaces.includes(legacy[0])) return card;
  return { ...card, supportedInterfaces: [...card.supportedInterfaces, ...legacy] };
}

/** `card` for both generations: the 0.3 interfaces appended, and the v0.3 fields beside the v1.0 ones. */
export function withV03Discovery(card: AgentCard, bindings: readonly string[]): AgentCard | MergedAgentCard {
  const legacy = v03Interfaces(card, bindings);
  if (legacy.length === 0) return card;
  const stated = legacy[0] !== undefined && card.supportedInterfaces.includes(legacy[0]);
  const merged: MergedAgentCard = {
    ...card,
    supportedInterfaces: stated ? card.supportedInterfaces : [...card.supportedInterfaces, ...legacy],
    url: legacy[0].url,
    preferredTransport: legacy[0].protocolBinding,
    additionalInterfaces: legacy.map((i) => ({ url: i.url, transport: i.protocolBinding })),
    protocolVersion: V03_CARD_PROTOCOL_VERSION,
  };
  if (card.capabilities.extendedAgentCard !== undefined) merged.supportsAuthenticatedExtendedCard = card.capabilities.extendedAgentCard;
  if (card.securityRequirements?.length) merged.security = toV03Security(card.securityRequirements);
  if (card.securitySchemes) {
    merged.securitySchemes = Object.fromEntries(
      Object.entries(card.securitySchemes).map(([name, scheme]) => [name, { ...toV03SecurityScheme(scheme), ...scheme } as SecurityScheme]),
    );
  }
  if (card.skills.some((skill) => skill.securityRequirements?.length)) {
    merged.skills = card.skills.map((skill): AgentSkill =>
      skill.securityRequirements?.length ? ({ ...skill, security: toV03Security(skill.securityRequirements) } as AgentSkill) : skill,
    );
  }
  return merged;
}
