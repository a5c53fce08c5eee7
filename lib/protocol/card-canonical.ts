/** The signed form of an agent card (§8.4.1): proto field presence, no `signatures`, RFC 8785 (JCS) canonical JSON. */
import canonicalize from 'canonicalize';
import type { AgentCard } from './schemas.js';

/** A field's presence: `keep` (set when present), `scalar` (omitted at its default), `list`/`map` (omitted when empty). */
type Rule =
  | 'keep'
  | 'scalar'
  | { readonly fields: Fields }
  | { readonly list: Fields | 'scalar'; readonly required?: true }
  | { readonly map: Fields | 'scalar' };
interface Fields {
  readonly [name: string]: Rule;
}

const FLOW: Fields = {
  authorizationUrl: 'keep',
  tokenUrl: 'keep',
  refreshUrl: 'scalar',
  scopes: 'keep',
  pkceRequired: 'scalar',
  deviceAuthorizationUrl: 'keep',
};
const SCHEME: Fields = {
  apiKeySecurityScheme: { fields: { description: 'scalar', location: 'keep', name: 'keep' } },
  httpAuthSecurityScheme: { fields: { description: 'scalar', scheme: 'keep', bearerFormat: 'scalar' } },
  oauth2SecurityScheme: {
    fields: {
      description: 'scalar',
      flows: {
        fields: {
          authorizationCode: { fields: FLOW },
          clientCredentials: { fields: FLOW },
          implicit: { fields: FLOW },
          password: { fields: FLOW },
          deviceCode: { fields: FLOW },
        },
      },
      oauth2MetadataUrl: 'scalar',
    },
  },
  openIdConnectSecurityScheme: { fields: { description: 'scalar', openIdConnectUrl: 'keep' } },
  mtlsSecurityScheme: { fields: { description: 'scalar' } },
};
const REQUIREMENTS: Rule = { list: { schemes: { map: { list: { list: 'scalar' } } } } };
const CARD: Fields = {
  name: 'keep',
  description: 'keep',
  supportedInterfaces: { list: { url: 'keep', protocolBinding: 'keep', tenant: 'scalar', protocolVersion: 'keep' }, required: true },
  provider: { fields: { url: 'keep', organization: 'keep' } },
  version: 'keep',
  documentationUrl: 'keep',
  capabilities: {
    fields: {
      streaming: 'keep',
      pushNotifications: 'keep',
      extensions: { list: { uri: 'scalar', description: 'scalar', required: 'scalar', params: 'keep' } },
      extendedAgentCard: 'keep',
    },
  },
  securitySchemes: { map: SCHEME },
  securityRequirements: REQUIREMENTS,
  defaultInputModes: { list: 'scalar', required: true },
  defaultOutputModes: { list: 'scalar', required: true },
  skills: {
    list: {
      id: 'keep',
      name: 'keep',
      description: 'keep',
      tags: { list: 'scalar', required: true },
      examples: { list: 'scalar' },
      inputModes: { list: 'scalar' },
      outputModes: { list: 'scalar' },
      securityRequirements: REQUIREMENTS,
    },
    required: true,
  },
  signatures: { list: { protected: 'keep', signature: 'keep', header: 'keep' } },
  iconUrl: 'keep',
};

const isDefaultScalar = (value: unknown) => value === '' || value === false || value === 0;

function shaped(value: unknown, rule: Rule): unknown {
  if (rule === 'keep' || rule === 'scalar') return value;
  if ('fields' in rule) return withoutDefaultsIn(value, rule.fields);
  if ('list' in rule) {
    if (!Array.isArray(value)) return value;
    const entry = rule.list;
    return entry === 'scalar' ? value : value.map((item) => withoutDefaultsIn(item, entry));
  }
  if (typeof value !== 'object' || value === null) return value;
  const entry = rule.map;
  if (entry === 'scalar') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutDefaultsIn(item, entry)]));
}

function omitted(value: unknown, rule: Rule): boolean {
  if (value === undefined) return true;
  if (rule === 'scalar') return isDefaultScalar(value);
  if (typeof rule === 'object' && 'list' in rule) return !rule.required && Array.isArray(value) && value.length === 0;
  if (typeof rule === 'object' && 'map' in rule) return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
  return false;
}

function withoutDefaultsIn(value: unknown, fields: Fields): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) {
    const rule = Object.hasOwn(fields, key) ? fields[key] : undefined;
    // A field the v1.0 card does not have (a v0.3 field of a merged card): kept as it is.
    if (rule === undefined) {
      if (field !== undefined) out[key] = field;
      continue;
    }
    if (!omitted(field, rule)) out[key] = shaped(field, rule);
  }
  return out;
}

/** `card` with every field that holds a non-present default removed (§8.4.1 rule 1, §5.7). */
export function cardWithoutDefaults<Card extends AgentCard>(card: Card): Card {
  return withoutDefaultsIn(card, CARD) as Card;
}

/** The JWS payload of a card signature: `card` without defaults and `signatures`, as JCS (RFC 8785). */
export function canonicalCardPayload(card: AgentCard): string {
  const { signatures: _excluded, ...rest } = cardWithoutDefaults(card);
  return canonicalize(rest)!;
}
