/**
 * The call layer (./call.ts) fed from a request (Express, Connect or plain Node), for every binding: the version a request
 * is served with (decided here, once, by the dispatcher), extensions in and echoed out, the
 * middlewares' state, the response's close.
 */
import type { IncomingMessage } from 'node:http';
import type { Request, Response } from 'express';
import { readA2AState } from '../context/request-state.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import type { RestMatch } from '../protocol/rest.js';
import { isLegacyVersion, type ProtocolVersion, type VersionPolicy } from '../protocol/version.js';
import { headerOf, queryParamOf } from '../context/node-request.js';
import { activateExtensions, buildCall, type CallerResolution, type WatchClientClose } from './call.js';
import type { CallContext } from '../engine/request-handler.js';

/** The `A2A-Version` header, else the `A2A-Version` query parameter. */
export function requestedVersion(req: IncomingMessage): string | undefined {
  const header = headerOf(req, 'a2a-version');
  if (header) return header;
  // A repeated (or, with Express 4's qs, nested) parameter is no version: as JSON text it fails cleanly.
  const query = queryParamOf(req, 'A2A-Version');
  return typeof query === 'string' || query === undefined ? query : JSON.stringify(query);
}

/**
 * The version a request is served with, the one place it is decided: a v0.3 HTTP+JSON route (the
 * dispatcher matched it for a request that asked for v0.3) is 0.3; JSON-RPC is 0.3 when the request
 * asks for v0.3 (no A2A-Version, or 0.3) and `policy` admits it; anything else is 1.0, and the
 * 1.0 codecs refuse a stated version they do not serve (VersionNotSupported).
 */
export function servedVersion(requested: string | undefined, policy: VersionPolicy, match: RestMatch | undefined): ProtocolVersion {
  if (match) return match.v03 ? '0.3' : '1.0';
  return policy.v0_3 && isLegacyVersion(requested) ? '0.3' : '1.0';
}

/**
 * The extensions of a request served with `version`, echoed in that version's header:
 * `A2A-Extensions` for 1.0; for 0.3 its `X-A2A-Extensions` (the 1.0 spelling is accepted too).
 */
export function activate(req: Request, res: Response, extensions: ExtensionNegotiator, version: ProtocolVersion): string[] {
  if (version === '1.0') {
    const active = activateExtensions(extensions, headerOf(req, 'a2a-extensions'));
    if (active.length > 0) res.setHeader('A2A-Extensions', active.join(', '));
    return active;
  }
  const active = activateExtensions(extensions, headerOf(req, 'x-a2a-extensions') ?? headerOf(req, 'a2a-extensions'));
  if (active.length > 0) res.setHeader('X-A2A-Extensions', active.join(', '));
  return active;
}

/** The query string of `req` (below the mount), without the `?`. */
export function queryOf(req: Request): string {
  const url = req.url;
  const start = url.indexOf('?');
  return start === -1 ? '' : url.slice(start + 1);
}

/**
 * The signal aborts when the client closes the connection before the answer is finished. `on`, not
 * `once`: a response emits 'close' once, and once() would wrap the listener (a bound function and
 * its state) on every request that is watched.
 */
const watchClose: WatchClientClose<Response> = (res, abort) => {
  const onClose = (): void => {
    if (!res.writableFinished) abort();
  };
  if (res.destroyed || res.writableFinished) onClose();
  else res.on('close', onClose);
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
