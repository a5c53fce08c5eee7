/** The v0.3 HTTP+JSON binding: routes under `/v1/`, and ProtoJSON of the v0.3 proto to and from the `kind` objects of ./schemas.ts. */
// The v0.3 proto has no part `metadata`, file `name` or `referenceTaskIds`: this binding drops them (JSON-RPC keeps them).
import { A2AError, errorDetails, invalidParams } from '../../errors.js';
import { withV03RestJsonNames } from '../field-names.js';
import { resourceAt, type RestLookup, type RestOperation, type Resource } from '../rest.js';
import type { AgentCard, SecurityRequirement, SecurityScheme } from '../schemas.js';
import type { V03CardFields } from './card.js';
import type { V03Artifact, V03Message, V03Part, V03StreamEvent, V03Task, V03TaskState, V03TaskStatus } from './schemas.js';

// Routes

export const V03_REST_PREFIX = '/v1/';

/** The one-segment v0.3 resources (below `/v1/`); `tasks/...` is the v1.0 binding's own. */
const SINGLE = new Map<string, Resource>([
  ['message:send', { methods: { POST: 'SendMessage' } }],
  ['message:stream', { methods: { POST: 'SendStreamingMessage' } }],
  ['card', { methods: { GET: 'GetExtendedAgentCard' } }],
]);

/** The v0.3 operation `method` and `path` name (no tenants, no ListTasks); `allow` for another method, else undefined. */
export function matchV03RestRoute(method: string, path: string): RestLookup | undefined {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  if (!trimmed.startsWith(V03_REST_PREFIX)) return undefined;
  const segments = trimmed.slice(V03_REST_PREFIX.length).split('/');
  const resource = segments.length === 1 ? SINGLE.get(segments[0]) : resourceAt(segments, 0);
  if (!resource) return undefined;
  const operation: RestOperation | undefined = Object.hasOwn(resource.methods, method) ? resource.methods[method] : undefined;
  if (!operation) return { allow: [...Object.keys(resource.methods), 'OPTIONS'].join(', ') };
  return { match: { operation, hasBody: method === 'POST', taskId: resource.taskId, configId: resource.configId, v03: true } };
}

// Requests: ProtoJSON in, v0.3 `kind` objects out (for V03MessageSendParamsSchema)

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

const setString = (value: unknown): unknown => (value === '' ? undefined : value);

function put(out: JsonObject, name: string, value: unknown): void {
  if (value !== undefined) out[name] = value;
}

/** The one of `names` set in `object` (a proto oneof); an invalid request when none or several are. */
function oneOf(object: JsonObject, names: readonly string[], field: string): string {
  const set = names.filter((name) => object[name] !== undefined && object[name] !== null);
  if (set.length === 1) return set[0];
  throw invalidParams([
    { field, description: set.length === 0 ? `must have one of ${names.join(', ')}` : `must have only one of ${set.join(', ')}` },
  ]);
}

const ROLES: Readonly<Record<string, 'user' | 'agent'>> = { ROLE_USER: 'user', ROLE_AGENT: 'agent', 1: 'user', 2: 'agent' };

function fromProtoRole(role: unknown): 'user' | 'agent' {
  if ((typeof role === 'string' || typeof role === 'number') && Object.hasOwn(ROLES, role)) return ROLES[role];
  throw invalidParams([{ field: 'message.role', description: role === undefined ? 'is required' : 'must be "ROLE_USER" or "ROLE_AGENT"' }]);
}

function fromProtoPart(part: unknown, field: string): unknown {
  if (!isObject(part)) throw invalidParams([{ field, description: 'must be a part object' }]);
  switch (oneOf(part, ['text', 'file', 'data'], field)) {
    case 'text':
      return { kind: 'text', text: part.text };
    case 'file': {
      const file = part.file;
      if (!isObject(file)) throw invalidParams([{ field: `${field}.file`, description: 'must be an object' }]);
      const content = oneOf(file, ['fileWithUri', 'fileWithBytes'], `${field}.file`);
      const out: JsonObject = content === 'fileWithUri' ? { uri: file.fileWithUri } : { bytes: file.fileWithBytes };
      put(out, 'mimeType', setString(file.mimeType));
      return { kind: 'file', file: out };
    }
    default: {
      const data = part.data;
      if (!isObject(data)) throw invalidParams([{ field: `${field}.data`, description: 'must be an object with data' }]);
      return { kind: 'data', data: data.data };
    }
  }
}

function fromProtoMessage(message: unknown): unknown {
  if (!isObject(message)) return message; // zod: "message must be a message object"
  if (message.content === undefined && message.parts !== undefined) {
    // A 1.0 body (or a v0.3 JSON-RPC one) sent without a version header.
    throw new A2AError(
      'VersionNotSupported',
      'This request states no A2A-Version, so it is served as v0.3 HTTP+JSON (the ProtoJSON of the v0.3 proto, message.content), but its message has parts: a 1.0 client sends the header A2A-Version: 1.0',
      { metadata: { requestedVersion: '', supportedVersions: '1.0, 0.3' } },
    );
  }
  const content = message.content;
  if (!Array.isArray(content) || content.length === 0) {
    throw invalidParams([{ field: 'message.content', description: content === undefined ? 'is required' : 'must be a non-empty array of parts' }]);
  }
  const out: JsonObject = {
    kind: 'message',
    messageId: message.messageId,
    role: fromProtoRole(message.role),
    parts: content.map((part, i) => fromProtoPart(part, `message.content[${i}]`)),
  };
  put(out, 'contextId', setString(message.contextId));
  put(out, 'taskId', setString(message.taskId));
  put(out, 'extensions', message.extensions);
  put(out, 'metadata', message.metadata);
  return out;
}

function fromProtoPushConfig(config: unknown): unknown {
  if (!isObject(config)) return config;
  const out: JsonObject = { url: config.url };
  put(out, 'id', setString(config.id));
  put(out, 'token', setString(config.token));
  const authentication = config.authentication;
  if (isObject(authentication)) {
    const auth: JsonObject = { schemes: authentication.schemes ?? [] };
    put(auth, 'credentials', setString(authentication.credentials));
    out.authentication = auth;
  } else {
    put(out, 'authentication', authentication);
  }
  return out;
}

function fromProtoConfiguration(configuration: unknown): unknown {
  if (!isObject(configuration)) return configuration;
  const out: JsonObject = {
    // proto3: an unset `blocking` is false, as both SDK servers read it; no configuration at all is blocking.
    blocking: configuration.blocking ?? false,
  };
  put(out, 'acceptedOutputModes', configuration.acceptedOutputModes);
  put(out, 'historyLength', configuration.historyLength);
  if (configuration.pushNotification !== undefined) out.pushNotificationConfig = fromProtoPushConfig(configuration.pushNotification);
  return out;
}

/** A v0.3 REST SendMessageRequest body (proto names and `request` accepted) as v0.3 `message/send` params. */
export function fromV03RestSendMessageRequest(body: unknown): unknown {
  if (body === undefined || body === null) return {};
  if (!isObject(body)) return body; // zod: "params must be a JSON object"
  const named = withV03RestJsonNames(body) as JsonObject;
  if (named.message !== undefined && named.request !== undefined) {
    throw invalidParams([{ field: 'message', description: 'is given twice (as request and message)' }]);
  }
  const out: JsonObject = {};
  const message = named.message ?? named.request;
  if (message !== undefined) out.message = fromProtoMessage(message);
  if (named.configuration !== undefined) out.configuration = fromProtoConfiguration(named.configuration);
  put(out, 'metadata', named.metadata);
  return out;
}

// Answers: v0.3 `kind` objects in, ProtoJSON out

const STATE_TO_PROTO: Readonly<Record<V03TaskState, string>> = {
  submitted: 'TASK_STATE_SUBMITTED',
  working: 'TASK_STATE_WORKING',
  'input-required': 'TASK_STATE_INPUT_REQUIRED',
  completed: 'TASK_STATE_COMPLETED',
  // The v0.3 proto spells it with two Ls (v1.0: TASK_STATE_CANCELED).
  canceled: 'TASK_STATE_CANCELLED',
  failed: 'TASK_STATE_FAILED',
  rejected: 'TASK_STATE_REJECTED',
  'auth-required': 'TASK_STATE_AUTH_REQUIRED',
  unknown: 'TASK_STATE_UNSPECIFIED',
};

function putList(out: JsonObject, name: string, value: readonly unknown[] | undefined): void {
  if (value !== undefined && value.length > 0) out[name] = value;
}

function toV03RestPart(part: V03Part): JsonObject {
  switch (part.kind) {
    case 'text':
      return { text: part.text };
    case 'file': {
      const file: JsonObject = part.file.bytes !== undefined ? { fileWithBytes: part.file.bytes } : { fileWithUri: part.file.uri };
      if (part.file.mimeType) file.mimeType = part.file.mimeType;
      return { file };
    }
    case 'data':
      return { data: { data: part.data } };
  }
}

export function toV03RestMessage(message: V03Message): JsonObject {
  const out: JsonObject = { messageId: message.messageId };
  put(out, 'contextId', message.contextId);
  put(out, 'taskId', message.taskId);
  out.role = message.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT';
  out.content = message.parts.map(toV03RestPart);
  put(out, 'metadata', message.metadata);
  putList(out, 'extensions', message.extensions);
  return out;
}

function toV03RestArtifact(artifact: V03Artifact): JsonObject {
  const out: JsonObject = { artifactId: artifact.artifactId };
  put(out, 'name', artifact.name);
  put(out, 'description', artifact.description);
  out.parts = artifact.parts.map(toV03RestPart);
  put(out, 'metadata', artifact.metadata);
  putList(out, 'extensions', artifact.extensions);
  return out;
}

function toV03RestStatus(status: V03TaskStatus): JsonObject {
  const out: JsonObject = { state: STATE_TO_PROTO[status.state] };
  if (status.message) out.message = toV03RestMessage(status.message);
  put(out, 'timestamp', status.timestamp);
  return out;
}

export function toV03RestTask(task: V03Task): JsonObject {
  const out: JsonObject = { id: task.id, contextId: task.contextId, status: toV03RestStatus(task.status) };
  putList(out, 'artifacts', task.artifacts?.map(toV03RestArtifact));
  putList(out, 'history', task.history?.map(toV03RestMessage));
  put(out, 'metadata', task.metadata);
  return out;
}

/** A `message:send` answer: SendMessageResponse, `{task}` or `{message}`. */
export function toV03RestSendResult(result: V03Task | V03Message): JsonObject {
  return result.kind === 'task' ? { task: toV03RestTask(result) } : { message: toV03RestMessage(result) };
}

/** One stream event as a v0.3 StreamResponse. */
export function toV03RestStreamResponse(event: V03StreamEvent): JsonObject {
  switch (event.kind) {
    case 'task':
      return { task: toV03RestTask(event) };
    case 'message':
      return { message: toV03RestMessage(event) };
    case 'status-update': {
      const update: JsonObject = { taskId: event.taskId, contextId: event.contextId, status: toV03RestStatus(event.status), final: event.final };
      put(update, 'metadata', event.metadata);
      return { statusUpdate: update };
    }
    case 'artifact-update': {
      const update: JsonObject = { taskId: event.taskId, contextId: event.contextId, artifact: toV03RestArtifact(event.artifact) };
      if (event.append) update.append = true;
      if (event.lastChunk) update.lastChunk = true;
      put(update, 'metadata', event.metadata);
      return { artifactUpdate: update };
    }
  }
}

/** The v0.3 HTTP+JSON error body: the JSON-RPC error object (clients map `code`), google.rpc details as `data`. */
export function v03RestErrorBody(error: A2AError): { code: number; message: string; data?: unknown[] } {
  const data = errorDetails(error);
  return data ? { code: error.code, message: error.message, data } : { code: error.code, message: error.message };
}

// The extended card (`GET /v1/card`)

const V03_FLOWS = ['authorizationCode', 'clientCredentials', 'implicit', 'password'] as const;

/** A v1.0 scheme as the v0.3 proto's oneof; undefined when v0.3 cannot state it (only a deviceCode flow). */
function toV03RestScheme(scheme: SecurityScheme): JsonObject | undefined {
  if ('oauth2SecurityScheme' in scheme) {
    const { flows, ...rest } = scheme.oauth2SecurityScheme;
    // The v0.3 proto's OAuthFlows is a oneof: the first flow v0.3 knows, without v1.0's pkceRequired.
    const all = flows as Partial<Record<string, Record<string, unknown>>>;
    const name = V03_FLOWS.find((flow) => all[flow] !== undefined);
    if (!name) return undefined;
    const { pkceRequired: _v1Only, ...flow } = all[name]!;
    return { oauth2SecurityScheme: { ...rest, flows: { [name]: flow } } };
  }
  for (const name of ['apiKeySecurityScheme', 'httpAuthSecurityScheme', 'openIdConnectSecurityScheme', 'mtlsSecurityScheme'] as const) {
    if (name in scheme) return { [name]: (scheme as Record<string, unknown>)[name] };
  }
  return undefined;
}

const toV03RestSecurity = (requirements: readonly SecurityRequirement[] | undefined) =>
  requirements?.map((requirement) => ({ schemes: requirement.schemes }));

/** A served card as the v0.3 proto's AgentCard in ProtoJSON (`GET /v1/card`); signing is the caller's, over this form. */
export function toV03RestAgentCard(card: AgentCard & Partial<V03CardFields>): JsonObject {
  const out: JsonObject = { protocolVersion: card.protocolVersion ?? '0.3.0', name: card.name, description: card.description };
  put(out, 'url', card.url);
  put(out, 'preferredTransport', card.preferredTransport);
  putList(
    out,
    'additionalInterfaces',
    card.additionalInterfaces?.map((i) => ({ url: i.url, transport: i.transport })),
  );
  if (card.provider) out.provider = { url: card.provider.url, organization: card.provider.organization };
  out.version = card.version;
  put(out, 'documentationUrl', card.documentationUrl);
  const { streaming, pushNotifications, extensions, extendedAgentCard } = card.capabilities;
  const capabilities: JsonObject = {};
  if (streaming) capabilities.streaming = true;
  if (pushNotifications) capabilities.pushNotifications = true;
  putList(
    capabilities,
    'extensions',
    extensions?.map((e) => {
      const extension: JsonObject = { uri: e.uri };
      put(extension, 'description', e.description);
      if (e.required) extension.required = true;
      put(extension, 'params', e.params);
      return extension;
    }),
  );
  out.capabilities = capabilities;
  if (card.securitySchemes) {
    const schemes = Object.entries(card.securitySchemes).flatMap(([name, scheme]) => {
      const v03 = toV03RestScheme(scheme);
      return v03 ? [[name, v03] as const] : [];
    });
    if (schemes.length > 0) out.securitySchemes = Object.fromEntries(schemes);
  }
  putList(out, 'security', toV03RestSecurity(card.securityRequirements));
  putList(out, 'defaultInputModes', card.defaultInputModes);
  putList(out, 'defaultOutputModes', card.defaultOutputModes);
  putList(
    out,
    'skills',
    card.skills.map((skill) => {
      const v03: JsonObject = { id: skill.id, name: skill.name, description: skill.description };
      putList(v03, 'tags', skill.tags);
      putList(v03, 'examples', skill.examples);
      putList(v03, 'inputModes', skill.inputModes);
      putList(v03, 'outputModes', skill.outputModes);
      putList(v03, 'security', toV03RestSecurity(skill.securityRequirements));
      return v03;
    }),
  );
  if (extendedAgentCard) out.supportsAuthenticatedExtendedCard = true;
  return out;
}
