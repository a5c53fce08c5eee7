/** a2aAuthErrors: the app's own 401s and 403s on A2A routes answered in the A2A shape, every other error passed on. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request } from 'express';
import { z } from 'zod';
import { A2AError, A2A_KIT_ERROR_DOMAIN } from '../errors.js';
import { DEFAULT_REALM, writeError } from '../context/reply.js';
import { requestIdOf } from '../protocol/jsonrpc.js';
import { isA2ARequest } from './a2a-requests.js';
import { registerAuthErrors } from './wiring.js';
import { A2AMiddlewareError, errorBindingFor } from './errors.js';
import { parseOptions } from '../options.js';
import { ensureRequestId } from './tracing.js';
import type { A2AErrorMiddleware, A2AMiddlewareLogger } from './types.js';

export interface A2AAuthErrorsOptions {
  /** `realm` of the `WWW-Authenticate: Bearer` challenge (default 'a2a'). */
  readonly realm?: string;
  /** Gets one `warn` line per answered error (reason, status, request id; never credentials). */
  readonly logger?: A2AMiddlewareLogger;
  /**
   * Which requests' errors it answers. `'a2a'` (default): only requests for an A2A router (its JSON-RPC endpoint, card and HTTP+JSON routes,
   * including those the app's auth refused before the router ran); the app's own routes keep their answers. `'app'`: every 401/403 of the app.
   */
  readonly scope?: 'a2a' | 'app';
}

const QUOTABLE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/; // printable ASCII without '"' and '\'

const schema = z.strictObject({
  realm: z.string().min(1).max(128).regex(QUOTABLE, { error: 'must be printable ASCII without quotes or backslashes' }).default(DEFAULT_REALM),
  logger: z
    .custom<A2AMiddlewareLogger>((v) => v !== null && typeof v === 'object' && typeof (v as { warn?: unknown }).warn === 'function', {
      error: 'must be a logger with a warn(obj, msg) method (pino-compatible)',
    })
    .optional(),
  scope: z.enum(['a2a', 'app']).default('a2a'),
});

const FORBIDDEN = { http: 403, status: 'PERMISSION_DENIED' } as const;

/** The HTTP status of a host auth error, or undefined for anything else. */
function authStatus(err: unknown): 401 | 403 | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const { status, statusCode, name } = err as { status?: unknown; statusCode?: unknown; name?: unknown };
  const code = typeof status === 'number' ? status : statusCode;
  if (code === 401 || code === 403) return code;
  // express-jwt's UnauthorizedError always means 401 unless it says otherwise.
  return name === 'UnauthorizedError' && code === undefined ? 401 : undefined;
}

/**
 * a2aAuthErrors(options): mount it after the routes, as an error handler (`app.use(a2aAuthErrors({ realm }))` or on the agent's path). By default it
 * answers only requests for an A2A router (`scope: 'app'` for every route of the app). A 401 becomes the kit's `A2A_AUTH_REQUIRED` (no credentials:
 * express-jwt's `credentials_required`) or `A2A_AUTH_INVALID` (anything else), a 403 an `A2A_AUTH_FORBIDDEN` rejection with
 * `error="insufficient_scope"`; the body is a JSON-RPC envelope or a `google.rpc.Status` as the request's binding wants. The host library's message
 * is not sent (it may describe the token).
 */
export function a2aAuthErrors(options: A2AAuthErrorsOptions = {}): A2AErrorMiddleware {
  const { realm, logger, scope } = parseOptions('a2aAuthErrors', schema, options);
  const required = `Bearer realm="${realm}"`;
  const invalid = `Bearer realm="${realm}", error="invalid_token", error_description="The access token is invalid"`;
  const forbidden = `Bearer realm="${realm}", error="insufficient_scope"`;

  const handler = function a2aAuthErrors(err: unknown, req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void {
    const status = authStatus(err);
    if (status === undefined || res.headersSent || (scope === 'a2a' && !isA2ARequest(req))) return next(err);
    const binding = errorBindingFor(req as Request);
    const requestId = ensureRequestId(req, res);
    const id = binding === 'jsonrpc' ? requestIdOf((req as Request).body) : null;
    let error: A2AError;
    if (status === 403) {
      error = new A2AError('InvalidRequest', 'The caller is not allowed to do this', {
        reason: 'A2A_AUTH_FORBIDDEN',
        domain: A2A_KIT_ERROR_DOMAIN,
        headers: { 'WWW-Authenticate': forbidden },
      });
    } else if ((err as { code?: unknown }).code === 'credentials_required') {
      error = new A2AMiddlewareError('A2A_AUTH_REQUIRED', undefined, { headers: { 'WWW-Authenticate': required } });
    } else {
      error = new A2AMiddlewareError('A2A_AUTH_INVALID', undefined, { headers: { 'WWW-Authenticate': invalid } });
    }
    logger?.warn({ reason: error.reason, status, requestId }, 'A2A authentication failed (host auth)');
    try {
      writeError(req, res, error, binding, id, undefined, status === 403 ? FORBIDDEN : undefined);
    } catch (failure) {
      next(failure);
    }
  };
  registerAuthErrors(handler);
  return handler;
}
