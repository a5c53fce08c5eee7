/** v0.3 push configs (nested, several schemes) to the flat v1.0 requests and back, for JSON-RPC and v0.3 REST bodies. */
import { z } from 'zod';
import { invalidParams } from '../../errors.js';
import type {
  CreateTaskPushNotificationConfigRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetTaskPushNotificationConfigRequest,
  SendMessageRequest,
} from '../requests.js';
import { fieldError, optionalMetadata, requiredString, type TaskPushNotificationConfig } from '../schemas.js';
import { V03PushNotificationConfigSchema, V03TaskIdParamsSchema, type V03MessageSendParams, type V03PushNotificationConfig } from './schemas.js';
import { toV1PushConfig, toV1SendMessageRequest } from './translate.js';

// Params (JSON-RPC)

/** `tasks/pushNotificationConfig/set` params: the v0.3 TaskPushNotificationConfig. */
export const V03TaskPushNotificationConfigSchema = z.object(
  { taskId: requiredString('taskId'), pushNotificationConfig: V03PushNotificationConfigSchema },
  fieldError('params', 'a JSON object'),
);
type V03TaskPushNotificationConfig = z.infer<typeof V03TaskPushNotificationConfigSchema>;

/** `tasks/pushNotificationConfig/get` params: without a config id, the task's first config is meant. */
export const V03GetPushConfigParamsSchema = z.object(
  {
    id: requiredString('id'),
    pushNotificationConfigId: z.string(fieldError('pushNotificationConfigId', 'a string')).optional(),
    metadata: optionalMetadata(),
  },
  fieldError('params', 'a JSON object'),
);

/** `tasks/pushNotificationConfig/list` params: the task's id (and metadata), as `tasks/cancel` takes. */
export const V03ListPushConfigParamsSchema = V03TaskIdParamsSchema;

export const V03DeletePushConfigParamsSchema = z.object(
  { id: requiredString('id'), pushNotificationConfigId: requiredString('pushNotificationConfigId'), metadata: optionalMetadata() },
  fieldError('params', 'a JSON object'),
);
type V03DeletePushConfigParams = z.infer<typeof V03DeletePushConfigParamsSchema>;

// v0.3 → v1.0

export function toV1CreatePushConfigRequest(params: V03TaskPushNotificationConfig): CreateTaskPushNotificationConfigRequest {
  return { ...toV1PushConfig(params.pushNotificationConfig), taskId: params.taskId };
}

export function toV1GetPushConfigRequest(params: { id: string; pushNotificationConfigId: string }): GetTaskPushNotificationConfigRequest {
  return { taskId: params.id, id: params.pushNotificationConfigId };
}

export function toV1DeletePushConfigRequest(params: V03DeletePushConfigParams): DeleteTaskPushNotificationConfigRequest {
  return { taskId: params.id, id: params.pushNotificationConfigId };
}

/** Inline configs sent in v0.3 shape, marked: their deliveries keep the v0.3 body, and v1.0 has no field for it. */
const V03_REGISTERED = new WeakSet<object>();

/** Whether `config` (an inline config of a SendMessageRequest) was sent by a v0.3 client. */
export const registeredByV03 = (config: object): boolean => V03_REGISTERED.has(config);

/** `message/send` params as v1.0 (see toV1SendMessageRequest), an inline push config marked as v0.3. */
export function toV1SendMessageRequestMarked(params: V03MessageSendParams): SendMessageRequest {
  const request = toV1SendMessageRequest(params);
  const inline = request.configuration?.taskPushNotificationConfig;
  if (inline) V03_REGISTERED.add(inline);
  return request;
}

// v1.0 → v0.3 (answers)

function toV03PushNotificationConfig(config: TaskPushNotificationConfig): V03PushNotificationConfig {
  const auth = config.authentication;
  return {
    ...(config.id ? { id: config.id } : {}),
    url: config.url,
    ...(config.token ? { token: config.token } : {}),
    ...(auth ? { authentication: { schemes: [auth.scheme], ...(auth.credentials ? { credentials: auth.credentials } : {}) } } : {}),
  };
}

export function toV03TaskPushNotificationConfig(config: TaskPushNotificationConfig): V03TaskPushNotificationConfig {
  return { taskId: config.taskId ?? '', pushNotificationConfig: toV03PushNotificationConfig(config) };
}

// v0.3 REST (ProtoJSON of the v0.3 proto)

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A proto3 string: '' is unset. */
const setString = (value: unknown): unknown => (value === '' ? undefined : value);

const field = (object: Record<string, unknown>, name: string, protoName: string): unknown => object[name] ?? object[protoName];

/** `POST /v1/tasks/{id}/pushNotificationConfigs` as `set` params: `{name, pushNotificationConfig}` or `{parent, configId, config}`. */
export function fromV03RestPushConfigBody(body: unknown, taskId: string): unknown {
  if (!isObject(body)) throw invalidParams([{ field: 'body', description: 'must be a JSON object' }]);
  const wrapped = isObject(body.config) ? body.config : undefined;
  const holder = wrapped ?? body;
  const config = field(holder, 'pushNotificationConfig', 'push_notification_config');
  if (!isObject(config)) return { taskId, pushNotificationConfig: config }; // zod names what is missing
  const out: Record<string, unknown> = { url: config.url };
  const id = setString(config.id) ?? (wrapped ? setString(field(body, 'configId', 'config_id')) : undefined);
  if (id !== undefined) out.id = id;
  const token = setString(config.token);
  if (token !== undefined) out.token = token;
  const auth = config.authentication;
  if (isObject(auth)) {
    const credentials = setString(auth.credentials);
    out.authentication = { schemes: auth.schemes ?? [], ...(credentials !== undefined ? { credentials } : {}) };
  } else if (auth !== undefined && auth !== null) {
    out.authentication = auth;
  }
  return { taskId, pushNotificationConfig: out };
}

/** A config as the v0.3 proto's TaskPushNotificationConfig in ProtoJSON (`name` = `tasks/{t}/pushNotificationConfigs/{id}`). */
export function toV03RestPushConfig(config: TaskPushNotificationConfig): Record<string, unknown> {
  return {
    name: `tasks/${config.taskId ?? ''}/pushNotificationConfigs/${config.id ?? ''}`,
    pushNotificationConfig: toV03PushNotificationConfig(config),
  };
}
