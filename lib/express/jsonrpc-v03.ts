/**
 * The JSON-RPC binding's v0.3 codec (compatibility): v0.3 method names and params in, translated to
 * v1.0 for the same request handler, and its results, stream events and errors translated back
 * (lib/protocol/v0_3). Chosen by the JSON-RPC route for a request served with version 0.3.
 */
import { A2AError } from '../errors.js';
import type { Logger } from '../logger.js';
import { errorResponse, successResponse } from '../protocol/jsonrpc.js';
import type { StreamResponse } from '../protocol/schemas.js';
import {
  V03MessageSendParamsSchema,
  V03NoParamsSchema,
  V03TaskIdParamsSchema,
  V03TaskQueryParamsSchema,
} from '../protocol/v0_3/schemas.js';
import {
  toV03Error,
  toV03SendResult,
  toV03StreamEvent,
  toV03Task,
  toV1CancelTaskRequest,
  toV1GetTaskRequest,
  toV1SubscribeToTaskRequest,
  type FinalRule,
} from '../protocol/v0_3/translate.js';
import {
  V03DeletePushConfigParamsSchema,
  V03GetPushConfigParamsSchema,
  V03ListPushConfigParamsSchema,
  type V03GetPushConfigParams,
  type V03ListPushConfigParams,
  V03TaskPushNotificationConfigSchema,
  toV03TaskPushNotificationConfig,
  toV1CreatePushConfigRequest,
  toV1DeletePushConfigRequest,
  toV1GetPushConfigRequest,
  toV1SendMessageRequestMarked as toV1SendMessageRequest,
} from '../protocol/v0_3/push.js';
import { taskNotFound } from '../errors.js';
import type { A2ARequestHandler } from '../engine/request-handler.js';
import type { JsonRpcCodec, PresentCard, Streaming, Unary } from './jsonrpc-route.js';
import type { SseLimits } from './sse.js';
import type { StreamEncoding, StreamSettings } from './stream.js';

const V03_PUSH_METHODS: ReadonlySet<string> = new Set([
  'tasks/pushNotificationConfig/set',
  'tasks/pushNotificationConfig/get',
  'tasks/pushNotificationConfig/list',
  'tasks/pushNotificationConfig/delete',
]);

/** v0.3 SSE frames: each event a v0.3 object (`final` per `rule`), errors with v0.3 codes. */
function v03Encoding(rule: FinalRule): StreamEncoding {
  return {
    binding: 'jsonrpc',
    event: (id, event) => successResponse(id, toV03StreamEvent(event as StreamResponse, rule)),
    error: (id, error) => errorResponse(id, toV03Error(error)),
  };
}

export interface V03CodecOptions {
  readonly handler: A2ARequestHandler;
  readonly logger: Logger;
  readonly streamLimits: SseLimits;
  readonly presentCard: PresentCard;
  /** The v1.0 method names: one of them without a version header is a 1.0 client that forgot it. */
  readonly v1Methods: ReadonlySet<string>;
}

export function v03JsonRpcCodec(options: V03CodecOptions): JsonRpcCodec {
  const { handler, logger, streamLimits, presentCard, v1Methods } = options;
  // A message/stream ends with the turn (terminal or interrupted); a resubscribe at a terminal state.
  const sendStream: StreamSettings = { encoding: v03Encoding('turn'), limits: streamLimits, logger };
  const resubscribeStream: StreamSettings = { encoding: v03Encoding('terminal'), limits: streamLimits, logger };

  const unary: Record<string, Unary> = {
    'message/send': {
      schema: V03MessageSendParamsSchema,
      run: async (call, p) => toV03SendResult(await handler.sendMessage(call, toV1SendMessageRequest(p))),
    },
    'tasks/get': { schema: V03TaskQueryParamsSchema, run: async (call, p) => toV03Task(await handler.getTask(call, toV1GetTaskRequest(p))) },
    'tasks/cancel': { schema: V03TaskIdParamsSchema, run: async (call, p) => toV03Task(await handler.cancelTask(call, toV1CancelTaskRequest(p))) },
    'tasks/pushNotificationConfig/set': {
      schema: V03TaskPushNotificationConfigSchema,
      run: async (call, p) => toV03TaskPushNotificationConfig(await handler.createTaskPushNotificationConfig(call, toV1CreatePushConfigRequest(p), '0.3')),
    },
    'tasks/pushNotificationConfig/get': {
      schema: V03GetPushConfigParamsSchema,
      run: async (call, p: V03GetPushConfigParams) => {
        if (p.pushNotificationConfigId) {
          return toV03TaskPushNotificationConfig(await handler.getTaskPushNotificationConfig(call, toV1GetPushConfigRequest({ id: p.id, pushNotificationConfigId: p.pushNotificationConfigId })));
        }
        // v0.3 also accepts the task's id alone (TaskIdParams): its first config.
        const { configs } = await handler.listTaskPushNotificationConfigs(call, { taskId: p.id, pageSize: 1 });
        if (configs.length === 0) throw taskNotFound(p.id);
        return toV03TaskPushNotificationConfig(configs[0]);
      },
    },
    // v0.3 answers a bare array (no paging).
    'tasks/pushNotificationConfig/list': {
      schema: V03ListPushConfigParamsSchema,
      run: async (call, p: V03ListPushConfigParams) => (await handler.listTaskPushNotificationConfigs(call, { taskId: p.id })).configs.map(toV03TaskPushNotificationConfig),
    },
    'tasks/pushNotificationConfig/delete': {
      schema: V03DeletePushConfigParamsSchema,
      run: async (call, p) => (await handler.deleteTaskPushNotificationConfig(call, toV1DeletePushConfigRequest(p)), null),
    },
    // The served card carries the v0.3 fields itself (see presentCard).
    'agent/getAuthenticatedExtendedCard': { schema: V03NoParamsSchema, run: async (call, _p, req) => presentCard(req, await handler.getExtendedAgentCard(call)) },
  };
  const streaming: Record<string, Streaming> = {
    'message/stream': {
      schema: V03MessageSendParamsSchema,
      open: (call, p, observer) => handler.sendStreamingMessage(call, toV1SendMessageRequest(p), observer),
      streams: sendStream,
    },
    'tasks/resubscribe': {
      schema: V03TaskIdParamsSchema,
      open: (call, p, observer) => handler.subscribeToTask(call, toV1SubscribeToTaskRequest(p), observer),
      streams: resubscribeStream,
    },
  };

  return {
    version: '0.3',
    unary,
    streaming,
    push: V03_PUSH_METHODS,
    unknownMethod(method) {
      if (v1Methods.has(method)) {
        // Told in 1.0 terms (-32009): the method names which version the client meant.
        return new A2AError('VersionNotSupported', `${method} is an A2A 1.0 method, but this request is served as 0.3 (it states no A2A-Version, or 0.3): send the header A2A-Version: 1.0`, {
          metadata: { requestedVersion: '', supportedVersions: '1.0, 0.3' },
        });
      }
      return new A2AError('MethodNotFound', `Method not found: ${method}`);
    },
    error: (error) => (error instanceof A2AError && error.kind !== 'VersionNotSupported' ? toV03Error(error) : error),
  };
}
