/** Zod schemas and types of the A2A v1.0 data objects (a2a.proto, ProtoJSON); unknown fields stripped, REQUIRED non-empty. */
// A oneof is checked at runtime and typed as a union keyed by member: narrow with `in` (`if ('task' in event)`).
import { z } from 'zod';
import {
  struct,
  jsonValue,
  exactlyOne,
  fieldError,
  optionalString,
  requiredString,
  optionalBoolean,
  optionalStringList,
  optionalMetadata,
  type OneOf,
} from './schema-builders.js';

// Part of the package's API since before the builders and the card moved out.
export {
  MAX_JSON_DEPTH,
  exceedsJsonDepth,
  fieldError,
  optionalBoolean,
  optionalMetadata,
  optionalString,
  optionalStringList,
  requiredString,
  requiredStringList,
} from './schema-builders.js';
export * from './card-schemas.js';

// Enums and scalars

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

const taskState = (field: string) => z.enum(TASK_STATES, fieldError(field, 'a task state such as TASK_STATE_WORKING'));

export const TaskStateSchema = taskState('state');
export type TaskState = z.infer<typeof TaskStateSchema>;

const role = (field: string) => z.enum(['ROLE_USER', 'ROLE_AGENT'], fieldError(field, 'ROLE_USER or ROLE_AGENT'));

export const RoleSchema = role('role');
export type Role = z.infer<typeof RoleSchema>;

export const MetadataSchema = struct('metadata');
export type Metadata = z.infer<typeof MetadataSchema>;

/** RFC 3339 timestamp. Offsets are accepted on input; servers emit UTC with `Z`. */
const timestamp = (field: string) => z.iso.datetime({ offset: true, ...fieldError(field, 'an RFC 3339 timestamp, e.g. 2026-01-05T10:00:00.000Z') });

export const TimestampSchema = timestamp('timestamp');
export type Timestamp = z.infer<typeof TimestampSchema>;

// Standard or URL-safe alphabet (not mixed), optional padding.
const BASE64 = /^(?:[A-Za-z0-9+/]*|[A-Za-z0-9_-]*)={0,2}$/;

/** True when `s` is base64 in the standard or URL-safe alphabet, with or without padding. */
export function isBase64(s: string): boolean {
  if (!BASE64.test(s)) return false;
  return s.endsWith('=') ? s.length % 4 === 0 : s.length % 4 !== 1;
}

// Part, Message, Artifact

const PART_CONTENT = ['text', 'raw', 'url', 'data'] as const;

const PartObjectSchema = z.object({
  text: optionalString('text'),
  raw: z.string(fieldError('raw', 'a base64 string')).refine(isBase64, { error: 'raw must be base64 (standard or URL-safe alphabet)' }).optional(),
  url: optionalString('url'),
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
export const PartSchema = PartObjectSchema.refine(...exactlyOne('a part', PART_CONTENT)) as unknown as z.ZodType<
  Part,
  z.input<typeof PartObjectSchema>
>;

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

// Task and streaming events

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
  { task: Task } | { message: Message } | { statusUpdate: TaskStatusUpdateEvent } | { artifactUpdate: TaskArtifactUpdateEvent };

export const StreamResponseSchema = StreamResponseObjectSchema.refine(...exactlyOne('a stream response', STREAM_MEMBERS)) as unknown as z.ZodType<
  StreamResponse,
  z.input<typeof StreamResponseObjectSchema>
>;

// Push notification config

const authenticationShape = {
  scheme: requiredString('scheme'),
  credentials: optionalString('credentials'),
};

export const AuthenticationInfoSchema = z.object(authenticationShape);
export type AuthenticationInfo = z.infer<typeof AuthenticationInfoSchema>;

const pushConfigShape = {
  tenant: optionalString('tenant'),
  id: optionalString('id'),
  taskId: optionalString('taskId'),
  url: requiredString('url'),
  token: optionalString('token'),
  authentication: z.object(authenticationShape, fieldError('authentication', 'an object')).optional(),
};

export const TaskPushNotificationConfigSchema = z.object(pushConfigShape);
export type TaskPushNotificationConfig = z.infer<typeof TaskPushNotificationConfigSchema>;
