/** Pure translation between v0.3 requests and v1.0, and v1.0 answers back; no `undefined` keys, so stored bytes are exact. */
import { A2AError } from '../../errors.js';
import type { CancelTaskRequest, GetTaskRequest, SendMessageRequest, SendMessageResponse, SubscribeToTaskRequest } from '../requests.js';
import type { Artifact, Message, Part, StreamResponse, Task, TaskPushNotificationConfig, TaskState, TaskStatus } from '../schemas.js';
import type {
  V03Artifact,
  V03Message,
  V03MessageSendParams,
  V03Part,
  V03PushNotificationConfig,
  V03StreamEvent,
  V03Task,
  V03TaskIdParams,
  V03TaskQueryParams,
  V03TaskState,
  V03TaskStatus,
} from './schemas.js';

/** Metadata flag of a v0.3 data part wrapping a non-object value as `{ value }` (the SDKs' convention, unwrapped on the way in). */
export const DATA_PART_COMPAT_FLAG = 'data_part_compat';

// Enums

const STATE_TO_V03: Readonly<Record<TaskState, V03TaskState>> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_AUTH_REQUIRED: 'auth-required',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_REJECTED: 'rejected',
};

const STATE_TO_V1 = new Map<V03TaskState, TaskState>(Object.entries(STATE_TO_V03).map(([v1, v03]) => [v03, v1 as TaskState]));

export const toV03State = (state: TaskState): V03TaskState => STATE_TO_V03[state] ?? 'unknown';

/** The v1.0 state of a v0.3 spelling; undefined for `unknown` (invalid in v1.0). */
export const toV1State = (state: V03TaskState): TaskState | undefined => STATE_TO_V1.get(state);

const TERMINAL: ReadonlySet<TaskState> = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED']);
const INTERRUPTED: ReadonlySet<TaskState> = new Set(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

/** When a v0.3 `status-update` is `final`: message/stream ends with the turn ('turn'), resubscribe at a terminal state. */
export type FinalRule = 'turn' | 'terminal';

export function isFinalState(state: TaskState, rule: FinalRule = 'turn'): boolean {
  return TERMINAL.has(state) || (rule === 'turn' && INTERRUPTED.has(state));
}

// v0.3 → v1.0 (requests)

/** Standard base64 with padding (v1.0 `raw` may arrive URL-safe or unpadded). */
function standardBase64(value: string): string {
  const standard = value.replace(/-/g, '+').replace(/_/g, '/');
  return standard.length % 4 === 0 ? standard : standard + '='.repeat(4 - (standard.length % 4));
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function toV1Part(part: V03Part): Part {
  switch (part.kind) {
    case 'text':
      return part.metadata ? { text: part.text, metadata: part.metadata } : { text: part.text };
    case 'file': {
      const { file } = part;
      const out: Part = file.bytes !== undefined ? { raw: file.bytes } : { url: file.uri! };
      if (file.name !== undefined) out.filename = file.name;
      if (file.mimeType !== undefined) out.mediaType = file.mimeType;
      if (part.metadata) out.metadata = part.metadata;
      return out;
    }
    case 'data': {
      if (part.metadata?.[DATA_PART_COMPAT_FLAG] === true) {
        const { [DATA_PART_COMPAT_FLAG]: _flag, ...rest } = part.metadata;
        const out: Part = { data: 'value' in part.data ? part.data.value : part.data };
        if (Object.keys(rest).length > 0) out.metadata = rest;
        return out;
      }
      return part.metadata ? { data: part.data, metadata: part.metadata } : { data: part.data };
    }
  }
}

export function toV1Message(message: Omit<V03Message, 'kind'> & { kind?: 'message' }): Message {
  const out: Message = {
    messageId: message.messageId,
    role: message.role === 'user' ? 'ROLE_USER' : 'ROLE_AGENT',
    parts: message.parts.map(toV1Part),
  };
  if (message.contextId !== undefined) out.contextId = message.contextId;
  if (message.taskId !== undefined) out.taskId = message.taskId;
  if (message.referenceTaskIds !== undefined) out.referenceTaskIds = message.referenceTaskIds;
  if (message.extensions !== undefined) out.extensions = message.extensions;
  if (message.metadata !== undefined) out.metadata = message.metadata;
  return out;
}

/** The flat v1.0 config of a v0.3 one: its first scheme; an empty id, token or credentials is absent (proto3). */
export function toV1PushConfig(config: V03PushNotificationConfig): Omit<TaskPushNotificationConfig, 'taskId'> {
  const scheme = config.authentication?.schemes[0];
  const credentials = config.authentication?.credentials;
  return {
    url: config.url,
    ...(config.id ? { id: config.id } : {}),
    ...(config.token ? { token: config.token } : {}),
    ...(scheme ? { authentication: { scheme, ...(credentials ? { credentials } : {}) } } : {}),
  };
}

/** `message/send` and `message/stream` params as a v1.0 SendMessageRequest (`blocking` absent = blocking). */
export function toV1SendMessageRequest(params: V03MessageSendParams): SendMessageRequest {
  const out: SendMessageRequest = { message: toV1Message(params.message) };
  const v03 = params.configuration;
  if (v03) {
    const configuration: NonNullable<SendMessageRequest['configuration']> = {};
    if (v03.acceptedOutputModes !== undefined) configuration.acceptedOutputModes = v03.acceptedOutputModes;
    if (v03.historyLength !== undefined) configuration.historyLength = v03.historyLength;
    if (v03.blocking === false) configuration.returnImmediately = true;
    if (v03.pushNotificationConfig) configuration.taskPushNotificationConfig = toV1PushConfig(v03.pushNotificationConfig);
    out.configuration = configuration;
  }
  if (params.metadata !== undefined) out.metadata = params.metadata;
  return out;
}

export function toV1GetTaskRequest(params: V03TaskQueryParams): GetTaskRequest {
  return params.historyLength === undefined ? { id: params.id } : { id: params.id, historyLength: params.historyLength };
}

export function toV1CancelTaskRequest(params: V03TaskIdParams): CancelTaskRequest {
  return params.metadata === undefined ? { id: params.id } : { id: params.id, metadata: params.metadata };
}

export function toV1SubscribeToTaskRequest(params: V03TaskIdParams): SubscribeToTaskRequest {
  return { id: params.id };
}

// v1.0 → v0.3 (results and stream events)

function toV03Part(part: Part): V03Part {
  const metadata = part.metadata;
  if ('text' in part) return metadata ? { kind: 'text', text: part.text, metadata } : { kind: 'text', text: part.text };
  if ('raw' in part || 'url' in part) {
    const file: { bytes?: string; uri?: string; name?: string; mimeType?: string } =
      'raw' in part ? { bytes: standardBase64(part.raw) } : { uri: part.url };
    if (part.filename) file.name = part.filename;
    if (part.mediaType) file.mimeType = part.mediaType;
    return metadata ? { kind: 'file', file, metadata } : { kind: 'file', file };
  }
  const data = (part as { data: unknown }).data;
  if (isPlainObject(data)) return metadata ? { kind: 'data', data, metadata } : { kind: 'data', data };
  return { kind: 'data', data: { value: data }, metadata: { ...metadata, [DATA_PART_COMPAT_FLAG]: true } };
}

export function toV03Message(message: Message): V03Message {
  const out: V03Message = {
    kind: 'message',
    messageId: message.messageId,
    role: message.role === 'ROLE_USER' ? 'user' : 'agent',
    parts: message.parts.map(toV03Part),
  };
  if (message.contextId) out.contextId = message.contextId;
  if (message.taskId) out.taskId = message.taskId;
  if (message.referenceTaskIds?.length) out.referenceTaskIds = message.referenceTaskIds;
  if (message.extensions?.length) out.extensions = message.extensions;
  if (message.metadata !== undefined) out.metadata = message.metadata;
  return out;
}

function toV03Artifact(artifact: Artifact): V03Artifact {
  const out: V03Artifact = { artifactId: artifact.artifactId, parts: artifact.parts.map(toV03Part) };
  if (artifact.name) out.name = artifact.name;
  if (artifact.description) out.description = artifact.description;
  if (artifact.metadata !== undefined) out.metadata = artifact.metadata;
  if (artifact.extensions?.length) out.extensions = artifact.extensions;
  return out;
}

function toV03TaskStatus(status: TaskStatus): V03TaskStatus {
  const out: V03TaskStatus = { state: toV03State(status.state) };
  if (status.message) out.message = toV03Message(status.message);
  if (status.timestamp) out.timestamp = status.timestamp;
  return out;
}

export function toV03Task(task: Task): V03Task {
  // contextId is required in v0.3; the engine always sets one.
  const out: V03Task = { kind: 'task', id: task.id, contextId: task.contextId ?? '', status: toV03TaskStatus(task.status) };
  if (task.history !== undefined) out.history = task.history.map(toV03Message);
  if (task.artifacts !== undefined) out.artifacts = task.artifacts.map(toV03Artifact);
  if (task.metadata !== undefined) out.metadata = task.metadata;
  return out;
}

/** SendMessage's `{task}` / `{message}` wrapper as v0.3's bare, `kind`-tagged object. */
export function toV03SendResult(response: SendMessageResponse): V03Task | V03Message {
  return 'task' in response ? toV03Task(response.task) : toV03Message(response.message);
}

/** One StreamResponse as a v0.3 stream event; `final` on status updates follows `rule`. */
export function toV03StreamEvent(event: StreamResponse, rule: FinalRule = 'turn'): V03StreamEvent {
  if ('task' in event) return toV03Task(event.task);
  if ('message' in event) return toV03Message(event.message);
  if ('statusUpdate' in event) {
    const update = event.statusUpdate;
    const out: V03StreamEvent = {
      kind: 'status-update',
      taskId: update.taskId,
      contextId: update.contextId,
      status: toV03TaskStatus(update.status),
      final: isFinalState(update.status.state, rule),
    };
    if (update.metadata !== undefined) out.metadata = update.metadata;
    return out;
  }
  const update = event.artifactUpdate;
  const out: V03StreamEvent = {
    kind: 'artifact-update',
    taskId: update.taskId,
    contextId: update.contextId,
    artifact: toV03Artifact(update.artifact),
  };
  if (update.append !== undefined) out.append = update.append;
  if (update.lastChunk !== undefined) out.lastChunk = update.lastChunk;
  if (update.metadata !== undefined) out.metadata = update.metadata;
  return out;
}

// Errors

/** The error for a v0.3 client: -32001…-32007 as in v1.0; -32008 and -32009, unknown there, become -32600 (reason kept). */
export function toV03Error(error: A2AError): A2AError {
  if (error.kind !== 'ExtensionSupportRequired' && error.kind !== 'VersionNotSupported') return error;
  return new A2AError('InvalidRequest', error.message, {
    ...(error.metadata ? { metadata: { ...error.metadata } } : {}),
    reason: error.reason,
    domain: error.domain,
    headers: error.headers,
  });
}
