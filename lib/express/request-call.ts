/**
 * The call layer (lib/server/call.ts) fed from an Express request, for every binding: the
 * negotiation headers in and `A2A-Extensions` out, the middlewares' state, the response's close.
 */
import type { Request, Response } from 'express';
import { readA2AState } from '../context/request-state.js';
import type { ExtensionNegotiator } from '../protocol/extensions.js';
import { buildCall, negotiateCall, type CallerResolution, type WatchClientClose } from '../server/call.js';
import type { CallContext } from '../server/request-handler.js';

/** Version (header, else the `A2A-Version` query parameter) and extensions; echoes the active ones. */
export function negotiate(req: Request, res: Response, extensions: ExtensionNegotiator): string[] {
  const version = req.get('a2a-version') || (req.query['A2A-Version'] as string | undefined);
  const active = negotiateCall(extensions, version, req.get('a2a-extensions'));
  if (active.length > 0) res.setHeader('A2A-Extensions', active.join(', '));
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
  return buildCall(readA2AState(req), resolved, statedTenant, extensions, res, watchClose);
}
