/**
 * The one writer of error responses, for the routes, the router's error handler and the
 * middlewares: any thrown value as a JSON-RPC error envelope or, for the HTTP+JSON binding, a
 * google.rpc.Status body. The caller names the binding; headers that belong to the error
 * (WWW-Authenticate, Retry-After) travel on the error.
 */
import type { Request, Response } from 'express';
import { A2AError, A2AMiddlewareError, ERROR_TABLE, errorDetails, toA2AError } from '../errors.js';
import type { Logger } from '../logger.js';
import { errorEnvelope, type JsonRpcId } from '../protocol/jsonrpc.js';
import { v03RestErrorBody } from '../protocol/v0_3/rest.js';
import { writeJson } from './respond.js';

/** Which binding an error reply speaks ('rest-v0.3': v0.3 HTTP+JSON under `/v1/...`, compatibility). */
export type ErrorBinding = 'jsonrpc' | 'rest' | 'rest-v0.3';

/** Realm of the challenge when nothing more specific is known (a2aAuth's default too). */
export const DEFAULT_REALM = 'a2a';
const DEFAULT_CHALLENGE = `Bearer realm="${DEFAULT_REALM}"`;

const CONTENT_TYPE: Record<ErrorBinding, string> = { jsonrpc: 'application/json', rest: 'application/a2a+json', 'rest-v0.3': 'application/json' };

/**
 * HTTP status of `error` in `binding`. HTTP+JSON (either version): the table's. JSON-RPC: 200, the envelope
 * speaks, except where HTTP itself must: 401 (clients look for the challenge), 413, 503, and a
 * middleware's rejection, which keeps its status because no A2A method was reached.
 */
export function httpStatusOf(error: A2AError, binding: ErrorBinding): number {
  if (binding !== 'jsonrpc' || error instanceof A2AMiddlewareError) return error.httpStatus;
  // Unavailable (shutting down, store down) keeps its 503 so that load balancers and clients retry.
  return error.kind === 'Unauthenticated' || error.kind === 'PayloadTooLarge' || error.kind === 'Unavailable' ? error.httpStatus : 200;
}

/**
 * An HTTP status the table has no kind for, in both bindings: 405 on a path the router serves with
 * another method, 404 for a path it does not serve, 403 from the host's auth. `status` is the
 * `google.rpc.Status.status` of the HTTP+JSON body.
 */
export interface StatusOverride {
  readonly http: number;
  readonly status: string;
}

/** The HTTP+JSON error body: a google.rpc.Status. */
export function statusBody(error: A2AError, override?: StatusOverride) {
  return {
    error: {
      code: override?.http ?? error.httpStatus,
      status: override?.status ?? ERROR_TABLE[error.kind].status,
      message: error.message,
      details: errorDetails(error) ?? [],
    },
  };
}

/** Status, content type and body of `error` in `binding`; `id` is the JSON-RPC request id. */
export function renderError(
  error: A2AError,
  binding: ErrorBinding,
  id: JsonRpcId = null,
  override?: StatusOverride,
): { status: number; contentType: string; body: object } {
  return {
    status: override?.http ?? httpStatusOf(error, binding),
    contentType: CONTENT_TYPE[binding],
    body: binding === 'jsonrpc' ? errorEnvelope(id, error) : binding === 'rest' ? statusBody(error, override) : v03RestErrorBody(error),
  };
}

const CHALLENGE = Symbol('a2a-express-kit.challenge');
type WithChallenge = { [CHALLENGE]?: () => string | undefined };

/**
 * a2aAuth records how it challenges on this request, so a 401 the engine raises later (the
 * extended card for an anonymous caller) names the realm the app configured, not the default.
 */
export function rememberChallenge(req: object, challenge: () => string | undefined): void {
  (req as WithChallenge)[CHALLENGE] = challenge;
}

/**
 * Writes `thrown` as the response in `binding`. Anything that is not an A2AError becomes a generic
 * Internal error; with a `logger` it is logged, and its text never reaches the client.
 */
export function writeError(
  req: Request,
  res: Response,
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
    res.setHeader('WWW-Authenticate', (req as WithChallenge)[CHALLENGE]?.() ?? DEFAULT_CHALLENGE);
  }
  writeJson(res, status, JSON.stringify(body), contentType);
}
