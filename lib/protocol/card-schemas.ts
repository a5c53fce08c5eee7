/** Zod schemas of the v1.0 agent card and its security schemes, with the conventions of schemas.ts (which re-exports them). */
import { z } from 'zod';
import {
  fieldError,
  optionalString,
  requiredString,
  optionalBoolean,
  optionalStringList,
  requiredStringList,
  optionalMetadata,
  exactlyOne,
  type OneOf,
} from './schema-builders.js';

// Security schemes (OpenAPI-like, as proto oneofs)

/** Map of scope name to description; may be empty. */
const scopes = () => z.record(z.string(), z.string(fieldError('scope descriptions', 'strings')), fieldError('scopes', 'an object'));

export const AuthorizationCodeOAuthFlowSchema = z.object({
  authorizationUrl: requiredString('authorizationUrl'),
  tokenUrl: requiredString('tokenUrl'),
  refreshUrl: optionalString('refreshUrl'),
  scopes: scopes(),
  pkceRequired: optionalBoolean('pkceRequired'),
});
export type AuthorizationCodeOAuthFlow = z.infer<typeof AuthorizationCodeOAuthFlowSchema>;

export const ClientCredentialsOAuthFlowSchema = z.object({
  tokenUrl: requiredString('tokenUrl'),
  refreshUrl: optionalString('refreshUrl'),
  scopes: scopes(),
});
export type ClientCredentialsOAuthFlow = z.infer<typeof ClientCredentialsOAuthFlowSchema>;

/** Deprecated in the proto; accepted so that older cards still parse. */
export const ImplicitOAuthFlowSchema = z.object({
  authorizationUrl: optionalString('authorizationUrl'),
  refreshUrl: optionalString('refreshUrl'),
  scopes: scopes().optional(),
});
export type ImplicitOAuthFlow = z.infer<typeof ImplicitOAuthFlowSchema>;

/** Deprecated in the proto; accepted so that older cards still parse. */
export const PasswordOAuthFlowSchema = z.object({
  tokenUrl: optionalString('tokenUrl'),
  refreshUrl: optionalString('refreshUrl'),
  scopes: scopes().optional(),
});
export type PasswordOAuthFlow = z.infer<typeof PasswordOAuthFlowSchema>;

export const DeviceCodeOAuthFlowSchema = z.object({
  deviceAuthorizationUrl: requiredString('deviceAuthorizationUrl'),
  tokenUrl: requiredString('tokenUrl'),
  refreshUrl: optionalString('refreshUrl'),
  scopes: scopes(),
});
export type DeviceCodeOAuthFlow = z.infer<typeof DeviceCodeOAuthFlowSchema>;

const OAUTH_FLOWS = ['authorizationCode', 'clientCredentials', 'implicit', 'password', 'deviceCode'] as const;

const OAuthFlowsObjectSchema = z.object(
  {
    authorizationCode: AuthorizationCodeOAuthFlowSchema.optional(),
    clientCredentials: ClientCredentialsOAuthFlowSchema.optional(),
    implicit: ImplicitOAuthFlowSchema.optional(),
    password: PasswordOAuthFlowSchema.optional(),
    deviceCode: DeviceCodeOAuthFlowSchema.optional(),
  },
  fieldError('flows', 'an object'),
);

export type OAuthFlows = OneOf<z.infer<typeof OAuthFlowsObjectSchema>>;

export const OAuthFlowsSchema = OAuthFlowsObjectSchema.refine(...exactlyOne('flows', OAUTH_FLOWS)) as unknown as z.ZodType<
  OAuthFlows,
  z.input<typeof OAuthFlowsObjectSchema>
>;

export const APIKeySecuritySchemeSchema = z.object({
  description: optionalString('description'),
  location: requiredString('location'),
  name: requiredString('name'),
});
export type APIKeySecurityScheme = z.infer<typeof APIKeySecuritySchemeSchema>;

export const HTTPAuthSecuritySchemeSchema = z.object({
  description: optionalString('description'),
  scheme: requiredString('scheme'),
  bearerFormat: optionalString('bearerFormat'),
});
export type HTTPAuthSecurityScheme = z.infer<typeof HTTPAuthSecuritySchemeSchema>;

export const OAuth2SecuritySchemeSchema = z.object({
  description: optionalString('description'),
  flows: OAuthFlowsSchema,
  oauth2MetadataUrl: optionalString('oauth2MetadataUrl'),
});
export type OAuth2SecurityScheme = z.infer<typeof OAuth2SecuritySchemeSchema>;

export const OpenIdConnectSecuritySchemeSchema = z.object({
  description: optionalString('description'),
  openIdConnectUrl: requiredString('openIdConnectUrl'),
});
export type OpenIdConnectSecurityScheme = z.infer<typeof OpenIdConnectSecuritySchemeSchema>;

export const MutualTlsSecuritySchemeSchema = z.object({
  description: optionalString('description'),
});
export type MutualTlsSecurityScheme = z.infer<typeof MutualTlsSecuritySchemeSchema>;

const SECURITY_SCHEMES = [
  'apiKeySecurityScheme',
  'httpAuthSecurityScheme',
  'oauth2SecurityScheme',
  'openIdConnectSecurityScheme',
  'mtlsSecurityScheme',
] as const;

const SecuritySchemeObjectSchema = z.object(
  {
    apiKeySecurityScheme: APIKeySecuritySchemeSchema.optional(),
    httpAuthSecurityScheme: HTTPAuthSecuritySchemeSchema.optional(),
    oauth2SecurityScheme: OAuth2SecuritySchemeSchema.optional(),
    openIdConnectSecurityScheme: OpenIdConnectSecuritySchemeSchema.optional(),
    mtlsSecurityScheme: MutualTlsSecuritySchemeSchema.optional(),
  },
  fieldError('security scheme', 'an object'),
);

export type SecurityScheme = OneOf<z.infer<typeof SecuritySchemeObjectSchema>>;

export const SecuritySchemeSchema = SecuritySchemeObjectSchema.refine(...exactlyOne('a security scheme', SECURITY_SCHEMES)) as unknown as z.ZodType<
  SecurityScheme,
  z.input<typeof SecuritySchemeObjectSchema>
>;

export const StringListSchema = z.object({
  // ProtoJSON omits an empty list; read it as [].
  list: z.array(z.string(fieldError('list entries', 'strings')), fieldError('list', 'an array of strings')).default(() => []),
});
export type StringList = z.infer<typeof StringListSchema>;

/** Schemes all satisfied together (name -> scopes); a `securityRequirements` array lists alternatives. */
export const SecurityRequirementSchema = z.object({
  // An empty map is omitted by ProtoJSON; read it as {}.
  schemes: z.record(z.string(), StringListSchema, fieldError('schemes', 'an object')).default(() => ({})),
});
export type SecurityRequirement = z.infer<typeof SecurityRequirementSchema>;

const securityRequirements = (field = 'securityRequirements') => z.array(SecurityRequirementSchema, fieldError(field, 'an array')).optional();

// Agent card

export const AgentInterfaceSchema = z.object({
  url: requiredString('url'),
  protocolBinding: requiredString('protocolBinding'),
  // Clients must echo it in every request sent to this interface.
  tenant: optionalString('tenant'),
  protocolVersion: requiredString('protocolVersion'),
});
export type AgentInterface = z.infer<typeof AgentInterfaceSchema>;

export const AgentProviderSchema = z.object(
  {
    url: requiredString('url'),
    organization: requiredString('organization'),
  },
  fieldError('provider', 'an object'),
);
export type AgentProvider = z.infer<typeof AgentProviderSchema>;

export const AgentExtensionSchema = z.object({
  // Not REQUIRED in the proto, but an extension is only addressable by its URI.
  uri: optionalString('uri'),
  description: optionalString('description'),
  // Clients that do not request this extension are refused (ExtensionSupportRequiredError).
  required: optionalBoolean('required'),
  params: optionalMetadata('params'),
});
export type AgentExtension = z.infer<typeof AgentExtensionSchema>;

export const AgentCapabilitiesSchema = z.object(
  {
    streaming: optionalBoolean('streaming'),
    pushNotifications: optionalBoolean('pushNotifications'),
    extensions: z.array(AgentExtensionSchema, fieldError('extensions', 'an array')).optional(),
    extendedAgentCard: optionalBoolean('extendedAgentCard'),
  },
  fieldError('capabilities', 'an object'),
);
export type AgentCapabilities = z.infer<typeof AgentCapabilitiesSchema>;

export const AgentSkillSchema = z.object({
  id: requiredString('id'),
  name: requiredString('name'),
  description: requiredString('description'),
  tags: requiredStringList('tags'),
  examples: optionalStringList('examples'),
  inputModes: optionalStringList('inputModes'),
  outputModes: optionalStringList('outputModes'),
  securityRequirements: securityRequirements(),
});
export type AgentSkill = z.infer<typeof AgentSkillSchema>;

/** Flattened JWS over the JCS-canonicalised card (without `signatures`). */
export const AgentCardSignatureSchema = z.object({
  protected: requiredString('protected'),
  signature: requiredString('signature'),
  header: optionalMetadata('header'),
});
export type AgentCardSignature = z.infer<typeof AgentCardSignatureSchema>;

export const AgentCardSchema = z.object({
  name: requiredString('name'),
  description: requiredString('description'),
  // Ordered: the first entry is the preferred interface.
  supportedInterfaces: z
    .array(AgentInterfaceSchema, fieldError('supportedInterfaces', 'an array'))
    .min(1, { error: 'supportedInterfaces must have at least one entry' }),
  provider: AgentProviderSchema.optional(),
  version: requiredString('version'),
  documentationUrl: optionalString('documentationUrl'),
  capabilities: AgentCapabilitiesSchema,
  securitySchemes: z.record(z.string(), SecuritySchemeSchema, fieldError('securitySchemes', 'an object')).optional(),
  securityRequirements: securityRequirements(),
  defaultInputModes: requiredStringList('defaultInputModes'),
  defaultOutputModes: requiredStringList('defaultOutputModes'),
  skills: z.array(AgentSkillSchema, fieldError('skills', 'an array')).min(1, { error: 'skills must have at least one entry' }),
  signatures: z.array(AgentCardSignatureSchema, fieldError('signatures', 'an array')).optional(),
  iconUrl: optionalString('iconUrl'),
});
export type AgentCard = z.infer<typeof AgentCardSchema>;
