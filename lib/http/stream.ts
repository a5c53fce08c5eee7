/** A request handler's stream observer as one SSE response, for every binding and version. */
import type { Request, Response } from 'express';
import { runWithA2AContext } from '../context/carrier.js';
import { A2AError, toA2AError } from '../errors.js';
import type { Logger } from '../options.js';
import type { JsonRpcId } from '../protocol/jsonrpc.js';
import type { A2ARequestHandler, CallContext, StreamObserver } from '../engine/request-handler.js';
import { writeError } from '../context/reply.js';
import type { ErrorBinding } from '../protocol/error-body.js';
import type { StreamOperation } from './operations.js';
import { StreamBufferBudget } from './sse-budget.js';
import { sharedPayloadsOf, type SharedPayloads } from './sse-payloads.js';
import { EVENT_END, Heartbeat, SseWriter, type SseLimits } from './sse.js';

/** How a binding frames its stream; one object per binding, the request's `id` passed in. */
export interface StreamEncoding {
  /** The binding of an error answered before the stream opened. */
  readonly binding: ErrorBinding;
  /** One event's JSON as every stream of the binding sends it: encoded once per event, shared by all its streams (sse-payloads.ts). */
  payload(event: unknown): string;
  /** What one request's events are wrapped in (JSON-RPC: the envelope with its id), made once per stream; none: the payload alone. */
  envelope?(id: JsonRpcId): readonly [head: string, tail: string];
  /** The `data:` of the final `event: error` frame. */
  error(id: JsonRpcId, error: A2AError): string;
}

/** What a binding's streams share: made once per route. */
export interface StreamSettings {
  readonly encoding: StreamEncoding;
  readonly limits: SseLimits;
  readonly logger: Logger;
}

/** The limits every stream of a router shares: one heartbeat timer, one send-buffer bound per stream, one for all of them. */
export function streamLimits(
  heartbeatIntervalMs: number,
  maxBufferedBytes: number,
  stallMs: number,
  logger: Logger,
  maxTotalBufferedBytes = Infinity,
): SseLimits {
  return {
    heartbeat: new Heartbeat(heartbeatIntervalMs),
    maxBufferedBytes,
    stallMs,
    budget: new StreamBufferBudget(maxTotalBufferedBytes),
    onOverflow: (cause) =>
      cause === 'stream'
        ? logger.warn(
            { maxBufferedBytes },
            'an SSE client fell more than streamBufferBytes behind; its stream was cut (the task goes on, the client can resume)',
          )
        : logger.warn(
            { maxTotalBufferedBytes },
            'SSE clients together fell more than streamBufferTotalBytes behind; the stream furthest behind was cut (the task goes on, the client can resume)',
          ),
  };
}

type StreamEvent = Parameters<StreamObserver['onEvent']>[0];
type StreamOutcome = Parameters<StreamObserver['onEnd']>[0];

/**
 * One stream, and the observer of the handler's stream: a single object per stream (methods, no closures), so that an idle stream holds nothing of
 * the request beyond it; the call, the params and the request's A2A context are released once the stream is open.
 */
class ObservedStream extends SseWriter implements StreamObserver {
  readonly #req: Request;
  readonly #res: Response;
  readonly #settings: StreamSettings;
  readonly #id: JsonRpcId;
  readonly #payloads: SharedPayloads;
  /** This request's envelope around each event's shared payload, the end of the event included in the tail. */
  readonly #head: string;
  readonly #end: string;
  #detach: (() => void) | undefined;

  constructor(req: Request, res: Response, settings: StreamSettings, id: JsonRpcId) {
    super(res, settings.limits);
    this.#req = req;
    this.#res = res;
    this.#settings = settings;
    this.#id = id;
    const { encoding } = settings;
    this.#payloads = sharedPayloadsOf(encoding);
    const [head, tail] = encoding.envelope?.(id) ?? ['', ''];
    this.#head = head;
    this.#end = tail + EVENT_END;
  }

  onEvent(event: StreamEvent, version?: number): void {
    this.sendShared(this.#head, this.#payloads.of(event), this.#end, version);
  }

  onEnd(outcome: StreamOutcome): void {
    if (outcome.kind === 'error') this.fail(outcome.error);
    else this.end();
  }

  /** Ends the stream with `thrown`: a final error frame, or a plain error reply while nothing was sent. */
  fail(thrown: unknown): void {
    const { encoding, logger } = this.#settings;
    if (!this.opened) return writeError(this.#req, this.#res, thrown, encoding.binding, this.#id, logger);
    if (!(thrown instanceof A2AError)) logger.error({ err: thrown }, 'unexpected error in an A2A stream');
    this.sendError(encoding.error(this.#id, toA2AError(thrown)));
    this.end();
  }

  /** The handler's stream is open; `detach` stops following it. */
  attach(detach: () => void): void {
    this.#detach = detach;
    if (this.closed) detach();
  }

  /** The client went away: stop following; the task itself goes on. */
  clientLeft(): void {
    this.stop();
    this.#detach?.();
  }
}

const STREAM = Symbol('a2a-express-kit.stream');
type StreamedResponse = Response & { [STREAM]?: ObservedStream };

/** 'close' of a streamed response (`this`): one function for all streams, not a closure each. */
function onStreamClose(this: StreamedResponse): void {
  this[STREAM]?.clientLeft();
}

/** Opens the handler's stream for `operation` (in the request's A2A context) and serves it as SSE. */
export async function serveStream(
  req: Request,
  res: Response,
  settings: StreamSettings,
  id: JsonRpcId,
  call: CallContext,
  handler: A2ARequestHandler,
  operation: StreamOperation,
  params: unknown,
): Promise<void> {
  const stream = new ObservedStream(req, res, settings, id);
  (res as StreamedResponse)[STREAM] = stream;
  res.on('close', onStreamClose);
  try {
    stream.attach(await openIn(call, handler, operation, params, stream));
  } catch (error) {
    stream.fail(error);
  }
}

/** `open` in the request's A2A context; a function of its own, so the stream does not keep its arguments. */
function openIn(
  call: CallContext,
  handler: A2ARequestHandler,
  operation: StreamOperation,
  params: unknown,
  observer: StreamObserver,
): Promise<() => void> {
  return runWithA2AContext(call, () => operation.open(handler, call, params as never, observer));
}
