/**
 * What a transport hands the request handler with each call: the request's record as a call
 * (CallContext, lib/context), and where a stream's events go (StreamObserver).
 */
export type { CallContext } from '../context/request-state.js';
import type { ExecutionObserver, TurnOutcome } from './execution/turn.js';

/** Receives a stream's events; `onEnd` closes it. */
export interface StreamObserver extends ExecutionObserver {
  /** `closed`: the stream ends without a final state (a subscription ended by a shutdown). */
  onEnd(outcome: TurnOutcome | { readonly kind: 'closed' }): void;
  /** Opens the stream with nothing to send yet (a resumed subscription that missed nothing). */
  begin?(): void;
}
