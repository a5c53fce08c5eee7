/** Zod schemas of what a v0.3 client sends, and types of what it is answered; only ./translate.ts uses them. */
import { z } from 'zod';
import { isBase64 } from '../schemas.js';
import {
  fieldError,
  optionalBoolean,
  optionalMetadata,
  optionalNonNegativeInt32,
  optionalString,
  optionalStringList,
  requiredString,
} from '../schema-builders.js';

/** v0.3 task states, `unknown` included (it has no v1.0 counterpart and is never sent by this server). */
export const V03_TASK_STATES = [
  'submitted',
  'working',
  'input-required',
  'completed',
  'canceled',
  'failed',
  'rejected',
  'auth-required',
  'unknown',
] as const;
export type V03TaskState = (typeof V03_TASK_STATES)[number];

const requiredObject = (field: string) => optionalMetadata(field).unwrap();

// Parts

const TextPartSchema = z.object({
  kind: z.literal('text'),
  text: z.string(fieldError('text', 'a string')),
  metadata: optionalMetadata(),
});

const FILE_CONTENT = ['bytes', 'uri'] as const;

const FileSchema = z
  .object(
    {
      bytes: z.string(fieldError('file.bytes', 'a base64 string')).refine(isBase64, { error: 'file.bytes must be base64' }).optional(),
      uri: optionalString('file.uri'),
      name: optionalString('file.name'),
      mimeType: optionalString('file.mimeType'),
    },
    fieldError('file', 'an object with bytes or uri'),
  )
  .refine((file) => (file.bytes !== undefined) !== (file.uri !== undefined), {
    error: `file must have exactly one of ${FILE_CONTENT.join(', ')}`,
  });

const FilePartSchema = z.object({
  kind: z.literal('file'),
  file: FileSchema,
  metadata: optionalMetadata(),
});

const DataPartSchema = z.object({
  kind: z.literal('data'),
  // v0.3 data parts hold a JSON object only (v1.0 takes any JSON value).
  data: requiredObject('data'),
  metadata: optionalMetadata(),
});

export const V03PartSchema = z.discriminatedUnion('kind', [TextPartSchema, FilePartSchema, DataPartSchema], {
  error: (issue) => (issue.input === undefined ? 'part is required' : 'part must have kind "text", "file" or "data"'),
});
export type V03Part = z.infer<typeof V03PartSchema>;

// Message

const messageShape = {
  // Required by the v0.3 schema; tolerated: the method says what it is.
  kind: z.literal('message', fieldError('kind', '"message"')).optional(),
  messageId: requiredString('messageId'),
  role: z.enum(['user', 'agent'], fieldError('role', '"user" or "agent"')),
  parts: z.array(V03PartSchema, fieldError('parts', 'an array of parts')).min(1, { error: 'parts must have at least one part' }),
  contextId: optionalString('contextId'),
  taskId: optionalString('taskId'),
  referenceTaskIds: optionalStringList('referenceTaskIds'),
  extensions: optionalStringList('extensions'),
  metadata: optionalMetadata(),
};

export const V03MessageSchema = z.object(messageShape, fieldError('message', 'a message object'));
type V03MessageInput = z.infer<typeof V03MessageSchema>;
/** A v0.3 Message as the server sends it: `kind` always set. */
export type V03Message = Omit<V03MessageInput, 'kind'> & { kind: 'message' };

// Request params

const historyLength = () => optionalNonNegativeInt32('historyLength');

export const V03PushNotificationConfigSchema = z.object(
  {
    id: optionalString('id'),
    url: requiredString('url'),
    token: optionalString('token'),
    authentication: z
      .object(
        {
          schemes: z.array(z.string(fieldError('schemes entries', 'strings')), fieldError('schemes', 'an array of strings')),
          credentials: optionalString('credentials'),
        },
        fieldError('authentication', 'an object'),
      )
      .optional(),
  },
  fieldError('pushNotificationConfig', 'an object'),
);
export type V03PushNotificationConfig = z.infer<typeof V03PushNotificationConfigSchema>;

const V03MessageSendConfigurationSchema = z.object(
  {
    acceptedOutputModes: optionalStringList('acceptedOutputModes'),
    blocking: optionalBoolean('blocking'),
    historyLength: historyLength(),
    pushNotificationConfig: V03PushNotificationConfigSchema.optional(),
  },
  fieldError('configuration', 'an object'),
);

/** Params of `message/send` and `message/stream`. */
export const V03MessageSendParamsSchema = z.object(
  {
    message: V03MessageSchema,
    configuration: V03MessageSendConfigurationSchema.optional(),
    metadata: optionalMetadata(),
  },
  fieldError('params', 'a JSON object'),
);
export type V03MessageSendParams = z.infer<typeof V03MessageSendParamsSchema>;

export const V03TaskQueryParamsSchema = z.object(
  { id: requiredString('id'), historyLength: historyLength(), metadata: optionalMetadata() },
  fieldError('params', 'a JSON object'),
);
export type V03TaskQueryParams = z.infer<typeof V03TaskQueryParamsSchema>;

/** Params of `tasks/cancel` and `tasks/resubscribe`. */
export const V03TaskIdParamsSchema = z.object({ id: requiredString('id'), metadata: optionalMetadata() }, fieldError('params', 'a JSON object'));
export type V03TaskIdParams = z.infer<typeof V03TaskIdParamsSchema>;

/** Params of `agent/getAuthenticatedExtendedCard`: none (absent params parse as `{}`). */
export const V03NoParamsSchema = z.object({}, fieldError('params', 'a JSON object')).default(() => ({}));

// What the server sends

export interface V03Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: V03Part[];
  metadata?: Record<string, unknown>;
  extensions?: string[];
}

export interface V03TaskStatus {
  state: V03TaskState;
  message?: V03Message;
  timestamp?: string;
}

export interface V03Task {
  kind: 'task';
  id: string;
  contextId: string;
  status: V03TaskStatus;
  history?: V03Message[];
  artifacts?: V03Artifact[];
  metadata?: Record<string, unknown>;
}

export interface V03TaskStatusUpdateEvent {
  kind: 'status-update';
  taskId: string;
  contextId: string;
  status: V03TaskStatus;
  /** Required in v0.3: true on the last event of the stream. */
  final: boolean;
  metadata?: Record<string, unknown>;
}

export interface V03TaskArtifactUpdateEvent {
  kind: 'artifact-update';
  taskId: string;
  contextId: string;
  artifact: V03Artifact;
  append?: boolean;
  lastChunk?: boolean;
  metadata?: Record<string, unknown>;
}

/** One v0.3 stream event (the `result` of an SSE frame). */
export type V03StreamEvent = V03Task | V03Message | V03TaskStatusUpdateEvent | V03TaskArtifactUpdateEvent;
