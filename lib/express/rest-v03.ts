/**
 * The HTTP+JSON binding's v0.3 codec (compatibility): the `/v1/...` routes of a request served as
 * 0.3 (see the router). Bodies and answers are the ProtoJSON of the v0.3 proto, what the official
 * v0.3 clients speak (lib/protocol/v0_3/rest.ts); in between, the same v0.3 params schemas and
 * translations as v0.3 JSON-RPC, and the same request handler as every other route.
 */
import type { Request, Response } from 'express';
import { runWithA2AContext } from '../context/carrier.js';
import { A2AError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AgentCardInput } from '../protocol/card.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { parseParams } from '../protocol/jsonrpc.js';
import { pathSegment, queryParams, type RestMatch, type RestOperation } from '../protocol/rest.js';
import type { StreamResponse } from '../protocol/schemas.js';
import { fromV03RestSendMessageRequest, toV03RestSendResult, toV03RestStreamResponse, toV03RestTask, v03RestErrorBody } from '../protocol/v0_3/rest.js';
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
import type { A2ARequestHandler, CallContext, StreamObserver } from '../engine/request-handler.js';
import { writeError } from './error-writer.js';
import type { CallContextHook } from './jsonrpc-route.js';
import { activate, callOf } from './request-call.js';
import { writeJson } from './respond.js';
import type { SseLimits } from './sse.js';
import { serveStream, type StreamEncoding, type StreamSettings } from './stream.js';

export interface V03RestRouteOptions {
  readonly handler: A2ARequestHandler;
  readonly logger: Logger;
  readonly extensions: ExtensionNegotiator;
  readonly streamLimits: SseLimits;
  readonly callContext?: CallContextHook;
  /** The extended card as `GET /v1/card` serves it (the v0.3 proto's ProtoJSON). */
  readonly presentCard: (req: Request, card: AgentCardInput) => object | Promise<object>;
  /** Whether push notifications are configured; if not, the push routes answer PushNotificationNotSupported. */
  readonly pushNotifications?: boolean;
}

/** What a v0.3 REST request reads: its path's task id (and push config id), its query string, its body. */
interface Input {
  readonly id: string | undefined;
  readonly configId: string | undefined;
  readonly query: string;
  readonly body: unknown;
}

type Unary = { read: (input: Input) => unknown; run: (call: CallContext, params: never, req: Request) => Promise<unknown> };
type Streaming = { read: (input: Input) => unknown; open: (call: CallContext, params: never, observer: StreamObserver) => Promise<() => void>; streams: StreamSettings };

const PUSH_OPERATIONS: ReadonlySet<RestOperation> = new Set([
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
]);

/** Answers are `application/json`, as v0.3 defined them (`application/a2a+json` is 1.0's). */
const V03_JSON = 'application/json';

/** v0.3 StreamResponses (`final` per `rule`), and a final `event: error` with the v0.3 error body. */
function v03RestEncoding(rule: FinalRule): StreamEncoding {
  return {
    binding: 'rest-v0.3',
    event: (_id, event) => JSON.stringify(toV03RestStreamResponse(toV03StreamEvent(event as StreamResponse, rule))),
    error: (_id, error) => JSON.stringify(v03RestErrorBody(toV03Error(error))),
  };
}

/** A thrown value as a v0.3 client is answered (VersionNotSupported stays -32009: it is told in 1.0 terms). */
const v03Error = (error: unknown): unknown => (error instanceof A2AError && error.kind !== 'VersionNotSupported' ? toV03Error(error) : error);

/** The query string of `req` (below the mount), without the `?`. */
function queryOf(req: Request): string {
  const url = req.url;
  const start = url.indexOf('?');
  return start === -1 ? '' : url.slice(start + 1);
}

const taskId = (input: Input) => ({ id: input.id });

export function v03RestRoute(options: V03RestRouteOptions): (req: Request, res: Response, match: RestMatch) => Promise<void> {
  const { handler, logger, extensions, streamLimits, callContext, presentCard } = options;

  const unary: Partial<Record<RestOperation, Unary>> = {
    SendMessage: {
      read: (input) => parseParams(V03MessageSendParamsSchema, fromV03RestSendMessageRequest(input.body)),
      run: async (call, p) => toV03RestSendResult(toV03SendResult(await handler.sendMessage(call, toV1SendMessageRequest(p)))),
    },
    GetTask: {
      // `historyLength` (or `history_length`) from the query; v0.3 has no other GetTask parameter.
      read: (input) => parseParams(V03TaskQueryParamsSchema, { historyLength: queryParams('GetTask', input.query).historyLength, id: input.id }),
      run: async (call, p) => toV03RestTask(toV03Task(await handler.getTask(call, toV1GetTaskRequest(p)))),
    },
    // The v0.3 proto's CancelTaskRequest has the task's name only: a body is ignored.
    CancelTask: { read: taskId, run: async (call, p) => toV03RestTask(toV03Task(await handler.cancelTask(call, toV1CancelTaskRequest(p)))) },
    GetExtendedAgentCard: { read: () => undefined, run: async (call, _p, req) => presentCard(req, await handler.getExtendedAgentCard(call)) },
    // Push configs: the v0.3 proto's TaskPushNotificationConfig (`{name, pushNotificationConfig}`) in and out.
    CreateTaskPushNotificationConfig: {
      read: (input) => parseParams(V03TaskPushNotificationConfigSchema, fromV03RestPushConfigBody(input.body ?? {}, input.id!)),
      run: async (call, p) => toV03RestPushConfig(await handler.createTaskPushNotificationConfig(call, toV1CreatePushConfigRequest(p), '0.3')),
    },
    GetTaskPushNotificationConfig: {
      read: (input) => ({ taskId: input.id!, id: input.configId! }),
      run: async (call, p) => toV03RestPushConfig(await handler.getTaskPushNotificationConfig(call, p)),
    },
    ListTaskPushNotificationConfigs: {
      read: (input) => ({ taskId: input.id! }),
      run: async (call, p) => ({ configs: (await handler.listTaskPushNotificationConfigs(call, p)).configs.map(toV03RestPushConfig) }),
    },
    DeleteTaskPushNotificationConfig: {
      read: (input) => ({ taskId: input.id!, id: input.configId! }),
      run: async (call, p) => (await handler.deleteTaskPushNotificationConfig(call, p), {}),
    },
  };
  const streaming: Partial<Record<RestOperation, Streaming>> = {
    // A message:stream stream ends with the turn (terminal or interrupted); a subscription at a terminal state.
    SendStreamingMessage: {
      read: unary.SendMessage!.read,
      open: (call, p, observer) => handler.sendStreamingMessage(call, toV1SendMessageRequest(p), observer),
      streams: { encoding: v03RestEncoding('turn'), limits: streamLimits, logger },
    },
    SubscribeToTask: {
      read: taskId,
      open: (call, p, observer) => handler.subscribeToTask(call, toV1SubscribeToTaskRequest(p), observer),
      streams: { encoding: v03RestEncoding('terminal'), limits: streamLimits, logger },
    },
  };

  const pushOn = options.pushNotifications === true;

  return async function a2aRestV03(req: Request, res: Response, match: RestMatch): Promise<void> {
    try {
      const active = activate(req, res, extensions, '0.3');
      const operation = match.operation;
      if (!pushOn && PUSH_OPERATIONS.has(operation)) throw new A2AError('PushNotificationNotSupported');
      const input: Input = {
        id: match.taskId === undefined ? undefined : pathSegment(match.taskId, 'id'),
        configId: match.configId === undefined ? undefined : pathSegment(match.configId, 'pushNotificationConfigId'),
        query: match.hasBody ? '' : queryOf(req),
        body: match.hasBody ? req.body : undefined,
      };
      const unaryOperation = unary[operation];
      const streamingOperation = unaryOperation ? undefined : streaming[operation]!;
      const params = (unaryOperation ?? streamingOperation!).read(input);
      // v0.3 requests state no tenant: the resolved one (if any) applies.
      const call = callOf(req, res, callContext ? await callContext(req) : undefined, undefined, active);
      if (streamingOperation) {
        return await serveStream(req, res, streamingOperation.streams, null, call, streamingOperation.open, params as never);
      }
      const result = await runWithA2AContext(call.requestContext, () => unaryOperation!.run(call, params as never, req));
      writeJson(res, 200, JSON.stringify(result), V03_JSON);
    } catch (error) {
      writeError(req, res, v03Error(error), 'rest-v0.3', null, logger);
    }
  };
}
