/**
 * The call layer (./call.ts) fed from a request (Express, Connect or plain Node), for every binding: extensions in and echoed out, the middlewares'
 * state, the response's close.
 */
import type { Request, Response } from 'express';
import { peekRequestRecord } from '../context/request-state.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import type { ProtocolVersion } from '../protocol/version.js';
import { headerOf } from '../context/node-request.js';
import { buildCall, type CallerResolution, type WatchClientClose } from './call.js';
import type { CallContext } from '../engine/request-handler.js';

/**
 * The extensions of a request served with `version`, echoed in that version's header: `A2A-Extensions` for 1.0; for 0.3 its `X-A2A-Extensions` (the
 * 1.0 spelling is accepted too).
 */
export function activate(req: Request, res: Response, extensions: ExtensionNegotiator, version: ProtocolVersion): string[] {
  if (version === '1.0') {
    const active = extensions.activate(headerOf(req, 'a2a-extensions'));
    if (active.length > 0) res.setHeader('A2A-Extensions', active.join(', '));
    return active;
  }
  const active = extensions.activate(headerOf(req, 'x-a2a-extensions') ?? headerOf(req, 'a2a-extensions'));
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
 * The signal aborts when the client closes the connection before the answer is finished. `on`, not `once`: a response emits 'close' once, and once()
 * would wrap the listener (a bound function and its state) on every request that is watched.
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
  // A stream resumed by an SSE client (SubscribeToTask): the last event id it saw.
  const lastEventId = req.headers['last-event-id'];
  return buildCall(
    peekRequestRecord(req),
    resolved,
    statedTenant,
    extensions,
    typeof lastEventId === 'string' ? lastEventId : undefined,
    res,
    watchClose,
  );
}
