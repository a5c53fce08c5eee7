/**
 * Zod schemas for the A2A v1.0 data objects (a2a.proto, ProtoJSON encoding) and the
 * TypeScript types server code works with.
 *
 * Conventions:
 * - Field names are the ProtoJSON lowerCamelCase names; unknown fields are stripped.
 * - Fields marked REQUIRED in the proto must be present and non-empty (arrays: >= 1 item).
 * - Everything else is optional, so an omitted ProtoJSON default reads as `undefined`.
 * - Proto `oneof`s are validated at runtime ("exactly one member") and typed as unions keyed by
 *   the member name; narrow them with the `in` operator (`if ('task' in event)`).
 * - Error messages name the field, because clients see them next to the issue path.
 */
import { z } from 'zod';

// ---------------------------------------------------------------------------
// Small builders, so that every field gets a short message naming it.
// ---------------------------------------------------------------------------

/** Schema params whose message says "<field> is required" when absent, else "<field> must be <expected>". */
export function fieldError(field: string, expected: string) {
  return {
    error: (issue: { input?: unknown }) =>
      issue.input === undefined ? `${field} is required` : `${field} must be ${expected}`,
  };
}

/** Optional string (an empty string is the ProtoJSON default and therefore allowed). */
export const optionalString = (field: string) => z.string(fieldError(field, 'a string')).optional();

/** Required string: present and non-empty. */
export const requiredString = (field: string) =>
  z.string(fieldError(field, 'a string')).min(1, { error: `${field} must not be empty` });

/** Optional boolean. */
export const optionalBoolean = (field: string) => z.boolean(fieldError(field, 'a boolean')).optional();

/** Optional int32 of at least 0 (a plain int32 in the proto). */
export const optionalNonNegativeInt32 = (field: string) =>
  z
    .int(fieldError(field, 'an integer'))
    .min(0, { error: `${field} must be >= 0` })
    .max(2_147_483_647, { error: `${field} is too large` })
    .optional();

/** Optional list of strings. */
export const optionalStringList = (field: string) =>
  z.array(z.string(fieldError(`${field} entries`, 'strings')), fieldError(field, 'an array of strings')).optional();

/** Required list of strings with at least one entry. */
export const requiredStringList = (field: string) =>
  z
    .array(z.string(fieldError(`${field} entries`, 'strings')), fieldError(field, 'an array of strings'))
    .min(1, { error: `${field} must have at least one entry` });

/**
 * Deepest nesting (objects and arrays) accepted in a free-form JSON field (a Struct such as
 * `metadata`, or a Value such as `Part.data`); `{}` and `[]` are 1 level. Without a bound, a
 * request nested a few thousand levels passes validation and later overflows the stack wherever
 * the value is serialized or copied (the store, an SSE frame).
 */
export const MAX_JSON_DEPTH = 64;

/**
 * True when `value` nests deeper than `levels` objects/arrays. Iterative (an explicit stack, no
 * recursion), so no depth of input and no bound can overflow the call stack; a cycle (possible
 * only in objects built in code) counts as too deep.
 */
export function exceedsJsonDepth(value: unknown, levels = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const pending: object[] = [value];
  const depths: number[] = [1];
  while (pending.length > 0) {
    const node = pending.pop()!;
    const depth = depths.pop()!;
    if (depth > levels) return true;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (typeof child === 'object' && child !== null) {
          pending.push(child);
          depths.push(depth + 1);
        }
      }
      continue;
    }
    for (const key in node) {
      // Own keys only (a parsed `"__proto__"` key is an own data property, read like any other).
      if (!Object.hasOwn(node, key)) continue;
      const child: unknown = (node as Record<string, unknown>)[key];
      if (typeof child === 'object' && child !== null) {
        pending.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** Refinement params: `field` may nest at most MAX_JSON_DEPTH levels. */
const boundedDepth = (field: string) =>
  [(value: unknown) => !exceedsJsonDepth(value), { error: `${field} must not nest deeper than ${MAX_JSON_DEPTH} levels`, abort: true }] as const;

/** google.protobuf.Struct: a plain JSON object, nested at most MAX_JSON_DEPTH levels. */
const struct = (field: string) => z.record(z.string(), z.unknown(), fieldError(field, 'a JSON object')).refine(...boundedDepth(field));

/** google.protobuf.Value: any JSON value (null included), nested at most MAX_JSON_DEPTH levels. */
const jsonValue = (field: string) => z.unknown().refine(...boundedDepth(field));

/** Optional google.protobuf.Struct (see `struct`). */
export const optionalMetadata = (field = 'metadata') => struct(field).optional();

/** Counts the members of a oneof that hold a value (`null` counts: it is a valid `Value`). */
function countMembers(value: Record<string, unknown>, members: readonly string[]): number {
  let count = 0;
  // `!== undefined` rather than `in`: identical for parsed JSON, and it also treats an
  // explicit `undefined` from server-built objects as "absent".
  for (const key of members) if (value[key] !== undefined) count++;
  return count;
}

/** Refinement params for a oneof: exactly one of `members` must be set. */
function exactlyOne(what: string, members: readonly string[]) {
  const message = `${what} must have exactly one of ${members.join(', ')}`;
  return [(value: Record<string, unknown>) => countMembers(value, members) === 1, { error: message }] as const;
}

/** Turns an object type of optional oneof members into a union with exactly one member set. */
type OneOf<T> = { [K in keyof T]-?: { [P in K]-?: Exclude<T[P], undefined> } }[keyof T];

// ---------------------------------------------------------------------------
// Enums and scalars
// ---------------------------------------------------------------------------

/** Valid TaskState names. TASK_STATE_UNSPECIFIED never appears in valid data. */
export const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;

const taskState = (field: string) =>
  z.enum(TASK_STATES, fieldError(field, 'a task state such as TASK_STATE_WORKING'));

export const TaskStateSchema = taskState('state');
export type TaskState = z.infer<typeof TaskStateSchema>;

const role = (field: string) => z.enum(['ROLE_USER', 'ROLE_AGENT'], fieldError(field, 'ROLE_USER or ROLE_AGENT'));

export const RoleSchema = role('role');
export type Role = z.infer<typeof RoleSchema>;

export const MetadataSchema = struct('metadata');
export type Metadata = z.infer<typeof MetadataSchema>;

/** RFC 3339 timestamp. Offsets are accepted on input; servers emit UTC with `Z`. */
const timestamp = (field: string) =>
  z.iso.datetime({ offset: true, ...fieldError(field, 'an RFC 3339 timestamp, e.g. 2026-01-05T10:00:00.000Z') });

export const TimestampSchema = timestamp('timestamp');
export type Timestamp = z.infer<typeof TimestampSchema>;

// Standard or URL-safe alphabet (not mixed), optional padding.
const BASE64 = /^(?:[A-Za-z0-9+/]*|[A-Za-z0-9_-]*)={0,2}$/;

/** True when `s` is base64 in the standard or URL-safe alphabet, with or without padding. */
export function isBase64(s: string): boolean {
  if (!BASE64.test(s)) return false;
  // Padded input must be whole quads; unpadded input can never leave a single char over.
  return s.endsWith('=') ? s.length % 4 === 0 : s.length % 4 !== 1;
}

// ---------------------------------------------------------------------------
// Part, Message, Artifact
// ---------------------------------------------------------------------------

const PART_CONTENT = ['text', 'raw', 'url', 'data'] as const;

const PartObjectSchema = z.object({
  text: optionalString('text'),
  raw: z
    .string(fieldError('raw', 'a base64 string'))
    .refine(isBase64, { error: 'raw must be base64 (standard or URL-safe alphabet)' })
    .optional(),
  url: optionalString('url'),
  // google.protobuf.Value: any JSON value, null included.
  data: jsonValue('data').optional(),
  metadata: optionalMetadata(),
  filename: optionalString('filename'),
  mediaType: optionalString('mediaType'),
});

type PartFields = z.infer<typeof PartObjectSchema>;
type PartContent = OneOf<Pick<PartFields, (typeof PART_CONTENT)[number]>>;

/** One piece of content: exactly one of `text`, `raw` (base64), `url`, `data`. */
export type Part = Omit<PartFields, (typeof PART_CONTENT)[number]> & PartContent;

// Single refine over a flat object: cheaper than a union that tries every variant.
export const PartSchema = PartObjectSchema.refine(
  ...exactlyOne('a part', PART_CONTENT),
) as unknown as z.ZodType<Part, z.input<typeof PartObjectSchema>>;

const parts = (field = 'parts') =>
  z.array(PartSchema, fieldError(field, 'an array of parts')).min(1, { error: `${field} must have at least one part` });

const messageShape = {
  messageId: requiredString('messageId'),
  contextId: optionalString('contextId'),
  taskId: optionalString('taskId'),
  role: role('role'),
  parts: parts(),
  metadata: optionalMetadata(),
  extensions: optionalStringList('extensions'),
  referenceTaskIds: optionalStringList('referenceTaskIds'),
};

export const MessageSchema = z.object(messageShape);
export type Message = z.infer<typeof MessageSchema>;

/** A Message-valued field whose messages name `field`. */
const messageField = (field: string) => z.object(messageShape, fieldError(field, 'a message object'));

const artifactShape = {
  artifactId: requiredString('artifactId'),
  name: optionalString('name'),
  description: optionalString('description'),
  parts: parts(),
  metadata: optionalMetadata(),
  extensions: optionalStringList('extensions'),
};

export const ArtifactSchema = z.object(artifactShape);
export type Artifact = z.infer<typeof ArtifactSchema>;

// ---------------------------------------------------------------------------
// Task and streaming events
// ---------------------------------------------------------------------------

const taskStatusShape = {
  state: taskState('state'),
  message: messageField('message').optional(),
  timestamp: timestamp('timestamp').optional(),
};

export const TaskStatusSchema = z.object(taskStatusShape);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

const taskStatusField = (field: string) => z.object(taskStatusShape, fieldError(field, 'a task status object'));

const taskShape = {
  id: requiredString('id'),
  contextId: optionalString('contextId'),
  status: taskStatusField('status'),
  artifacts: z.array(ArtifactSchema, fieldError('artifacts', 'an array of artifacts')).optional(),
  history: z.array(MessageSchema, fieldError('history', 'an array of messages')).optional(),
  metadata: optionalMetadata(),
};

export const TaskSchema = z.object(taskShape);
export type Task = z.infer<typeof TaskSchema>;

const taskField = (field: string) => z.object(taskShape, fieldError(field, 'a task object'));

const statusUpdateShape = {
  taskId: requiredString('taskId'),
  contextId: requiredString('contextId'),
  status: taskStatusField('status'),
  metadata: optionalMetadata(),
};

export const TaskStatusUpdateEventSchema = z.object(statusUpdateShape);
export type TaskStatusUpdateEvent = z.infer<typeof TaskStatusUpdateEventSchema>;

const artifactUpdateShape = {
  taskId: requiredString('taskId'),
  contextId: requiredString('contextId'),
  artifact: z.object(artifactShape, fieldError('artifact', 'an artifact object')),
  // true: append these parts to the artifact with the same artifactId; false/absent: new or replace.
  append: optionalBoolean('append'),
  lastChunk: optionalBoolean('lastChunk'),
  metadata: optionalMetadata(),
};

export const TaskArtifactUpdateEventSchema = z.object(artifactUpdateShape);
export type TaskArtifactUpdateEvent = z.infer<typeof TaskArtifactUpdateEventSchema>;

const STREAM_MEMBERS = ['task', 'message', 'statusUpdate', 'artifactUpdate'] as const;

const StreamResponseObjectSchema = z.object({
  task: taskField('task').optional(),
  message: messageField('message').optional(),
  statusUpdate: z.object(statusUpdateShape, fieldError('statusUpdate', 'an object')).optional(),
  artifactUpdate: z.object(artifactUpdateShape, fieldError('artifactUpdate', 'an object')).optional(),
});

/** Payload of every SSE event and push notification body. */
export type StreamResponse =
  | { task: Task }
  | { message: Message }
  | { statusUpdate: TaskStatusUpdateEvent }
  | { artifactUpdate: TaskArtifactUpdateEvent };

export const StreamResponseSchema = StreamResponseObjectSchema.refine(
  ...exactlyOne('a stream response', STREAM_MEMBERS),
) as unknown as z.ZodType<StreamResponse, z.input<typeof StreamResponseObjectSchema>>;

// ---------------------------------------------------------------------------
// Push notification config
// ---------------------------------------------------------------------------

const authenticationShape = {
  // HTTP auth scheme, e.g. "Bearer"; sent as "<scheme> <credentials>".
  scheme: requiredString('scheme'),
  credentials: optionalString('credentials'),
};

export const AuthenticationInfoSchema = z.object(authenticationShape);
export type AuthenticationInfo = z.infer<typeof AuthenticationInfoSchema>;

const pushConfigShape = {
  tenant: optionalString('tenant'),
  // Assigned by the server when empty.
  id: optionalString('id'),
  // Empty when the config travels inline in SendMessageConfiguration.
  taskId: optionalString('taskId'),
  url: requiredString('url'),
  token: optionalString('token'),
  authentication: z.object(authenticationShape, fieldError('authentication', 'an object')).optional(),
};

export const TaskPushNotificationConfigSchema = z.object(pushConfigShape);
export type TaskPushNotificationConfig = z.infer<typeof TaskPushNotificationConfigSchema>;

// ---------------------------------------------------------------------------
// Security schemes (OpenAPI-like, as proto oneofs)
// ---------------------------------------------------------------------------

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
  // "header", "query" or "cookie"
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

export const SecuritySchemeSchema = SecuritySchemeObjectSchema.refine(
  ...exactlyOne('a security scheme', SECURITY_SCHEMES),
) as unknown as z.ZodType<SecurityScheme, z.input<typeof SecuritySchemeObjectSchema>>;

export const StringListSchema = z.object({
  // ProtoJSON omits an empty list; read it as [].
  list: z.array(z.string(fieldError('list entries', 'strings')), fieldError('list', 'an array of strings')).default(() => []),
});
export type StringList = z.infer<typeof StringListSchema>;

/**
 * Schemes that must all be satisfied together (scheme name -> required scopes).
 * Entries of a `securityRequirements` array are alternatives (OpenAPI semantics).
 */
export const SecurityRequirementSchema = z.object({
  // An empty map is omitted by ProtoJSON; read it as {}.
  schemes: z.record(z.string(), StringListSchema, fieldError('schemes', 'an object')).default(() => ({})),
});
export type SecurityRequirement = z.infer<typeof SecurityRequirementSchema>;

const securityRequirements = (field = 'securityRequirements') =>
  z.array(SecurityRequirementSchema, fieldError(field, 'an array')).optional();

// ---------------------------------------------------------------------------
// Agent card
// ---------------------------------------------------------------------------

export const AgentInterfaceSchema = z.object({
  url: requiredString('url'),
  // "JSONRPC", "HTTP+JSON", "GRPC" or a URI for a custom binding.
  protocolBinding: requiredString('protocolBinding'),
  // Clients must echo it in every request sent to this interface.
  tenant: optionalString('tenant'),
  // "Major.Minor", e.g. "1.0" or "0.3".
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
    // Absent means false; kept optional to preserve the proto's presence semantics.
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
  // The agent's own version, not the protocol version.
  version: requiredString('version'),
  documentationUrl: optionalString('documentationUrl'),
  capabilities: AgentCapabilitiesSchema,
  securitySchemes: z
    .record(z.string(), SecuritySchemeSchema, fieldError('securitySchemes', 'an object'))
    .optional(),
  securityRequirements: securityRequirements(),
  defaultInputModes: requiredStringList('defaultInputModes'),
  defaultOutputModes: requiredStringList('defaultOutputModes'),
  skills: z
    .array(AgentSkillSchema, fieldError('skills', 'an array'))
    .min(1, { error: 'skills must have at least one entry' }),
  signatures: z.array(AgentCardSignatureSchema, fieldError('signatures', 'an array')).optional(),
  iconUrl: optionalString('iconUrl'),
});
export type AgentCard = z.infer<typeof AgentCardSchema>;
