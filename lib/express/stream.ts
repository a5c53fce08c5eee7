/**
 * Stream wiring shared by the bindings: a request handler's stream observer → one SSE response.
 * The binding says how an event and the final error frame are encoded; an error found before the
 * first event is answered as a plain error response; a client that leaves stops following.
 */
import type { Request, Response } from 'express';
import { runWithA2AContext } from '../context/carrier.js';
import { A2AError, toA2AError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { JsonRpcId } from '../protocol/jsonrpc.js';
import type { CallContext, StreamObserver } from '../server/request-handler.js';
import { writeError, type ErrorBinding } from './error-writer.js';
import { SseWriter } from './sse.js';

/** How a binding frames its stream; one object per binding, the request's `id` passed in. */
export interface StreamEncoding {
  /** The binding of an error answered before the stream opened. */
  readonly binding: ErrorBinding;
  /** The `data:` of one event. */
  event(id: JsonRpcId, event: unknown): string;
  /** The `data:` of the final `event: error` frame. */
  error(id: JsonRpcId, error: A2AError): string;
}

/** What a binding's streams share: made once per route. */
export interface StreamSettings {
  readonly encoding: StreamEncoding;
  readonly heartbeatIntervalMs: number;
  readonly logger: Logger;
}

/** Opens the handler's stream (`open` runs in the request's A2A context) and serves it as SSE. */
export async function serveStream<Params>(
  req: Request,
  res: Response,
  settings: StreamSettings,
  id: JsonRpcId,
  call: CallContext,
  open: (call: CallContext, params: Params, observer: StreamObserver) => Promise<() => void>,
  params: Params,
): Promise<void> {
  const { encoding, heartbeatIntervalMs, logger } = settings;
  const writer = new SseWriter(res, heartbeatIntervalMs);
  /** Ends the stream with `thrown`: a final error frame, or a plain error reply while nothing was sent. */
  const fail = (thrown: unknown): void => {
    if (!writer.opened) return writeError(req, res, thrown, encoding.binding, id, logger);
    if (!(thrown instanceof A2AError)) logger.error({ err: thrown }, 'unexpected error in an A2A stream');
    writer.sendError(encoding.error(id, toA2AError(thrown)));
    writer.end();
  };
  let detach: (() => void) | undefined;
  const observer: StreamObserver = {
    onEvent: (event) => writer.send(encoding.event(id, event)),
    onEnd: (outcome) => (outcome.kind === 'error' ? fail(outcome.error) : writer.end()),
  };
  // A client that goes away stops following; the task itself goes on.
  res.once('close', () => {
    writer.stop();
    detach?.();
  });
  try {
    detach = await runWithA2AContext(call.requestContext, () => open(call, params, observer));
    if (writer.closed) detach();
  } catch (error) {
    fail(error);
  }
}
