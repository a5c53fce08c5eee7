/** The one writer of JSON and error answers (routes, the router's error handler, the middlewares): any thrown value in the request's binding. */
import type { ServerResponse } from 'node:http';
import { A2AError, toA2AError } from '../errors.js';
import type { Logger } from '../options.js';
import { renderError, type ErrorBinding, type StatusOverride } from '../protocol/error-body.js';
import type { JsonRpcId } from '../protocol/jsonrpc.js';
import { peekRequestRecord, requestRecord } from './request-state.js';

/** Realm of the challenge when nothing more specific is known (a2aAuth's default too). */
export const DEFAULT_REALM = 'a2a';
const DEFAULT_CHALLENGE = `Bearer realm="${DEFAULT_REALM}"`;

/** A JSON body with its length (no ETag hashing: these bodies are never the same twice). */
export function writeJson(res: ServerResponse, status: number, body: string, contentType = 'application/json'): void {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** The error shape the record of `req` states (binding and version); undefined while unclassified. */
export function recordedErrorBinding(req: object): ErrorBinding | undefined {
  const record = peekRequestRecord(req);
  if (record?.binding === undefined) return undefined;
  return record.binding === 'jsonrpc' ? 'jsonrpc' : record.version === '0.3' ? 'rest-v0.3' : 'rest';
}

/** a2aAuth's challenge for an anonymous caller, so a later 401 from the engine (the extended card) names the app's realm, not the default. */
export function rememberChallenge(req: object, challenge: () => string | undefined): void {
  requestRecord(req).challenge = challenge;
}

/** Writes `thrown` in `binding`; a non-A2AError becomes a generic Internal error (logged with a `logger`, its text never sent). */
export function writeError(
  req: object,
  res: ServerResponse,
  thrown: unknown,
  binding: ErrorBinding,
  id: JsonRpcId = null,
  logger?: Logger,
  override?: StatusOverride,
): void {
  if (logger && !(thrown instanceof A2AError)) logger.error({ err: thrown }, 'unexpected error while serving an A2A request');
  if (res.headersSent) {
    // An answer already on its way cannot turn into an error reply; cut it so it cannot pass for complete.
    if (!res.writableEnded) res.destroy();
    return;
  }
  const error = toA2AError(thrown);
  const { status, contentType, body } = renderError(error, binding, id, override);
  for (const name of Object.keys(error.headers)) res.setHeader(name, error.headers[name]);
  // A 401 always carries a challenge (RFC 9110 §15.5.2): the error's own, else a2aAuth's, else the default.
  if (status === 401 && !res.hasHeader('www-authenticate')) {
    res.setHeader('WWW-Authenticate', peekRequestRecord(req)?.challenge?.() ?? DEFAULT_CHALLENGE);
  }
  writeJson(res, status, JSON.stringify(body), contentType);
}
