/**
 * The request record (what the kit knows of one request) and the one classification of a request (route, binding, version) that the router and a
 * middleware in front of it share.
 */
import type { IncomingMessage } from 'node:http';
import { matchRestRoute, type RestLookup, type RestMatch } from '../protocol/rest.js';
import { matchV03RestRoute, V03_REST_PREFIX } from '../protocol/v0_3/rest.js';
import { isLegacyVersion, type ProtocolVersion } from '../protocol/version.js';
import type { A2ACaller, A2ARequestContext, A2ATraceContext } from './carrier.js';
import { headerOf, queryParamOf } from './node-request.js';

/** What middlewares contribute to a request (the record's public fields, as `readA2AState` returns them). */
export type A2ARequestState = { -readonly [K in 'caller' | 'tenant' | 'requestId' | 'trace']?: A2ARequestContext[K] };

/** A2A's two HTTP bindings: JSON-RPC at the mount, HTTP+JSON below it. */
type A2ABinding = 'jsonrpc' | 'rest';

/** How a binding reports that its client went away: `abort` once the connection closes before the answer is finished. */
export type WatchClientClose<Connection> = (connection: Connection, abort: () => void) => void;

/** What the engine gets with each call: the request's context, the extensions it activated and its SSE `Last-Event-ID`. */
export interface CallContext extends A2ARequestContext {
  readonly extensions: readonly string[];
  /** The SSE `Last-Event-ID` a resuming client sent (SubscribeToTask resumes after it). */
  readonly lastEventId?: string;
  /** Calls `listener` once if the client leaves before the answer is finished (cheaper than the signal's abort). */
  onClientClose?(listener: () => void): void;
  /** @deprecated The call is the request context itself; kept for 0.1 code. */
  readonly requestContext: A2ARequestContext;
}

/**
 * The one record of a request: made by the first kit piece that sees it, filled by the middlewares, classified once, then resolved into the engine's
 * call and the carrier's value. Kept in a WeakMap, not on the request: each property added to an Express 5 request gives it a new hidden class. The
 * kit's own fields are accessors, so the record reads (and serialises) as what middlewares contributed.
 */
export class RequestRecord implements A2ARequestState {
  caller: A2ACaller | undefined = undefined;
  tenant: string | undefined = undefined;
  requestId: string | undefined = undefined;
  trace: A2ATraceContext | undefined = undefined;
  #contributed = false;
  #binding: A2ABinding | undefined = undefined;
  #version: ProtocolVersion | undefined = undefined;
  #bodyLimit: number | undefined = undefined;
  #wiringNotes: number | undefined = undefined;
  #extensions: readonly string[] = NONE;
  #lastEventId: string | undefined = undefined;
  #connection: unknown = undefined;
  #watchClose: WatchClientClose<unknown> | undefined = undefined;
  #abort: AbortController | undefined = undefined;
  #challenge: (() => string | undefined) | undefined = undefined;

  /** The binding the router serves the request with (recordServedAs, classifyInFront). */
  get binding(): A2ABinding | undefined {
    return this.#binding;
  }
  get version(): ProtocolVersion | undefined {
    return this.#version;
  }
  /** The smallest body limit a2aSecurity set. */
  get bodyLimit(): number | undefined {
    return this.#bodyLimit;
  }
  set bodyLimit(limit: number | undefined) {
    this.#bodyLimit = limit;
  }
  /** See lib/middleware/wiring.ts. */
  get wiringNotes(): number | undefined {
    return this.#wiringNotes;
  }
  set wiringNotes(notes: number | undefined) {
    this.#wiringNotes = notes;
  }
  get extensions(): readonly string[] {
    return this.#extensions;
  }
  get lastEventId(): string | undefined {
    return this.#lastEventId;
  }
  /** How a 401 for this request challenges (a2aAuth's realm, lib/context/reply.ts). */
  get challenge(): (() => string | undefined) | undefined {
    return this.#challenge;
  }
  set challenge(challenge: (() => string | undefined) | undefined) {
    this.#challenge = challenge;
  }
  /** @deprecated See CallContext.requestContext. */
  get requestContext(): this {
    return this;
  }
  /** Whether a middleware contributed to it (readA2AState). */
  get contributed(): boolean {
    return this.#contributed;
  }

  /** For middlewares: the record to write the state into. */
  contribute(): this {
    this.#contributed = true;
    return this;
  }

  servedAs(binding: A2ABinding, version: ProtocolVersion): void {
    this.#binding = binding;
    this.#version = version;
  }

  /** The record as the engine's call: caller and tenant resolved, the request's extensions, its connection. */
  resolve<Connection>(
    caller: A2ACaller,
    tenant: string,
    extensions: readonly string[],
    lastEventId: string | undefined,
    connection: Connection,
    watchClose: WatchClientClose<Connection>,
  ): CallContext {
    this.caller = caller;
    this.tenant = tenant;
    this.#extensions = extensions;
    this.#lastEventId = lastEventId;
    this.#connection = connection;
    this.#watchClose = watchClose as WatchClientClose<unknown>;
    return this as this & CallContext;
  }

  /** The request's AbortSignal, made on first use: most requests never ask for it. */
  get signal(): AbortSignal | undefined {
    if (!this.#abort && this.#watchClose) {
      const controller = (this.#abort = new AbortController());
      this.#watchClose(this.#connection, () => controller.abort(new Error('the client closed the request')));
    }
    return this.#abort?.signal;
  }

  /** The engine's own watch (a blocking answer whose client leaves): the connection's close alone, without a signal. */
  onClientClose(listener: () => void): void {
    this.#watchClose?.(this.#connection, listener);
  }
}

const NONE: readonly string[] = Object.freeze([]);

/** A call no request brought (a resumed turn): the task's owner and tenant, nothing else. */
export function ownerCall(owner: string, tenant: string): CallContext {
  const record = new RequestRecord();
  record.caller = { id: owner, authenticated: false };
  record.tenant = tenant;
  return record as RequestRecord & CallContext;
}

const records = new WeakMap<object, RequestRecord>();

/** The record of `req`, created on first use. */
export function requestRecord(req: object): RequestRecord {
  let record = records.get(req);
  if (record === undefined) records.set(req, (record = new RequestRecord()));
  return record;
}

/** The record of `req`, if a kit piece made one. */
export function peekRequestRecord(req: object): RequestRecord | undefined {
  return records.get(req);
}

/** Merges `patch` into what the middlewares contributed to `req` (its four fields, nothing else). */
export function contributeA2AState(req: object, patch: A2ARequestState): void {
  const record = requestRecord(req).contribute();
  if (patch.caller !== undefined) record.caller = patch.caller;
  if (patch.tenant !== undefined) record.tenant = patch.tenant;
  if (patch.requestId !== undefined) record.requestId = patch.requestId;
  if (patch.trace !== undefined) record.trace = patch.trace;
}

/** The record of `req` for a kit middleware to set its fields on (contributeA2AState without a patch object). */
export function writableA2AState(req: object): RequestRecord {
  return requestRecord(req).contribute();
}

/** What the middlewares contributed to `req` so far (undefined when none did). */
export function readA2AState(req: object): Readonly<A2ARequestState> | undefined {
  const record = records.get(req);
  return record?.contributed ? record : undefined;
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
 * What `method` on `path` (below a router's mount) names: JSON-RPC at the mount, the public card, an HTTP+JSON route (or the methods its path
 * allows), or nothing. The one classification, for the router and for a kit middleware in front of it. With v0.3 on (`v0_3`), a `/v1/...` path naming
 * a v0.3 route is v0.3 for a request that asks for v0.3 (no A2A-Version, or 0.3); else `/v1` is a tenant.
 */
export function routeOf(method: string, path: string, requested: string | undefined, v0_3: boolean): 'jsonrpc' | 'card' | RestLookup | undefined {
  if (path === '/' || path === '') return 'jsonrpc';
  if (path === CARD_PATH) return 'card';
  return (v0_3 && path.startsWith(V03_REST_PREFIX) && isLegacyVersion(requested) && matchV03RestRoute(method, path)) || matchRestRoute(method, path);
}

/** The served version, decided here only: a v0.3 HTTP+JSON route is 0.3; JSON-RPC is 0.3 when asked for and `v0_3` admits it; else 1.0. */
export function servedVersion(match: RestMatch | undefined, requested: string | undefined, v0_3: boolean): ProtocolVersion {
  if (match) return match.v03 ? '0.3' : '1.0';
  return v0_3 && isLegacyVersion(requested) ? '0.3' : '1.0';
}

/** Records how `req` is served, so that a rejection (auth, tenant, body limit) answers in that shape. */
export function recordServedAs(req: object, binding: A2ABinding, version: ProtocolVersion): void {
  requestRecord(req).servedAs(binding, version);
}

/** Classifies `req` for a kit piece in front of the router (`path`: below its mount) as the router will; false when it serves no A2A call there. */
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
