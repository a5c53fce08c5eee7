/**
 * POST <mount>: the JSON-RPC 2.0 binding, a thin mapping: read the envelope, find the method,
 * build the call (negotiation, caller, tenant, signal), run the request handler in the request's
 * A2A context, write the result or the error. SendStreamingMessage and SubscribeToTask answer
 * with SSE. The negotiated version picks the codec: v1.0 here, v0.3 (compatibility) in
 * jsonrpc-v03.ts; both drive the same request handler.
 */
import type { Request, Response } from 'express';
import type { z } from 'zod';
import { runWithA2AContext } from '../context/carrier.js';
import { A2AError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import type { ServedBindings } from '../protocol/card.js';
import { withJsonNames } from '../protocol/field-names.js';
import { EnvelopeError, errorResponse, parseParams, readEnvelope, successResponse, type JsonRpcId } from '../protocol/jsonrpc.js';
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
import type { CallerResolution } from '../engine/call.js';
import type { A2ARequestHandler, CallContext, StreamObserver } from '../engine/request-handler.js';
import type { AgentCardInput } from '../protocol/card.js';
import type { AgentCard } from '../protocol/schemas.js';
import { ONLY_1_0, type ProtocolVersion, type VersionPolicy } from '../protocol/version.js';
import { cardAsServedTo } from './base-url.js';
import { writeError } from './error-writer.js';
import { v03JsonRpcCodec } from './jsonrpc-v03.js';
import { activate, callOf, versionOf } from './request-call.js';
import { writeJson } from './respond.js';
import { serveStream, type StreamEncoding, type StreamSettings } from './stream.js';
import type { SseLimits } from './sse.js';

export { ANONYMOUS_CALLER, type CallerResolution } from '../engine/call.js';

/** Resolves the caller and tenant per request (overrides what a2aAuth/a2aTenant contributed). */
export type CallContextHook = (req: Request) => CallerResolution | undefined | Promise<CallerResolution | undefined>;

export interface JsonRpcRouteOptions {
  readonly handler: A2ARequestHandler;
  readonly logger: Logger;
  readonly extensions: ExtensionNegotiator;
  /** Shared by every stream of the router (see streamLimits). */
  readonly streamLimits: SseLimits;
  readonly callContext?: CallContextHook;
  /** Which interfaces the extended card gains (both bindings by default). */
  readonly bindings?: ServedBindings;
  /** Versions served besides 1.0 (the router's `compatibility`); 1.0 only by default. */
  readonly compatibility?: VersionPolicy;
  /** The extended card as served to `req` (interfaces filled in; by default from `bindings`). */
  readonly presentCard?: PresentCard;
  /** Whether push notifications are configured; if not, the push methods answer PushNotificationNotSupported. */
  readonly pushNotifications?: boolean;
}

/** A card as served to a request: interfaces filled in, and whatever the router adds (v0.3 fields, signatures). */
export type PresentCard = (req: Request, card: AgentCardInput) => AgentCard | Promise<AgentCard>;

/** Params of any version: the tenant is read before the method runs (v0.3 params have none). */
type Params = z.ZodType<{ tenant?: string; [field: string]: unknown }>;

export type Unary = { schema: Params; run: (call: CallContext, params: never, req: Request) => Promise<unknown> };
export type Streaming = {
  schema: Params;
  open: (call: CallContext, params: never, observer: StreamObserver) => Promise<() => void>;
  /** How this method's events are framed, when not the codec's default. */
  streams?: StreamSettings;
};

/** One protocol version's methods and wire shapes on this binding. */
export interface JsonRpcCodec {
  readonly version: ProtocolVersion;
  readonly unary: Readonly<Record<string, Unary>>;
  readonly streaming: Readonly<Record<string, Streaming>>;
  /** Push notification config methods: answered PushNotificationNotSupported, before params are read, while push is off. */
  readonly push: ReadonlySet<string>;
  /** The error for a method this version does not have. */
  unknownMethod(method: string): A2AError;
  /** A thrown value as this version's clients are answered. */
  error(error: unknown): unknown;
}

const PUSH_METHODS = new Set([
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
]);

/** Every event a success envelope, the final error an error envelope, both with the request's id. */
const JSONRPC_STREAM: StreamEncoding = { binding: 'jsonrpc', event: successResponse, error: errorResponse };

export function jsonRpcRoute(options: JsonRpcRouteOptions): (req: Request, res: Response) => Promise<void> {
  const { handler, logger, extensions, streamLimits, callContext, bindings } = options;
  const policy = options.compatibility ?? ONLY_1_0;
  const presentCard: PresentCard = options.presentCard ?? ((req, card) => cardAsServedTo(req, card, bindings));
  const streams: StreamSettings = { encoding: JSONRPC_STREAM, limits: streamLimits, logger };

  const unary: Record<string, Unary> = {
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
    // google.protobuf.Empty: `null` as a result, as both official SDK servers answer.
    DeleteTaskPushNotificationConfig: {
      schema: DeleteTaskPushNotificationConfigRequestSchema,
      run: async (call, p) => (await handler.deleteTaskPushNotificationConfig(call, p), null),
    },
    GetExtendedAgentCard: {
      schema: GetExtendedAgentCardRequestSchema,
      run: async (call, _p, req) => presentCard(req, await handler.getExtendedAgentCard(call)),
    },
  };
  const streaming: Record<string, Streaming> = {
    SendStreamingMessage: { schema: SendMessageRequestSchema, open: (call, p, o) => handler.sendStreamingMessage(call, p, o) },
    SubscribeToTask: { schema: SubscribeToTaskRequestSchema, open: (call, p, o) => handler.subscribeToTask(call, p, o) },
  };
  const v1: JsonRpcCodec = {
    version: '1.0',
    unary,
    streaming,
    push: PUSH_METHODS,
    unknownMethod: (method) => new A2AError('MethodNotFound', `Method not found: ${method}`),
    error: (error) => error,
  };
  const v1Methods = new Set([...Object.keys(unary), ...Object.keys(streaming)]);
  const pushOn = options.pushNotifications === true;
  const v03 = policy.v0_3 ? v03JsonRpcCodec({ handler, logger, streamLimits, presentCard, v1Methods }) : v1;

  return async function a2aJsonRpc(req: Request, res: Response): Promise<void> {
    let id: JsonRpcId = null;
    let codec = v1;
    try {
      const envelope = readEnvelope(req.body);
      id = envelope.id;
      if (versionOf(req, policy) !== '1.0') codec = v03;
      const active = activate(req, res, extensions, codec.version);
      const method = envelope.method;
      if (!pushOn && codec.push.has(method)) throw new A2AError('PushNotificationNotSupported');
      const unaryMethod = codec.unary[method];
      const streamingMethod = unaryMethod ? undefined : codec.streaming[method];
      const schema = unaryMethod?.schema ?? streamingMethod?.schema;
      if (!schema) throw codec.unknownMethod(method);
      const params = parseParams(schema, withJsonNames(method, envelope.params));
      // Synchronous unless the app states the caller itself through an (async) hook.
      const call = callOf(req, res, callContext ? await callContext(req) : undefined, params.tenant || undefined, active);
      if (streamingMethod) {
        return await serveStream(req, res, streamingMethod.streams ?? streams, id, call, streamingMethod.open, params as never);
      }
      const result = await runWithA2AContext(call.requestContext, () => unaryMethod!.run(call, params as never, req));
      writeJson(res, 200, successResponse(id, result));
    } catch (error) {
      writeError(req, res, codec.error(error), 'jsonrpc', error instanceof EnvelopeError ? error.id : id, logger);
    }
  };
}
