/**
 * The call layer every binding shares: version and extension negotiation, then who is calling
 * under which tenant (what the middlewares contributed, or the app's own answer), the stated-tenant
 * check and the request's AbortSignal. Transport-neutral: a binding passes header values, the
 * collected request state and a way to learn that its client went away.
 */
import type { A2ACaller, A2ARequestContext } from '../context/carrier.js';
import type { A2ARequestState } from '../context/request-state.js';
import { invalidParams } from '../errors.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { negotiateVersion } from '../protocol/version.js';
import type { CallContext } from '../engine/request-handler.js';

/** Who is calling, as an application states it itself (overrides what middlewares contributed). */
export interface CallerResolution {
  readonly caller?: A2ACaller;
  readonly tenant?: string;
}

/** Without auth every caller is the same anonymous principal (one bucket); a2aAuth changes that. */
export const ANONYMOUS_CALLER: A2ACaller = Object.freeze({ id: 'anonymous', authenticated: false });

/**
 * How a binding reports that its client went away: call `abort` once the connection closes before
 * the answer was finished, or at once if it already has. A plain function of the connection, so a
 * request costs no closure until someone asks for its signal.
 */
export type WatchClientClose<Connection> = (connection: Connection, abort: () => void) => void;

/**
 * Checks the requested protocol version (header, or the binding's fallback) and activates the
 * extensions the card declares. Returns the active extension URIs, which the binding echoes in
 * `A2A-Extensions`. Throws VersionNotSupported or ExtensionSupportRequired.
 */
export function negotiateCall(extensions: ExtensionNegotiator, version: string | undefined, requestedExtensions: string | undefined): string[] {
  negotiateVersion(version);
  return extensions.activate(requestedExtensions);
}

/** The extensions activated for a request (see negotiateCall); throws ExtensionSupportRequired. */
export function activateExtensions(extensions: ExtensionNegotiator, requestedExtensions: string | undefined): string[] {
  return extensions.activate(requestedExtensions);
}

/**
 * The call for one request. `resolved` (the app's callContext hook) wins over `state` (what the
 * middlewares contributed); a tenant stated in the params must match the resolved one (-32602,
 * field `tenant`) and is used when none was resolved. Synchronous: the hot path stays free of
 * promises.
 */
export function buildCall<Connection>(
  state: Readonly<A2ARequestState> | undefined,
  resolved: CallerResolution | undefined,
  statedTenant: string | undefined,
  extensions: readonly string[],
  connection: Connection,
  watchClose: WatchClientClose<Connection>,
): CallContext {
  const caller = resolved?.caller ?? state?.caller ?? ANONYMOUS_CALLER;
  const resolvedTenant = resolved?.tenant ?? state?.tenant;
  if (resolvedTenant !== undefined && statedTenant && statedTenant !== resolvedTenant) {
    throw invalidParams([{ field: 'tenant', description: 'does not match the tenant this request was authorized for' }]);
  }
  const tenant = resolvedTenant ?? statedTenant ?? '';
  const requestContext = new CallRequestContext(caller, tenant, state, connection, watchClose);
  // The engine's own watch (a blocking answer whose client leaves): the connection's close alone,
  // without the AbortController and EventTarget listener a signal costs.
  const onClientClose = (listener: () => void): void => watchClose(connection, listener);
  return { caller, tenant, extensions, requestContext, onClientClose };
}

/**
 * The request context of one call. A class rather than an object literal with a `signal` getter:
 * V8 builds such a literal in dictionary mode, a map of its own per request, at many times the
 * cost of this object (and every read of it is a dictionary lookup).
 */
class CallRequestContext<Connection> implements A2ARequestContext {
  readonly caller: A2ACaller;
  readonly tenant: string;
  readonly requestId: string | undefined;
  readonly trace: A2ARequestContext['trace'];
  readonly #connection: Connection;
  readonly #watchClose: WatchClientClose<Connection>;
  #abort: AbortController | undefined;

  constructor(
    caller: A2ACaller,
    tenant: string,
    state: Readonly<A2ARequestState> | undefined,
    connection: Connection,
    watchClose: WatchClientClose<Connection>,
  ) {
    this.caller = caller;
    this.tenant = tenant;
    this.requestId = state?.requestId;
    this.trace = state?.trace;
    this.#connection = connection;
    this.#watchClose = watchClose;
  }

  /** The request's AbortSignal, made on first use: most requests never ask for it. */
  get signal(): AbortSignal {
    if (!this.#abort) {
      const controller = (this.#abort = new AbortController());
      this.#watchClose(this.#connection, () => controller.abort(new Error('the client closed the request')));
    }
    return this.#abort.signal;
  }
}
