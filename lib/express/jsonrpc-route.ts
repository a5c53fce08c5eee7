/**
 * POST <mount>: the JSON-RPC 2.0 binding. Reads the envelope, negotiates version and extensions,
 * validates params with zod, enters the request's A2A context and calls the request handler.
 * Unary results are JSON responses; SendStreamingMessage and SubscribeToTask answer with SSE.
 */
import type { Request, Response } from 'express';
import type { z } from 'zod';
import { runWithA2AContext, type A2ACaller, type A2ARequestContext } from '../context/carrier.js';
import { readA2AState } from '../context/request-state.js';
import { A2AError, invalidParams, toA2AError } from '../errors.js';
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
import { negotiateVersion } from '../protocol/version.js';
import { cardForBaseUrl, type AgentCardInput } from '../protocol/card.js';
import type { A2ARequestHandler, CallContext, StreamObserver } from '../server/request-handler.js';
import { SseWriter } from './sse.js';
import { baseUrlOf, writeJson, writeJsonRpcError } from './respond.js';

/** Who is calling, as an application states it itself (overrides what middlewares contributed). */
export interface CallerResolution {
  readonly caller?: A2ACaller;
  readonly tenant?: string;
}
export type CallContextHook = (req: Request) => CallerResolution | undefined | Promise<CallerResolution | undefined>;

export interface JsonRpcRouteOptions {
  readonly handler: A2ARequestHandler;
  readonly logger: Logger;
  readonly extensions: ExtensionNegotiator;
  readonly heartbeatIntervalMs: number;
  readonly callContext?: CallContextHook;
}

/** Without auth every caller is the same anonymous principal (one bucket); a2aAuth changes that. */
export const ANONYMOUS_CALLER: A2ACaller = Object.freeze({ id: 'anonymous', authenticated: false });

type Unary = { schema: z.ZodType<{ tenant?: string }>; run: (call: CallContext, params: never) => Promise<unknown> };
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

export function jsonRpcRoute(options: JsonRpcRouteOptions): (req: Request, res: Response) => Promise<void> {
  const { handler, logger, extensions, heartbeatIntervalMs, callContext } = options;

  const unary: Record<string, Unary> = {
    SendMessage: { schema: SendMessageRequestSchema, run: (call, p) => handler.sendMessage(call, p) },
    GetTask: { schema: GetTaskRequestSchema, run: (call, p) => handler.getTask(call, p) },
    ListTasks: { schema: ListTasksRequestSchema, run: (call, p) => handler.listTasks(call, p) },
    CancelTask: { schema: CancelTaskRequestSchema, run: (call, p) => handler.cancelTask(call, p) },
    GetExtendedAgentCard: { schema: GetExtendedAgentCardRequestSchema, run: (call) => handler.getExtendedAgentCard(call) },
  };
  const streaming: Record<string, Streaming> = {
    SendStreamingMessage: { schema: SendMessageRequestSchema, open: (call, p, o) => handler.sendStreamingMessage(call, p, o) },
    SubscribeToTask: { schema: SubscribeToTaskRequestSchema, open: (call, p, o) => handler.subscribeToTask(call, p, o) },
  };

  const sendError = (res: Response, id: JsonRpcId, thrown: unknown): void => {
    if (!(thrown instanceof A2AError)) logger.error({ err: thrown }, 'unexpected error while handling a JSON-RPC request');
    writeJsonRpcError(res, id, thrown);
  };

  /** Builds the call and the carrier from what middlewares (or the hook) resolved, and the params' tenant. */
  const buildCall = (
    req: Request,
    res: Response,
    stated: string | undefined,
    active: string[],
    resolved?: CallerResolution,
  ): CallContext => {
    const state = readA2AState(req);
    const caller = resolved?.caller ?? state?.caller;
    const tenant = resolved?.tenant ?? state?.tenant;
    if (tenant !== undefined && stated && stated !== tenant) {
      throw invalidParams([{ field: 'tenant', description: 'does not match the tenant this request was authorized for' }]);
    }
    // The request's AbortSignal is made on first use: most requests never ask for it.
    let abort: AbortController | undefined;
    const requestContext: A2ARequestContext = {
      caller: caller ?? ANONYMOUS_CALLER,
      tenant: tenant ?? stated ?? '',
      requestId: state?.requestId,
      trace: state?.trace,
      get signal() {
        if (!abort) {
          const controller = (abort = new AbortController());
          const onClose = () => {
            if (!res.writableFinished) controller.abort(new Error('the client closed the request'));
          };
          if (res.destroyed || res.writableFinished) onClose();
          else res.once('close', onClose);
        }
        return abort.signal;
      },
    };
    return { caller: requestContext.caller, tenant: requestContext.tenant, extensions: active, requestContext };
  };

  const stream = async (res: Response, id: JsonRpcId, call: CallContext, method: Streaming, params: never): Promise<void> => {
    const writer = new SseWriter(res, heartbeatIntervalMs);
    let detach: (() => void) | undefined;
    const observer: StreamObserver = {
      onEvent: (event) => writer.send(successResponse(id, event)),
      onEnd: (outcome) => {
        if (outcome.kind === 'error') {
          if (!writer.opened) return sendError(res, id, outcome.error);
          writer.sendError(errorResponse(id, outcome.error));
        }
        writer.end();
      },
    };
    // A client that goes away stops following; the task itself goes on.
    res.once('close', () => {
      writer.stop();
      detach?.();
    });
    try {
      detach = await runWithA2AContext(call.requestContext, () => method.open(call, params, observer));
      if (writer.closed) detach();
    } catch (error) {
      if (writer.opened) {
        writer.sendError(errorResponse(id, toA2AError(error)));
        writer.end();
      } else sendError(res, id, error);
    }
  };

  return async function a2aJsonRpc(req: Request, res: Response): Promise<void> {
    let id: JsonRpcId = null;
    try {
      const envelope = readEnvelope(req.body);
      id = envelope.id;
      negotiateVersion(req.get('a2a-version') || (req.query['A2A-Version'] as string | undefined));
      const active = extensions.activate(req.get('a2a-extensions'));
      if (active.length > 0) res.setHeader('A2A-Extensions', active.join(', '));

      const method = envelope.method;
      if (PUSH_METHODS.has(method)) handler.pushNotificationsNotSupported();
      const unaryMethod = unary[method];
      const streamingMethod = unaryMethod ? undefined : streaming[method];
      const schema = unaryMethod?.schema ?? streamingMethod?.schema;
      if (!schema) throw new A2AError('MethodNotFound', `Method not found: ${method}`);
      const params = parseParams(schema, envelope.params);
      const stated = params.tenant || undefined;
      // Synchronous unless the app states the caller itself through an (async) hook.
      const call = callContext
        ? buildCall(req, res, stated, active, await callContext(req))
        : buildCall(req, res, stated, active);
      if (streamingMethod) return await stream(res, id, call, streamingMethod, params as never);
      let result = await runWithA2AContext(call.requestContext, () => unaryMethod!.run(call, params as never));
      if (method === 'GetExtendedAgentCard') result = cardForBaseUrl(result as AgentCardInput, baseUrlOf(req));
      writeJson(res, 200, successResponse(id, result));
    } catch (error) {
      sendError(res, error instanceof EnvelopeError ? error.id : id, error);
    }
  };
}
