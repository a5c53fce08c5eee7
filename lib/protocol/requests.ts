/** Zod schemas of the 11 v1.0 operations' params (JSON-RPC `params`, or REST body, query and path merged) and result types. */
// JSON types only: the REST layer coerces query strings first.
import { z } from 'zod';
import { MessageSchema, TaskPushNotificationConfigSchema, TaskSchema, TASK_STATES, type Message, type Task } from './schemas.js';
import {
  fieldError,
  optionalBoolean,
  optionalMetadata,
  optionalNonNegativeInt32,
  optionalString,
  optionalStringList,
  requiredString,
} from './schema-builders.js';

const request = <Shape extends z.core.$ZodLooseShape>(shape: Shape) => z.object(shape, fieldError('params', 'a JSON object'));

/** Optional int32 history cap: 0 means "no history", absent means server default. */
const historyLength = () => optionalNonNegativeInt32('historyLength');

const tenant = () => optionalString('tenant');

// SendMessage / SendStreamingMessage

export const SendMessageConfigurationSchema = z.object(
  {
    acceptedOutputModes: optionalStringList('acceptedOutputModes'),
    taskPushNotificationConfig: z.object(TaskPushNotificationConfigSchema.shape, fieldError('taskPushNotificationConfig', 'an object')).optional(),
    historyLength: historyLength(),
    returnImmediately: optionalBoolean('returnImmediately'),
  },
  fieldError('configuration', 'an object'),
);
export type SendMessageConfiguration = z.infer<typeof SendMessageConfigurationSchema>;

export const SendMessageRequestSchema = request({
  tenant: tenant(),
  message: z.object(MessageSchema.shape, fieldError('message', 'a message object')),
  configuration: SendMessageConfigurationSchema.optional(),
  metadata: optionalMetadata(),
});
export type SendMessageRequest = z.infer<typeof SendMessageRequestSchema>;

/** Result of SendMessage: always wrapped, never a bare Task or Message. */
export type SendMessageResponse = { task: Task } | { message: Message };

const SendMessageResponseObjectSchema = z.object({
  task: TaskSchema.optional(),
  message: MessageSchema.optional(),
});

export const SendMessageResponseSchema = SendMessageResponseObjectSchema.refine(
  (value) => (value.task !== undefined) !== (value.message !== undefined),
  { error: 'a send message response must have exactly one of task, message' },
) as unknown as z.ZodType<SendMessageResponse, z.input<typeof SendMessageResponseObjectSchema>>;

// Task queries

export const GetTaskRequestSchema = request({
  tenant: tenant(),
  id: requiredString('id'),
  historyLength: historyLength(),
});
export type GetTaskRequest = z.infer<typeof GetTaskRequestSchema>;

/** Default page size for ListTasks when the client sends none. */
export const LIST_TASKS_DEFAULT_PAGE_SIZE = 50;

export const ListTasksRequestSchema = request({
  tenant: tenant(),
  contextId: optionalString('contextId'),
  status: z.enum(TASK_STATES, fieldError('status', 'a task state such as TASK_STATE_WORKING')).optional(),
  pageSize: z
    .int(fieldError('pageSize', 'an integer'))
    .min(1, { error: 'pageSize must be between 1 and 100' })
    .max(100, { error: 'pageSize must be between 1 and 100' })
    .optional(),
  pageToken: optionalString('pageToken'),
  historyLength: historyLength(),
  statusTimestampAfter: z.iso.datetime({ offset: true, ...fieldError('statusTimestampAfter', 'an RFC 3339 timestamp') }).optional(),
  includeArtifacts: optionalBoolean('includeArtifacts'),
});
export type ListTasksRequest = z.infer<typeof ListTasksRequestSchema>;

/** All four fields are always emitted, even when empty or zero. */
export const ListTasksResponseSchema = z.object({
  tasks: z.array(TaskSchema),
  nextPageToken: z.string(),
  pageSize: z.int(),
  totalSize: z.int(),
});
export type ListTasksResponse = z.infer<typeof ListTasksResponseSchema>;

export const CancelTaskRequestSchema = request({
  tenant: tenant(),
  id: requiredString('id'),
  metadata: optionalMetadata(),
});
export type CancelTaskRequest = z.infer<typeof CancelTaskRequestSchema>;

export const SubscribeToTaskRequestSchema = request({
  tenant: tenant(),
  id: requiredString('id'),
});
export type SubscribeToTaskRequest = z.infer<typeof SubscribeToTaskRequestSchema>;

// Push notification configs

/** Params of CreateTaskPushNotificationConfig: the flat config, with the task named. */
export const CreateTaskPushNotificationConfigRequestSchema = request({
  ...TaskPushNotificationConfigSchema.shape,
  taskId: requiredString('taskId'),
});
export type CreateTaskPushNotificationConfigRequest = z.infer<typeof CreateTaskPushNotificationConfigRequestSchema>;

const pushConfigRefShape = { tenant: tenant(), taskId: requiredString('taskId'), id: requiredString('id') };

export const GetTaskPushNotificationConfigRequestSchema = request(pushConfigRefShape);
export type GetTaskPushNotificationConfigRequest = z.infer<typeof GetTaskPushNotificationConfigRequestSchema>;

export const DeleteTaskPushNotificationConfigRequestSchema = request(pushConfigRefShape);
export type DeleteTaskPushNotificationConfigRequest = z.infer<typeof DeleteTaskPushNotificationConfigRequestSchema>;

export const ListTaskPushNotificationConfigsRequestSchema = request({
  tenant: tenant(),
  taskId: requiredString('taskId'),
  pageSize: optionalNonNegativeInt32('pageSize'),
  pageToken: optionalString('pageToken'),
});
export type ListTaskPushNotificationConfigsRequest = z.infer<typeof ListTaskPushNotificationConfigsRequestSchema>;

export const ListTaskPushNotificationConfigsResponseSchema = z.object({
  configs: z.array(TaskPushNotificationConfigSchema),
  nextPageToken: z.string().optional(),
});
export type ListTaskPushNotificationConfigsResponse = z.infer<typeof ListTaskPushNotificationConfigsResponseSchema>;

// Extended agent card

/** Params may be omitted entirely for this method; absent params parse as `{}`. */
export const GetExtendedAgentCardRequestSchema = request({
  tenant: tenant(),
}).default(() => ({}));
export type GetExtendedAgentCardRequest = z.infer<typeof GetExtendedAgentCardRequestSchema>;
