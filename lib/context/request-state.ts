/**
 * Per-request contributions from middlewares (auth, tenant, tracing) that run before the router.
 * They write here, keyed by the request object, instead of entering AsyncLocalStorage themselves:
 * the router enters the carrier once, after body parsing, with everything collected.
 */
import type { A2ACaller, A2ATraceContext } from './carrier.js';

export interface A2ARequestState {
  caller?: A2ACaller;
  tenant?: string;
  requestId?: string;
  trace?: A2ATraceContext;
}

const states = new WeakMap<object, A2ARequestState>();

/** Merges `patch` into the state collected for `req`. */
export function contributeA2AState(req: object, patch: A2ARequestState): void {
  const current = states.get(req);
  if (current) Object.assign(current, patch);
  else states.set(req, { ...patch });
}

/** What the middlewares collected for `req` so far (undefined when none ran). */
export function readA2AState(req: object): Readonly<A2ARequestState> | undefined {
  return states.get(req);
}
