/** The HTTP+JSON codec, v0.3 (compatibility): the `/v1/...` routes of a request served as 0.3 (see the dispatcher). */
import type { Request } from 'express';
import { writeError, writeJson } from '../context/reply.js';
import { A2AError } from '../errors.js';
import type { Logger } from '../options.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { parseParams } from '../protocol/jsonrpc.js';
import { pathSegment, queryParams, type RestMatch } from '../protocol/rest.js';
import type { ListTaskPushNotificationConfigsResponse } from '../protocol/requests.js';
import type { StreamResponse, TaskPushNotificationConfig } from '../protocol/schemas.js';
import {
  fromV03RestSendMessageRequest,
  toV03RestSendResult,
  toV03RestStreamResponse,
  toV03RestTask,
  v03RestErrorBody,
} from '../protocol/v0_3/rest.js';
import { V03MessageSendParamsSchema, V03TaskQueryParamsSchema } from '../protocol/v0_3/schemas.js';
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
  V03TaskPushNotificationConfigSchema,
  fromV03RestPushConfigBody,
  toV03RestPushConfig,
  toV1CreatePushConfigRequest,
  toV1SendMessageRequestMarked as toV1SendMessageRequest,
} from '../protocol/v0_3/push.js';
import { activate, queryOf } from './negotiate.js';
import { OPERATIONS, type A2AMethod, type PresentCard } from './operations.js';
import type { Codec, Plan } from './serve.js';
import type { SseLimits } from './sse.js';
import type { StreamEncoding } from './stream.js';
import { v03Error } from './v03-jsonrpc.js';

interface V03RestCodecOptions {
  readonly extensions: ExtensionNegotiator;
  readonly streamLimits: SseLimits;
  readonly logger: Logger;
  /** The extended card as `GET /v1/card` serves it (the v0.3 proto's ProtoJSON). */
  readonly presentCard: PresentCard;
}

/** What a v0.3 REST request reads: its path's task id (and push config id), its query string, its body. */
interface Input {
  readonly id: string | undefined;
  readonly configId: string | undefined;
  readonly query: string;
  readonly body: unknown;
}

function inputOf(req: Request, match: RestMatch): Input {
  return {
    id: match.taskId === undefined ? undefined : pathSegment(match.taskId, 'id'),
    configId: match.configId === undefined ? undefined : pathSegment(match.configId, 'pushNotificationConfigId'),
    query: match.hasBody ? '' : queryOf(req),
    body: match.hasBody ? req.body : undefined,
  };
}

/** Answers are `application/json`, as v0.3 defined them (`application/a2a+json` is 1.0's). */
const V03_JSON = 'application/json';

/** v0.3 StreamResponses (`final` per `rule`), and a final `event: error` with the v0.3 error body. */
function v03RestEncoding(rule: FinalRule): StreamEncoding {
  return {
    binding: 'rest-v0.3',
    payload: (event) => JSON.stringify(toV03RestStreamResponse(toV03StreamEvent(event as StreamResponse, rule))),
    error: (_id, error) => JSON.stringify(v03RestErrorBody(toV03Error(error))),
  };
}

type V03Plan = Plan<RestMatch>;

function plan(method: A2AMethod, read: (input: Input) => unknown, more: Omit<V03Plan, 'operation' | 'read'> = {}): V03Plan {
  return { operation: OPERATIONS[method], read: (req, match) => read(inputOf(req, match)), ...more };
}

const sendParams = (input: Input) => toV1SendMessageRequest(parseParams(V03MessageSendParamsSchema, fromV03RestSendMessageRequest(input.body)));
const asTask = (result: unknown) => toV03RestTask(toV03Task(result as never));
const asConfig = (result: unknown) => toV03RestPushConfig(result as TaskPushNotificationConfig);
const configParams = (input: Input) => ({ taskId: input.id!, id: input.configId! });

/**
 * Bodies and answers are the ProtoJSON of the v0.3 proto, what the official v0.3 clients speak (lib/protocol/v0_3/rest.ts); in between, the same v0.3
 * params schemas and translations as v0.3 JSON-RPC, and the same operation table as every other codec.
 */
export function v03RestCodec(options: V03RestCodecOptions): Codec<RestMatch> {
  const { extensions, streamLimits, logger } = options;
  const plans: Partial<Record<A2AMethod, V03Plan>> = {
    SendMessage: plan('SendMessage', sendParams, { present: (r) => toV03RestSendResult(toV03SendResult(r as never)) }),
    // `historyLength` (or `history_length`) from the query; v0.3 has no other GetTask parameter.
    GetTask: plan(
      'GetTask',
      (input) =>
        toV1GetTaskRequest(parseParams(V03TaskQueryParamsSchema, { historyLength: queryParams('GetTask', input.query).historyLength, id: input.id })),
      { present: asTask },
    ),
    // The v0.3 proto's CancelTaskRequest has the task's name only: a body is ignored.
    CancelTask: plan('CancelTask', (input) => toV1CancelTaskRequest({ id: input.id! }), { present: asTask }),
    GetExtendedAgentCard: plan('GetExtendedAgentCard', () => ({})),
    // Push configs: the v0.3 proto's TaskPushNotificationConfig (`{name, pushNotificationConfig}`) in and out.
    CreateTaskPushNotificationConfig: plan(
      'CreateTaskPushNotificationConfig',
      (input) =>
        toV1CreatePushConfigRequest(parseParams(V03TaskPushNotificationConfigSchema, fromV03RestPushConfigBody(input.body ?? {}, input.id!))),
      { present: asConfig },
    ),
    GetTaskPushNotificationConfig: plan('GetTaskPushNotificationConfig', configParams, { present: asConfig }),
    ListTaskPushNotificationConfigs: plan('ListTaskPushNotificationConfigs', (input) => ({ taskId: input.id! }), {
      present: (r) => ({ configs: (r as ListTaskPushNotificationConfigsResponse).configs.map(toV03RestPushConfig) }),
    }),
    DeleteTaskPushNotificationConfig: plan('DeleteTaskPushNotificationConfig', configParams, { present: () => ({}) }),
    // A message:stream stream ends with the turn (terminal or interrupted); a subscription at a terminal state.
    SendStreamingMessage: plan('SendStreamingMessage', sendParams, { stream: { encoding: v03RestEncoding('turn'), limits: streamLimits, logger } }),
    SubscribeToTask: plan('SubscribeToTask', (input) => toV1SubscribeToTaskRequest({ id: input.id! }), {
      stream: { encoding: v03RestEncoding('terminal'), limits: streamLimits, logger },
    }),
  };
  return {
    version: '0.3',
    presentCard: options.presentCard,
    statesTenant: false,
    head: (_req, match) => match!,
    idOf: () => null,
    negotiate: (req, res) => activate(req, res, extensions, '0.3'),
    plan: (match) => plans[match.operation],
    // The dispatcher matches v0.3 routes only (v0.3 has no ListTasks).
    unknownMethod: (match) => new A2AError('MethodNotFound', `Method not found: ${match.operation}`),
    writeResult: (res, _id, result) => writeJson(res, 200, JSON.stringify(result), V03_JSON),
    writeError: (req, res, thrown) => writeError(req, res, v03Error(thrown), 'rest-v0.3', null, logger),
  };
}
