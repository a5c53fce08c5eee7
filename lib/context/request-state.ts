/**
 * Per-request contributions from middlewares (auth, tenant, tracing) that run before the router.
 * They write here instead of entering AsyncLocalStorage themselves: the router enters the carrier
 * once, after body parsing, with everything collected.
 */
import type { IncomingMessage } from 'node:http';
import { matchRestRoute, type RestLookup, type RestMatch } from '../protocol/rest.js';
import { matchV03RestRoute, V03_REST_PREFIX } from '../protocol/v0_3/rest.js';
import { isLegacyVersion, type ProtocolVersion } from '../protocol/version.js';
import type { A2ACaller, A2ATraceContext } from './carrier.js';
import { headerOf, queryParamOf } from './node-request.js';

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
type A2AProtocolVersion = ProtocolVersion;

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

/** The `A2A-Version` header, else the `A2A-Version` query parameter. */
export function requestedVersion(req: IncomingMessage): string | undefined {
  const header = headerOf(req, 'a2a-version');
  if (header) return header;
  // A repeated (or, with Express 4's qs, nested) parameter is no version: as JSON text it fails cleanly.
  const query = queryParamOf(req, 'A2A-Version');
  return typeof query === 'string' || query === undefined ? query : JSON.stringify(query);
}

const CARD_PATH = '/.well-known/agent-card.json';

/**
 * What `method` on `path` (below a router's mount) names: JSON-RPC at the mount, the public card,
 * an HTTP+JSON route (or the methods its path allows), or nothing. The one classification, for the
 * router and for a kit middleware in front of it. With v0.3 on (`v0_3`), a `/v1/...` path naming a
 * v0.3 route is v0.3 for a request that asks for v0.3 (no A2A-Version, or 0.3); else `/v1` is a tenant.
 */
export function routeOf(method: string, path: string, requested: string | undefined, v0_3: boolean): 'jsonrpc' | 'card' | RestLookup | undefined {
  if (path === '/' || path === '') return 'jsonrpc';
  if (path === CARD_PATH) return 'card';
  return (v0_3 && path.startsWith(V03_REST_PREFIX) && isLegacyVersion(requested) && matchV03RestRoute(method, path)) || matchRestRoute(method, path);
}

/**
 * The version a request is served with, the one place it is decided: a v0.3 HTTP+JSON route is
 * 0.3; JSON-RPC (`match` undefined) is 0.3 when the request asks for v0.3 and `v0_3` admits it;
 * anything else 1.0 (whose codecs refuse a stated version they do not serve).
 */
export function servedVersion(match: RestMatch | undefined, requested: string | undefined, v0_3: boolean): A2AProtocolVersion {
  if (match) return match.v03 ? '0.3' : '1.0';
  return v0_3 && isLegacyVersion(requested) ? '0.3' : '1.0';
}

/** Records how `req` is served, so that a rejection (auth, tenant, body limit) answers in that shape. */
export function recordServedAs(req: object, binding: A2ABinding, version: A2AProtocolVersion): void {
  const record = requestRecord(req);
  record.binding = binding;
  record.version = version;
}

/**
 * Classifies `req` for a kit middleware mounted in front of the router, where `path` is the
 * request's path below the router's mount: as the router will (routeOf), unless it already did.
 * A card request or a path the router does not serve leaves the record unclassified.
 */
export function classifyInFront(req: IncomingMessage, path: string, v0_3: boolean): boolean {
  if (peekRequestRecord(req)?.binding !== undefined) return true;
  const method = req.method ?? 'GET';
  const requested = requestedVersion(req);
  const route = routeOf(method, path, requested, v0_3);
  if (route === undefined || route === 'card' || (route === 'jsonrpc' && method !== 'POST')) return false;
  if (route === 'jsonrpc') recordServedAs(req, 'jsonrpc', servedVersion(undefined, requested, v0_3));
  // A path the router answers 405 is answered in v1.0's shape, as the router does.
  else recordServedAs(req, 'rest', 'match' in route ? servedVersion(route.match, requested, v0_3) : '1.0');
  return true;
}
