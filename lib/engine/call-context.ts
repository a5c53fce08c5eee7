/**
 * What a transport hands the request handler with each call: who calls, under which tenant, in
 * which request context (CallContext), and where a stream's events go (StreamObserver).
 */
import type { A2ACaller, A2ARequestContext } from '../context/carrier.js';
import type { ExecutionObserver, TurnOutcome } from './execution/turn.js';

/** Who is calling and under which tenant: resolved once per request by the transport. */
export interface CallContext {
  readonly caller: A2ACaller;
  readonly tenant: string;
  /** Extensions activated for this request. */
  readonly extensions: readonly string[];
  readonly requestContext: A2ARequestContext;
  /** The SSE `Last-Event-ID` a resuming client sent (SubscribeToTask resumes after it). */
  readonly lastEventId?: string;
  /** Calls `listener` once if the client leaves before the answer is finished (cheaper than the signal's abort). */
  readonly onClientClose?: (listener: () => void) => void;
}

/** Receives a stream's events; `onEnd` closes it. */
export interface StreamObserver extends ExecutionObserver {
  /** `closed`: the stream ends without a final state (a subscription ended by a shutdown). */
  onEnd(outcome: TurnOutcome | { readonly kind: 'closed' }): void;
  /** Opens the stream with nothing to send yet (a resumed subscription that missed nothing). */
  begin?(): void;
}
