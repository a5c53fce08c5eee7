/**
 * Per-request contributions from middlewares (auth, tenant, tracing) that run before the router.
 * They write here instead of entering AsyncLocalStorage themselves: the router enters the carrier
 * once, after body parsing, with everything collected.
 */
import type { A2ACaller, A2ATraceContext } from './carrier.js';

export interface A2ARequestState {
  caller?: A2ACaller;
  tenant?: string;
  requestId?: string;
  trace?: A2ATraceContext;
}

/**
 * Everything the kit keeps about one request while its middlewares run: the A2A state, the body
 * limit a2aSecurity chose, the wiring notes of a2aAuth. One record with a fixed shape, kept in a
 * WeakMap rather than on the request. Express 5 gives every request object a hidden class of its
 * own, so each property added to it makes every later property read on it (ours, Express's per
 * layer, body-parser's) miss its inline cache again: three symbol slots cost more than the
 * lookups. A WeakMap entry (the identity hash lives in the object's property array) leaves the
 * request's hidden class alone.
 */
class A2ARequestRecord {
  state: A2ARequestState | undefined = undefined;
  /** The binding the router serves the request with, recorded before its middlewares run. */
  binding: A2ABinding | undefined = undefined;
  /** The protocol version the router serves the request with (see recordServedAs). */
  version: A2AProtocolVersion | undefined = undefined;
  bodyLimit: number | undefined = undefined;
  /** See lib/middleware/wiring.ts. */
  wiringNotes: number | undefined = undefined;
}

/** A2A's two HTTP bindings: JSON-RPC at the mount, HTTP+JSON below it. */
type A2ABinding = 'jsonrpc' | 'rest';
/** The protocol versions a request can be served with (v0.3: compatibility). */
type A2AProtocolVersion = '1.0' | '0.3';

const records = new WeakMap<object, A2ARequestRecord>();

/** The record of `req`, created on first use. */
export function requestRecord(req: object): A2ARequestRecord {
  let record = records.get(req);
  if (record === undefined) records.set(req, (record = new A2ARequestRecord()));
  return record;
}

/** The record of `req`, if any middleware made one. */
export function peekRequestRecord(req: object): A2ARequestRecord | undefined {
  return records.get(req);
}

/** Merges `patch` into the state collected for `req`. */
export function contributeA2AState(req: object, patch: A2ARequestState): void {
  const record = requestRecord(req);
  const current = record.state;
  if (current) Object.assign(current, patch);
  // Not `{ ...patch }`: V8 gives a spread copy that later gains a property (caller, tenant) a fresh
  // hidden class on every request, so every read of the state (router, engine) misses its inline
  // cache. A copy onto `{}` follows the shared transitions. The own-`__proto__` case keeps the
  // spread's semantics (an own property, not a prototype).
  else record.state = Object.hasOwn(patch, '__proto__') ? { ...patch } : Object.assign({}, patch);
}

/**
 * The state of `req` to write into, made empty on first use: the kit's middlewares set their fields
 * on it directly, which is what contributeA2AState does without a patch object to allocate and copy.
 */
export function writableA2AState(req: object): A2ARequestState {
  const record = requestRecord(req);
  return record.state ?? (record.state = {});
}

/** What the middlewares collected for `req` so far (undefined when none ran). */
export function readA2AState(req: object): Readonly<A2ARequestState> | undefined {
  return records.get(req)?.state;
}

/**
 * The router states how it serves `req` before its middlewares run, so that a rejection (auth,
 * tenant, body limit) answers in that binding's and version's shape instead of guessing from the path.
 */
export function recordServedAs(req: object, binding: A2ABinding, version: A2AProtocolVersion): void {
  const record = requestRecord(req);
  record.binding = binding;
  record.version = version;
}
