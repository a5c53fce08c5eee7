/**
 * The JSON-RPC codec, v0.3 (compatibility): v0.3 method names and params in, translated to the v1.0 params of the operation table's rows, and their
 * results, stream events and errors translated back (lib/protocol/v0_3). Chosen for a request served with version 0.3.
 */
import type { z } from 'zod';
import { A2AError, taskNotFound } from '../errors.js';
import type { Logger } from '../options.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { withJsonNames } from '../protocol/field-names.js';
import { errorResponse, parseParams, type JsonRpcRequest } from '../protocol/jsonrpc.js';
import type { ListTaskPushNotificationConfigsResponse } from '../protocol/requests.js';
import type { StreamResponse, TaskPushNotificationConfig } from '../protocol/schemas.js';
import { V03MessageSendParamsSchema, V03NoParamsSchema, V03TaskIdParamsSchema, V03TaskQueryParamsSchema } from '../protocol/v0_3/schemas.js';
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
  V03TaskPushNotificationConfigSchema,
  toV03TaskPushNotificationConfig,
  toV1CreatePushConfigRequest,
  toV1DeletePushConfigRequest,
  toV1GetPushConfigRequest,
  toV1SendMessageRequestMarked as toV1SendMessageRequest,
} from '../protocol/v0_3/push.js';
import { jsonRpcEventEnvelope, readHead, writeJsonRpcError, writeJsonRpcResult } from './jsonrpc.js';
import { activate } from './negotiate.js';
import { OPERATIONS, type A2AMethod, type PresentCard } from './operations.js';
import type { Codec, Plan } from './serve.js';
import type { SseLimits } from './sse.js';
import type { StreamEncoding, StreamSettings } from './stream.js';

interface V03JsonRpcCodecOptions {
  readonly extensions: ExtensionNegotiator;
  readonly streamLimits: SseLimits;
  readonly logger: Logger;
  readonly presentCard: PresentCard;
}

type V03Plan = Plan<JsonRpcRequest>;

/** v0.3 SSE frames: each event a v0.3 object (`final` per `rule`), errors with v0.3 codes. */
function v03Encoding(rule: FinalRule): StreamEncoding {
  return {
    binding: 'jsonrpc',
    payload: (event) => JSON.stringify(toV03StreamEvent(event as StreamResponse, rule)),
    envelope: jsonRpcEventEnvelope,
    error: (id, error) => errorResponse(id, toV03Error(error)),
  };
}

/** A plan whose params are `schema`'s (v0.3), made v1.0 by `toV1`. */
function plan<P>(method: A2AMethod, schema: z.ZodType<P>, toV1: (params: P) => unknown, more: Omit<V03Plan, 'operation' | 'read'> = {}): V03Plan {
  return { operation: OPERATIONS[method], read: (_req, head) => toV1(parseParams(schema, withJsonNames(head.method, head.params))), ...more };
}

/** v0.3's get of a task's config by the task's id alone (TaskIdParams): its first config. */
const FIRST_CONFIG: V03Plan = {
  operation: OPERATIONS.ListTaskPushNotificationConfigs,
  read: () => undefined,
  present: (result, params) => {
    const { configs } = result as ListTaskPushNotificationConfigsResponse;
    if (configs.length === 0) throw taskNotFound((params as { taskId: string }).taskId);
    return toV03TaskPushNotificationConfig(configs[0]);
  },
};

const toV03Config = (result: unknown) => toV03TaskPushNotificationConfig(result as TaskPushNotificationConfig);

export function v03JsonRpcCodec(options: V03JsonRpcCodecOptions): Codec<JsonRpcRequest> {
  const { extensions, streamLimits, logger } = options;
  // A message/stream ends with the turn (terminal or interrupted); a resubscribe at a terminal state.
  const sendStream: StreamSettings = { encoding: v03Encoding('turn'), limits: streamLimits, logger };
  const resubscribeStream: StreamSettings = { encoding: v03Encoding('terminal'), limits: streamLimits, logger };
  const plans = new Map<string, V03Plan>([
    ['message/send', plan('SendMessage', V03MessageSendParamsSchema, toV1SendMessageRequest, { present: (r) => toV03SendResult(r as never) })],
    ['tasks/get', plan('GetTask', V03TaskQueryParamsSchema, toV1GetTaskRequest, { present: (r) => toV03Task(r as never) })],
    ['tasks/cancel', plan('CancelTask', V03TaskIdParamsSchema, toV1CancelTaskRequest, { present: (r) => toV03Task(r as never) })],
    [
      'tasks/pushNotificationConfig/set',
      plan('CreateTaskPushNotificationConfig', V03TaskPushNotificationConfigSchema, toV1CreatePushConfigRequest, { present: toV03Config }),
    ],
    [
      'tasks/pushNotificationConfig/get',
      plan(
        'GetTaskPushNotificationConfig',
        V03GetPushConfigParamsSchema,
        (p) =>
          p.pushNotificationConfigId
            ? toV1GetPushConfigRequest({ id: p.id, pushNotificationConfigId: p.pushNotificationConfigId })
            : { taskId: p.id, pageSize: 1 },
        { present: toV03Config, reroute: (params) => ('pageSize' in (params as object) ? FIRST_CONFIG : undefined) },
      ),
    ],
    // v0.3 answers a bare array (no paging).
    [
      'tasks/pushNotificationConfig/list',
      plan('ListTaskPushNotificationConfigs', V03ListPushConfigParamsSchema, (p) => ({ taskId: p.id }), {
        present: (r) => (r as ListTaskPushNotificationConfigsResponse).configs.map(toV03TaskPushNotificationConfig),
      }),
    ],
    [
      'tasks/pushNotificationConfig/delete',
      plan('DeleteTaskPushNotificationConfig', V03DeletePushConfigParamsSchema, toV1DeletePushConfigRequest, { present: () => null }),
    ],
    // The served card carries the v0.3 fields itself (see presentCard).
    ['agent/getAuthenticatedExtendedCard', plan('GetExtendedAgentCard', V03NoParamsSchema, () => ({}))],
    ['message/stream', plan('SendStreamingMessage', V03MessageSendParamsSchema, toV1SendMessageRequest, { stream: sendStream })],
    ['tasks/resubscribe', plan('SubscribeToTask', V03TaskIdParamsSchema, toV1SubscribeToTaskRequest, { stream: resubscribeStream })],
  ]);
  return {
    version: '0.3',
    presentCard: options.presentCard,
    statesTenant: false,
    head: readHead,
    idOf: (head) => head.id,
    negotiate: (req, res) => activate(req, res, extensions, '0.3'),
    plan: (head) => plans.get(head.method),
    unknownMethod: (head) => v03UnknownMethod(head.method),
    writeResult: writeJsonRpcResult,
    writeError: (req, res, thrown, id) => writeJsonRpcError(req, res, v03Error(thrown), id, logger),
  };
}

/** A thrown value as a v0.3 client is answered (VersionNotSupported stays -32009: it is told in 1.0 terms). */
export const v03Error = (error: unknown): unknown => (error instanceof A2AError && error.kind !== 'VersionNotSupported' ? toV03Error(error) : error);

/** A method v0.3 does not have: a v1.0 name sent without a version header is a 1.0 client that forgot it. */
function v03UnknownMethod(method: string): A2AError {
  if (Object.hasOwn(OPERATIONS, method)) {
    // Told in 1.0 terms (-32009): the method names which version the client meant.
    return new A2AError(
      'VersionNotSupported',
      `${method} is an A2A 1.0 method, but this request is served as 0.3 (it states no A2A-Version, or 0.3): send the header A2A-Version: 1.0`,
      {
        metadata: { requestedVersion: '', supportedVersions: '1.0, 0.3' },
      },
    );
  }
  return new A2AError('MethodNotFound', `Method not found: ${method}`);
}
