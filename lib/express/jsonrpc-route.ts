/**
 * POST <mount>: the JSON-RPC 2.0 binding, a thin mapping: read the envelope, find the method,
 * build the call (negotiation, caller, tenant, signal), run the request handler in the request's
 * A2A context, write the result or the error. SendStreamingMessage and SubscribeToTask answer
 * with SSE.
 */
import type { Request, Response } from 'express';
import type { z } from 'zod';
import { runWithA2AContext } from '../context/carrier.js';
import { A2AError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { EnvelopeError, errorResponse, parseParams, readEnvelope, successResponse, type JsonRpcId } from '../protocol/jsonrpc.js';
import {
  CancelTaskRequestSchema,
  GetExtendedAgentCardRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  SendMessageRequestSchema,
  SubscribeToTaskRequestSchema,
} from '../protocol/requests.js';
import type { CallerResolution } from '../server/call.js';
import type { A2ARequestHandler, CallContext, StreamObserver } from '../server/request-handler.js';
import { cardAsServedTo } from './base-url.js';
import { writeError } from './error-writer.js';
import { callOf, negotiate } from './request-call.js';
import { writeJson } from './respond.js';
import { serveStream, type StreamEncoding, type StreamSettings } from './stream.js';

export { ANONYMOUS_CALLER, type CallerResolution } from '../server/call.js';

/** Resolves the caller and tenant per request (overrides what a2aAuth/a2aTenant contributed). */
export type CallContextHook = (req: Request) => CallerResolution | undefined | Promise<CallerResolution | undefined>;

export interface JsonRpcRouteOptions {
  readonly handler: A2ARequestHandler;
  readonly logger: Logger;
  readonly extensions: ExtensionNegotiator;
  readonly heartbeatIntervalMs: number;
  readonly callContext?: CallContextHook;
}

type Unary = { schema: z.ZodType<{ tenant?: string }>; run: (call: CallContext, params: never, req: Request) => Promise<unknown> };
type Streaming = {
  schema: z.ZodType<{ tenant?: string }>;
  open: (call: CallContext, params: never, observer: StreamObserver) => Promise<() => void>;
};

const PUSH_METHODS = new Set([
  'CreateTaskPushNotificationConfig',
  'GetTaskPushNotificationConfig',
  'ListTaskPushNotificationConfigs',
  'DeleteTaskPushNotificationConfig',
]);

/** Every event a success envelope, the final error an error envelope, both with the request's id. */
const JSONRPC_STREAM: StreamEncoding = { binding: 'jsonrpc', event: successResponse, error: errorResponse };

export function jsonRpcRoute(options: JsonRpcRouteOptions): (req: Request, res: Response) => Promise<void> {
  const { handler, logger, extensions, heartbeatIntervalMs, callContext } = options;
  const streams: StreamSettings = { encoding: JSONRPC_STREAM, heartbeatIntervalMs, logger };

  const unary: Record<string, Unary> = {
    SendMessage: { schema: SendMessageRequestSchema, run: (call, p) => handler.sendMessage(call, p) },
    GetTask: { schema: GetTaskRequestSchema, run: (call, p) => handler.getTask(call, p) },
    ListTasks: { schema: ListTasksRequestSchema, run: (call, p) => handler.listTasks(call, p) },
    CancelTask: { schema: CancelTaskRequestSchema, run: (call, p) => handler.cancelTask(call, p) },
    GetExtendedAgentCard: {
      schema: GetExtendedAgentCardRequestSchema,
      run: async (call, _p, req) => cardAsServedTo(req, await handler.getExtendedAgentCard(call)),
    },
  };
  const streaming: Record<string, Streaming> = {
    SendStreamingMessage: { schema: SendMessageRequestSchema, open: (call, p, o) => handler.sendStreamingMessage(call, p, o) },
    SubscribeToTask: { schema: SubscribeToTaskRequestSchema, open: (call, p, o) => handler.subscribeToTask(call, p, o) },
  };

  return async function a2aJsonRpc(req: Request, res: Response): Promise<void> {
    let id: JsonRpcId = null;
    try {
      const envelope = readEnvelope(req.body);
      id = envelope.id;
      const active = negotiate(req, res, extensions);
      const method = envelope.method;
      if (PUSH_METHODS.has(method)) handler.pushNotificationsNotSupported();
      const unaryMethod = unary[method];
      const streamingMethod = unaryMethod ? undefined : streaming[method];
      const schema = unaryMethod?.schema ?? streamingMethod?.schema;
      if (!schema) throw new A2AError('MethodNotFound', `Method not found: ${method}`);
      const params = parseParams(schema, envelope.params);
      // Synchronous unless the app states the caller itself through an (async) hook.
      const call = callOf(req, res, callContext ? await callContext(req) : undefined, params.tenant || undefined, active);
      if (streamingMethod) {
        return await serveStream(req, res, streams, id, call, streamingMethod.open, params as never);
      }
      const result = await runWithA2AContext(call.requestContext, () => unaryMethod!.run(call, params as never, req));
      writeJson(res, 200, successResponse(id, result));
    } catch (error) {
      writeError(req, res, error, 'jsonrpc', error instanceof EnvelopeError ? error.id : id, logger);
    }
  };
}
