/**
 * The one operation table: every A2A method with its params schema (v1.0), the request handler call that serves it, its result kind (unary, or a
 * stream of events) and whether it is a push config method (answered PushNotificationNotSupported while push is off).
 */
import type { Request } from 'express';
import type { z } from 'zod';
import type { AgentCardInput } from '../protocol/card.js';
import {
  CancelTaskRequestSchema,
  CreateTaskPushNotificationConfigRequestSchema,
  DeleteTaskPushNotificationConfigRequestSchema,
  GetExtendedAgentCardRequestSchema,
  GetTaskPushNotificationConfigRequestSchema,
  GetTaskRequestSchema,
  ListTaskPushNotificationConfigsRequestSchema,
  ListTasksRequestSchema,
  SendMessageRequestSchema,
  SubscribeToTaskRequestSchema,
} from '../protocol/requests.js';
import type { RestOperation } from '../protocol/rest.js';
import type { ProtocolVersion } from '../protocol/version.js';
import type { A2ARequestHandler, CallContext, StreamObserver } from '../engine/request-handler.js';

/** The A2A methods, by their v1.0 JSON-RPC names (the HTTP+JSON routes name the same ones). */
export type A2AMethod = RestOperation;

/** A card as a codec serves it to a request (interfaces, v0.3 fields or shape, signatures). */
export type PresentCard = (req: Request, card: AgentCardInput) => unknown;

/** What a unary call may need of the codec serving it: its version, how it presents a card. */
interface CallSite {
  readonly version: ProtocolVersion;
  readonly presentCard: PresentCard;
}

/** Params as every schema reads them: the stated tenant is looked at before the method runs. */
export type Params = { tenant?: string };

export interface UnaryOperation {
  readonly kind: 'unary';
  readonly push: boolean;
  readonly schema: z.ZodType<Params>;
  run(handler: A2ARequestHandler, call: CallContext, params: never, req: Request, site: CallSite): Promise<unknown>;
}

export interface StreamOperation {
  readonly kind: 'stream';
  readonly push: false;
  readonly schema: z.ZodType<Params>;
  open(handler: A2ARequestHandler, call: CallContext, params: never, observer: StreamObserver): Promise<() => void>;
}

export type Operation = UnaryOperation | StreamOperation;

function unary<P extends Params>(
  schema: z.ZodType<P>,
  run: (handler: A2ARequestHandler, call: CallContext, params: P, req: Request, site: CallSite) => Promise<unknown>,
  push = false,
): UnaryOperation {
  return { kind: 'unary', push, schema, run: run as UnaryOperation['run'] };
}

function stream<P extends Params>(
  schema: z.ZodType<P>,
  open: (handler: A2ARequestHandler, call: CallContext, params: P, observer: StreamObserver) => Promise<() => void>,
): StreamOperation {
  return { kind: 'stream', push: false, schema, open: open as StreamOperation['open'] };
}

const PUSH = true;

/**
 * Every binding and version serves these rows; a codec only says how params are read and how results are written.
 */
export const OPERATIONS: { readonly [M in A2AMethod]: Operation } = {
  SendMessage: unary(SendMessageRequestSchema, (h, call, p) => h.sendMessage(call, p)),
  SendStreamingMessage: stream(SendMessageRequestSchema, (h, call, p, observer) => h.sendStreamingMessage(call, p, observer)),
  GetTask: unary(GetTaskRequestSchema, (h, call, p) => h.getTask(call, p)),
  ListTasks: unary(ListTasksRequestSchema, (h, call, p) => h.listTasks(call, p)),
  CancelTask: unary(CancelTaskRequestSchema, (h, call, p) => h.cancelTask(call, p)),
  SubscribeToTask: stream(SubscribeToTaskRequestSchema, (h, call, p, observer) => h.subscribeToTask(call, p, observer)),
  // The config remembers the version it was registered with: its deliveries take that shape.
  CreateTaskPushNotificationConfig: unary(
    CreateTaskPushNotificationConfigRequestSchema,
    (h, call, p, _req, site) => h.createTaskPushNotificationConfig(call, p, site.version),
    PUSH,
  ),
  GetTaskPushNotificationConfig: unary(GetTaskPushNotificationConfigRequestSchema, (h, call, p) => h.getTaskPushNotificationConfig(call, p), PUSH),
  ListTaskPushNotificationConfigs: unary(
    ListTaskPushNotificationConfigsRequestSchema,
    (h, call, p) => h.listTaskPushNotificationConfigs(call, p),
    PUSH,
  ),
  // google.protobuf.Empty: each codec writes its own empty answer.
  DeleteTaskPushNotificationConfig: unary(
    DeleteTaskPushNotificationConfigRequestSchema,
    (h, call, p) => h.deleteTaskPushNotificationConfig(call, p),
    PUSH,
  ),
  GetExtendedAgentCard: unary(GetExtendedAgentCardRequestSchema, async (h, call, _p, req, site) =>
    site.presentCard(req, await h.getExtendedAgentCard(call)),
  ),
};
