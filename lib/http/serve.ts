/**
 * The one request skeleton every binding and version runs: method -> version and extensions -> push gate -> params -> call -> the handler -> answer
 * or stream; a codec says how each step reads and writes.
 */
import type { Request, Response } from 'express';
import { runWithA2AContext } from '../context/carrier.js';
import { A2AError } from '../errors.js';
import type { JsonRpcId } from '../protocol/jsonrpc.js';
import type { RestMatch } from '../protocol/rest.js';
import type { ProtocolVersion } from '../protocol/version.js';
import type { A2ARequestHandler } from '../engine/request-handler.js';
import type { CallerResolution } from './call.js';
import { callOf } from './negotiate.js';
import type { Operation, Params, PresentCard } from './operations.js';
import { serveStream, type StreamSettings } from './stream.js';
import type { OperationTrace, OperationTracing } from '../observability/operation-span.js';

/** Resolves the caller and tenant per request (overrides what a2aAuth/a2aTenant contributed). */
export type CallContextHook = (req: Request) => CallerResolution | undefined | Promise<CallerResolution | undefined>;

/** How one codec serves one method: a row of the operation table, read and written its way. */
export interface Plan<Head> {
  readonly operation: Operation;
  /** The v1.0 params of the request (checked, translated from v0.3 where the codec is v0.3). */
  read(req: Request, head: Head): unknown;
  /** The answer as this codec writes it (v0.3 shapes, google.protobuf.Empty); the result itself when absent. */
  readonly present?: (result: unknown, params: unknown) => unknown;
  /** How a stream's events and final error are framed (streaming operations). */
  readonly stream?: StreamSettings;
  /** Another plan for these params (v0.3's "first config of a task"); kept when it answers undefined. */
  readonly reroute?: (params: unknown) => Plan<Head> | undefined;
}

/** One binding in one protocol version. */
export interface Codec<Head> {
  readonly version: ProtocolVersion;
  /** How GetExtendedAgentCard's card is served on this codec. */
  readonly presentCard: PresentCard;
  /** Whether params state a tenant (v0.3 has none: the resolved one applies). */
  readonly statesTenant: boolean;
  /** What names the method: the JSON-RPC envelope, or the HTTP+JSON route the dispatcher matched. */
  head(req: Request, match: RestMatch | undefined): Head;
  /** The JSON-RPC id answers carry (null on HTTP+JSON). */
  idOf(head: Head): JsonRpcId;
  /** Checks the stated version where this codec must, activates the extensions and echoes them. */
  negotiate(req: Request, res: Response, requested: string | undefined): string[];
  /** The method's plan; undefined for a method this version does not have. */
  plan(head: Head): Plan<Head> | undefined;
  unknownMethod(head: Head): A2AError;
  writeResult(res: Response, id: JsonRpcId, result: unknown): void;
  writeError(req: Request, res: Response, thrown: unknown, id: JsonRpcId): void;
}

/** What every request of a router shares. */
export interface ServeSettings {
  readonly handler: A2ARequestHandler;
  readonly callContext?: CallContextHook;
  /** Whether push notifications are configured; if not, the push methods answer PushNotificationNotSupported. */
  readonly pushOn: boolean;
  /** Operation spans (the router's `traces` option); absent when off. */
  readonly tracing?: OperationTracing;
}

/** Serves one A2A request with `codec`; `requested` is the version it stated (see servedVersion). */
export async function serve<Head>(
  req: Request,
  res: Response,
  codec: Codec<Head>,
  match: RestMatch | undefined,
  requested: string | undefined,
  settings: ServeSettings,
): Promise<void> {
  let id: JsonRpcId = null;
  let trace: OperationTrace | undefined;
  try {
    const head = codec.head(req, match);
    id = codec.idOf(head);
    const active = codec.negotiate(req, res, requested);
    let plan = codec.plan(head);
    // Before the params are read: a client of a server without push learns that first.
    if (plan?.operation.push && !settings.pushOn) throw new A2AError('PushNotificationNotSupported');
    if (!plan) throw codec.unknownMethod(head);
    trace = settings.tracing?.start(req, plan.operation, match ? 'http+json' : 'jsonrpc', codec.version);
    const params = plan.read(req, head);
    trace?.params(params);
    if (plan.reroute) plan = plan.reroute(params) ?? plan;
    const { handler, callContext } = settings;
    const stated = codec.statesTenant ? (params as Params).tenant || undefined : undefined;
    // Synchronous unless the app states the caller itself through an (async) hook.
    const call = callOf(req, res, callContext ? await callContext(req) : undefined, stated, active);
    const operation = plan.operation;
    if (operation.kind === 'stream') {
      const encoding = plan.stream!;
      if (trace) return await trace.stream(res, () => serveStream(req, res, encoding, id, call, handler, operation, params));
      return await serveStream(req, res, encoding, id, call, handler, operation, params);
    }
    const result = await runWithA2AContext(call, () =>
      trace ? trace.run(() => operation.run(handler, call, params as never, req, codec)) : operation.run(handler, call, params as never, req, codec),
    );
    trace?.succeeded(result);
    codec.writeResult(res, id, plan.present ? plan.present(result, params) : result);
  } catch (error) {
    trace?.failed(error);
    codec.writeError(req, res, error, id);
  }
}
