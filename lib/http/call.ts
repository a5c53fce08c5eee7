/**
 * The call layer every binding shares: version and extension negotiation, then the request's record resolved into the call (the app's callContext
 * answer over what the middlewares contributed).
 */
import { ANONYMOUS_CALLER } from '../context/anonymous.js';
import { RequestRecord, type A2ARequestState, type CallContext, type WatchClientClose } from '../context/request-state.js';
import { invalidParams } from '../errors.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { negotiateVersion } from '../protocol/version.js';

export { ANONYMOUS_CALLER };
export type { WatchClientClose };

/** Who is calling, as an application states it itself (overrides what middlewares contributed). */
export type CallerResolution = Readonly<Pick<A2ARequestState, 'caller' | 'tenant'>>;

/**
 * Checks the requested protocol version (header, or the binding's fallback) and activates the extensions the card declares. Returns the active
 * extension URIs, which the binding echoes in `A2A-Extensions`. Throws VersionNotSupported or ExtensionSupportRequired.
 */
export function negotiateCall(extensions: ExtensionNegotiator, version: string | undefined, requestedExtensions: string | undefined): string[] {
  negotiateVersion(version);
  return extensions.activate(requestedExtensions);
}

/**
 * The call for one request: its record (made here when no kit piece made one), resolved. `resolved` (the app's callContext hook) wins over what the
 * middlewares contributed; a tenant stated in the params must match the resolved one (-32602, field `tenant`) and is used when none was resolved.
 * Synchronous: the hot path stays free of promises.
 */
export function buildCall<Connection>(
  record: RequestRecord | undefined,
  resolved: CallerResolution | undefined,
  statedTenant: string | undefined,
  extensions: readonly string[],
  lastEventId: string | undefined,
  connection: Connection,
  watchClose: WatchClientClose<Connection>,
): CallContext {
  const caller = resolved?.caller ?? record?.caller ?? ANONYMOUS_CALLER;
  const resolvedTenant = resolved?.tenant ?? record?.tenant;
  if (resolvedTenant !== undefined && statedTenant && statedTenant !== resolvedTenant) {
    throw invalidParams([{ field: 'tenant', description: 'does not match the tenant this request was authorized for' }]);
  }
  const tenant = resolvedTenant ?? statedTenant ?? '';
  return (record ?? new RequestRecord()).resolve(caller, tenant, extensions, lastEventId, connection, watchClose);
}
