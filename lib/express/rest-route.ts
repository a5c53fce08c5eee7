/**
 * The HTTP+JSON binding (§11), a thin mapping like the JSON-RPC route: the router matched the
 * operation from the method and path; params come from the body (POST) or the query string, with
 * the path's task id and `/{tenant}` on top; then the same call layer and request handler, and the
 * answer as `application/a2a+json`, a `google.rpc.Status`, or SSE of bare StreamResponses. A v0.3
 * route (compatibility: `/v1/...` of a request served as 0.3, see the router) goes to the v0.3
 * codec in rest-v03.ts instead.
 */
import type { Request, Response } from 'express';
import type { z } from 'zod';
import { runWithA2AContext } from '../context/carrier.js';
import { A2AError, invalidParams } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AgentCardInput, ServedBindings } from '../protocol/card.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { withJsonNames } from '../protocol/field-names.js';
import { parseParams } from '../protocol/jsonrpc.js';
import {
  CancelTaskRequestSchema,
  CreateTaskPushNotificationConfigRequestSchema,
  DeleteTaskPushNotificationConfigRequestSchema,
  GetExtendedAgentCardRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  SendMessageRequestSchema,
  SubscribeToTaskRequestSchema,
} from '../protocol/requests.js';
import { pathSegment, queryParams, type RestMatch, type RestOperation } from '../protocol/rest.js';
import { toV03RestAgentCard } from '../protocol/v0_3/rest.js';
import type { A2ARequestHandler, CallContext, StreamObserver } from '../engine/request-handler.js';
import { cardAsServedTo } from './base-url.js';
import { statusBody, writeError } from './error-writer.js';
import type { CallContextHook, PresentCard } from './jsonrpc-route.js';
import { callOf, negotiate } from './request-call.js';
import { writeJson } from './respond.js';
import { v03RestRoute } from './rest-v03.js';
import type { SseLimits } from './sse.js';
import { serveStream, type StreamEncoding, type StreamSettings } from './stream.js';
import type { VersionPolicy } from '../protocol/version.js';

/** The binding's media type (§11.1), on every JSON answer. */
export const A2A_JSON = 'application/a2a+json';

export interface RestRouteOptions {
  readonly handler: A2ARequestHandler;
  readonly logger: Logger;
  readonly extensions: ExtensionNegotiator;
  /** Shared by every stream of the router (see streamLimits). */
  readonly streamLimits: SseLimits;
  readonly callContext?: CallContextHook;
  /** Which interfaces the extended card gains. */
  readonly bindings: ServedBindings;
  /** The extended card as served to a request (interfaces, v0.3 fields, signatures); by default from `bindings`. */
  readonly presentCard?: PresentCard;
  /** Versions served besides 1.0 (the router's `compatibility`): v0.3 serves the `/v1/...` routes the router matches as such. */
  readonly compatibility?: VersionPolicy;
  /** The extended card as v0.3 HTTP+JSON serves it (`GET /v1/card`); by default `presentCard`'s, as the v0.3 proto has it. */
  readonly presentV03RestCard?: (req: Request, card: AgentCardInput) => object | Promise<object>;
  /** Whether push notifications are configured; if not, the push routes answer PushNotificationNotSupported. */
  readonly pushNotifications?: boolean;
}

type Params = { tenant?: string };
type Unary = { schema: z.ZodType<Params>; run: (call: CallContext, params: never, req: Request) => Promise<unknown> };
type Streaming = { schema: z.ZodType<Params>; open: (call: CallContext, params: never, observer: StreamObserver) => Promise<() => void> };

const PUSH_OPERATIONS = new Set<RestOperation>([
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
]);

/** Every event a bare StreamResponse, the final error a google.rpc.Status (§11.7). */
const REST_STREAM: StreamEncoding = {
  binding: 'rest',
  event: (_id, event) => JSON.stringify(event),
  error: (_id, error) => JSON.stringify(statusBody(error)),
};

/** Request bodies the binding reads (§11.1; `application/json` too, as the official client sends it). */
const BODY_TYPES = new Set(['application/a2a+json', 'application/json']);

/**
 * ContentTypeNotSupported when `req` carries a body that is not JSON by its `Content-Type` (the router
 * answers it with 415); undefined for a JSON body or none (a cancel or subscribe POST may be empty).
 */
export function unsupportedMediaType(req: Request): A2AError | undefined {
  const headers = req.headers;
  const length = headers['content-length'];
  if (headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return undefined;
  const header = headers['content-type'];
  const type = header?.split(';', 1)[0].trim().toLowerCase();
  if (type !== undefined && BODY_TYPES.has(type)) return undefined;
  return new A2AError(
    'ContentTypeNotSupported',
    `${header ? `Content-Type ${header}` : 'A body without a Content-Type'} is not supported: send application/a2a+json or application/json`,
    { metadata: { contentType: header ?? '' } },
  );
}

/** The query string of `req` (below the mount), without the `?`. */
function queryOf(req: Request): string {
  const url = req.url;
  const start = url.indexOf('?');
  return start === -1 ? '' : url.slice(start + 1);
}

/** A POST body as params: absent reads as `{}`, anything but an object is refused. */
function bodyParams(operation: RestOperation, body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidParams([{ field: 'body', description: 'must be a JSON object' }]);
  return { ...(withJsonNames(operation, body) as Record<string, unknown>) };
}

export function restRoute(options: RestRouteOptions): (req: Request, res: Response, match: RestMatch) => Promise<void> {
  const { handler, logger, extensions, streamLimits, callContext, bindings } = options;
  const presentCard: PresentCard = options.presentCard ?? ((req, card) => cardAsServedTo(req, card, bindings));
  const streams: StreamSettings = { encoding: REST_STREAM, limits: streamLimits, logger };
  // Only the router's v0.3 routes (RestMatch.v03) reach it, and only with compatibility on.
  const v03 = options.compatibility?.v0_3
    ? v03RestRoute({
        handler,
        logger,
        extensions,
        streamLimits,
        callContext,
        presentCard: options.presentV03RestCard ?? (async (req, card) => toV03RestAgentCard(await presentCard(req, card))),
        pushNotifications: options.pushNotifications,
      })
    : undefined;

  const unary: Partial<Record<RestOperation, Unary>> = {
    SendMessage: { schema: SendMessageRequestSchema, run: (call, p) => handler.sendMessage(call, p) },
    GetTask: { schema: GetTaskRequestSchema, run: (call, p) => handler.getTask(call, p) },
    ListTasks: { schema: ListTasksRequestSchema, run: (call, p) => handler.listTasks(call, p) },
    CancelTask: { schema: CancelTaskRequestSchema, run: (call, p) => handler.cancelTask(call, p) },
    CreateTaskPushNotificationConfig: {
      schema: CreateTaskPushNotificationConfigRequestSchema,
      run: (call, p) => handler.createTaskPushNotificationConfig(call, p),
    },
    GetTaskPushNotificationConfig: { schema: GetTaskPushNotificationConfigRequestSchema, run: (call, p) => handler.getTaskPushNotificationConfig(call, p) },
    ListTaskPushNotificationConfigs: {
      schema: ListTaskPushNotificationConfigsRequestSchema,
      run: (call, p) => handler.listTaskPushNotificationConfigs(call, p),
    },
    // google.protobuf.Empty: `{}`.
    DeleteTaskPushNotificationConfig: {
      schema: DeleteTaskPushNotificationConfigRequestSchema,
      run: async (call, p) => (await handler.deleteTaskPushNotificationConfig(call, p), {}),
    },
    GetExtendedAgentCard: {
      schema: GetExtendedAgentCardRequestSchema,
      run: async (call, _p, req) => presentCard(req, await handler.getExtendedAgentCard(call)),
    },
  };
  const streaming: Partial<Record<RestOperation, Streaming>> = {
    SendStreamingMessage: { schema: SendMessageRequestSchema, open: (call, p, o) => handler.sendStreamingMessage(call, p, o) },
    SubscribeToTask: { schema: SubscribeToTaskRequestSchema, open: (call, p, o) => handler.subscribeToTask(call, p, o) },
  };

  const pushOn = options.pushNotifications === true;

  return async function a2aRest(req: Request, res: Response, match: RestMatch): Promise<void> {
    if (match.v03 && v03) return v03(req, res, match);
    try {
      const active = negotiate(req, res, extensions);
      const operation = match.operation;
      const push = PUSH_OPERATIONS.has(operation);
      if (push && !pushOn) throw new A2AError('PushNotificationNotSupported');
      const input = match.hasBody ? bodyParams(operation, req.body) : queryParams(operation, queryOf(req));
      // The path binds the task id (a push config's: `taskId`, and its own as `id`) and the tenant;
      // copies in the body or query are ignored.
      if (push) {
        input.taskId = pathSegment(match.taskId!, 'taskId');
        if (match.configId !== undefined) input.id = pathSegment(match.configId, 'id');
      } else if (match.taskId !== undefined) input.id = pathSegment(match.taskId, 'id');
      if (match.tenant !== undefined) input.tenant = pathSegment(match.tenant, 'tenant');
      const unaryOperation = unary[operation];
      const streamingOperation = unaryOperation ? undefined : streaming[operation]!;
      const params = parseParams((unaryOperation ?? streamingOperation!).schema, input);
      // The path's (or the params') tenant is the stated one: it must match the resolved tenant.
      const call = callOf(req, res, callContext ? await callContext(req) : undefined, params.tenant || undefined, active);
      if (streamingOperation) {
        return await serveStream(req, res, streams, null, call, streamingOperation.open, params as never);
      }
      const result = await runWithA2AContext(call.requestContext, () => unaryOperation!.run(call, params as never, req));
      writeJson(res, 200, JSON.stringify(result), A2A_JSON);
    } catch (error) {
      writeError(req, res, error, 'rest', null, logger);
    }
  };
}
