/**
 * Per-request contributions from middlewares (auth, tenant, tracing) that run before the router.
 * They write here, on the request object, instead of entering AsyncLocalStorage themselves:
 * the router enters the carrier once, after body parsing, with everything collected.
 */
import type { A2ACaller, A2ATraceContext } from './carrier.js';

export interface A2ARequestState {
  caller?: A2ACaller;
  tenant?: string;
  requestId?: string;
  trace?: A2ATraceContext;
}

// A symbol-keyed slot on the request rather than a WeakMap keyed by it: every request would add
// a short-lived ephemeron entry, which costs the young-generation GC more than a property does.
// A symbol is invisible to JSON.stringify, for...in and Object.keys.
const STATE = Symbol('a2a-express-kit.request-state');

type WithState = { [STATE]?: A2ARequestState };

/** Merges `patch` into the state collected for `req`. */
export function contributeA2AState(req: object, patch: A2ARequestState): void {
  const current = (req as WithState)[STATE];
  if (current) Object.assign(current, patch);
  else (req as WithState)[STATE] = { ...patch };
}

/** What the middlewares collected for `req` so far (undefined when none ran). */
export function readA2AState(req: object): Readonly<A2ARequestState> | undefined {
  return (req as WithState)[STATE];
}
