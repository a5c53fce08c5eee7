/**
 * The call layer (lib/engine/call.ts) fed from an Express request, for every binding: the
 * negotiation headers in and `A2A-Extensions` out, the middlewares' state, the response's close.
 */
import type { Request, Response } from 'express';
import { readA2AState } from '../context/request-state.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { isLegacyVersion, type ProtocolVersion, type VersionPolicy } from '../protocol/version.js';
import {
  activateExtensions,
  buildCall,
  negotiateCall,
  negotiateCallVersion,
  type CallerResolution,
  type WatchClientClose,
} from '../engine/call.js';
import type { CallContext } from '../engine/request-handler.js';

/** The `A2A-Version` header, else the `A2A-Version` query parameter. */
function requestedVersion(req: Request): string | undefined {
  // A repeated (or, with Express 4's qs, nested) parameter is no version: as JSON text it fails cleanly.
  const query: unknown = req.query['A2A-Version'];
  return req.get('a2a-version') || (typeof query === 'string' || query === undefined ? query : JSON.stringify(query));
}

/** Version (1.0 only) and extensions; echoes the active ones. */
export function negotiate(req: Request, res: Response, extensions: ExtensionNegotiator): string[] {
  const active = negotiateCall(extensions, requestedVersion(req), req.get('a2a-extensions'));
  if (active.length > 0) res.setHeader('A2A-Extensions', active.join(', '));
  return active;
}

/** The version `req` is served with under `policy` (see negotiateCallVersion). */
export function versionOf(req: Request, policy: VersionPolicy): ProtocolVersion {
  return negotiateCallVersion(requestedVersion(req), policy);
}

/** Whether `req` asks for v0.3: no A2A-Version (header or query parameter), an empty one, or 0.3.x. */
export function requestsV03(req: Request): boolean {
  return isLegacyVersion(requestedVersion(req));
}

/**
 * The extensions of a request served with `version`, echoed in that version's header:
 * `A2A-Extensions` for 1.0; for 0.3 its `X-A2A-Extensions` (the 1.0 spelling is accepted too).
 */
export function activate(req: Request, res: Response, extensions: ExtensionNegotiator, version: ProtocolVersion): string[] {
  if (version === '1.0') {
    const active = activateExtensions(extensions, req.get('a2a-extensions'));
    if (active.length > 0) res.setHeader('A2A-Extensions', active.join(', '));
    return active;
  }
  const active = activateExtensions(extensions, req.get('x-a2a-extensions') ?? req.get('a2a-extensions'));
  if (active.length > 0) res.setHeader('X-A2A-Extensions', active.join(', '));
  return active;
}

/** The signal aborts when the client closes the connection before the answer is finished. */
const watchClose: WatchClientClose<Response> = (res, abort) => {
  const onClose = (): void => {
    if (!res.writableFinished) abort();
  };
  if (res.destroyed || res.writableFinished) onClose();
  else res.once('close', onClose);
};

/** The call for `req`: the app's own answer (`resolved`) or what the middlewares contributed. */
export function callOf(
  req: Request,
  res: Response,
  resolved: CallerResolution | undefined,
  statedTenant: string | undefined,
  extensions: readonly string[],
): CallContext {
  const call = buildCall(readA2AState(req), resolved, statedTenant, extensions, res, watchClose);
  // A stream resumed by an SSE client (SubscribeToTask): the last event id it saw.
  const lastEventId = req.headers['last-event-id'];
  return typeof lastEventId === 'string' ? { ...call, lastEventId } : call;
}
