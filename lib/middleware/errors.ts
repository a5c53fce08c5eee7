/**
 * Errors raised by the A2A middlewares (auth, tenant, tracing, security): stable reasons mapped onto
 * the core's A2AError kinds, wiring errors, and the one function that writes a middleware error.
 */
import type { NextFunction, Request, Response } from 'express';
import { A2AError, errorDetails, type A2AErrorName } from '../errors.js';
import { errorEnvelope } from '../protocol/jsonrpc.js';

/** How a middleware reports a request error: write the A2A response itself, or `next(err)`. */
export type A2AErrorMode = 'respond' | 'next';

/**
 * Stable reason → the core error kind (JSON-RPC code), HTTP status and REST status. The A2A spec
 * has no JSON-RPC code for authentication failures and reserves -32001…-32099 for its own errors,
 * so credential failures use the standard -32600 (Invalid Request, the core's `Unauthenticated`)
 * and let HTTP 401 + `WWW-Authenticate` carry the meaning; the `ErrorInfo.reason` in `error.data`
 * is the stable reason below.
 */
export const A2A_MIDDLEWARE_ERRORS = {
  A2A_AUTH_REQUIRED: { kind: 'Unauthenticated', httpStatus: 401, status: 'UNAUTHENTICATED', message: 'Authentication required' },
  A2A_AUTH_INVALID: { kind: 'Unauthenticated', httpStatus: 401, status: 'UNAUTHENTICATED', message: 'Invalid credentials' },
  A2A_AUTH_UNAVAILABLE: { kind: 'Internal', httpStatus: 503, status: 'UNAVAILABLE', message: 'Authentication is temporarily unavailable' },
  A2A_TENANT_REQUIRED: { kind: 'InvalidParams', httpStatus: 400, status: 'INVALID_ARGUMENT', message: 'A tenant is required' },
  A2A_INVALID_TENANT: { kind: 'InvalidParams', httpStatus: 400, status: 'INVALID_ARGUMENT', message: 'Invalid tenant' },
  A2A_INVALID_REQUEST_ID: { kind: 'InvalidRequest', httpStatus: 400, status: 'INVALID_ARGUMENT', message: 'Invalid request id' },
  A2A_BODY_TOO_LARGE: { kind: 'PayloadTooLarge', httpStatus: 413, status: 'INVALID_ARGUMENT', message: 'Request body too large' },
} as const satisfies Record<string, { kind: A2AErrorName; httpStatus: number; status: string; message: string }>;

export type A2AMiddlewareReason = keyof typeof A2A_MIDDLEWARE_ERRORS;

/** `ErrorInfo.domain` for the kit's own reasons (A2A's own errors use `a2a-protocol.org`). */
export const A2A_KIT_ERROR_DOMAIN = 'a2a-express-kit';

export interface A2AMiddlewareErrorInit {
  /** Response headers that belong to this error (e.g. `WWW-Authenticate`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Extra `ErrorInfo.metadata` (string values only; never credentials). */
  readonly metadata?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

/**
 * A request rejected by a middleware: an A2AError (so the router's error handler can write it in
 * 'next' mode) with a stable `reason`, its own HTTP status, and headers to send.
 */
export class A2AMiddlewareError extends A2AError {
  declare readonly reason: A2AMiddlewareReason;
  override readonly httpStatus: number;
  /** `google.rpc.Status.status` for HTTP+JSON bodies. */
  readonly status: string;
  readonly headers: Readonly<Record<string, string>>;

  constructor(reason: A2AMiddlewareReason, message?: string, init: A2AMiddlewareErrorInit = {}) {
    const spec = A2A_MIDDLEWARE_ERRORS[reason];
    super(spec.kind, message ?? spec.message, {
      ...(init.metadata ? { metadata: { ...init.metadata } } : {}),
      ...(init.cause === undefined ? {} : { cause: init.cause }),
      reason,
      domain: A2A_KIT_ERROR_DOMAIN,
    });
    this.name = 'A2AMiddlewareError';
    this.httpStatus = spec.httpStatus;
    this.status = spec.status;
    this.headers = init.headers ?? {};
  }
}

/** Codes of programming errors: they go to next(err) and the app's error handler, never to the client. */
export type A2AWiringErrorCode = 'A2A_MIDDLEWARE_MISUSE' | 'A2A_MIDDLEWARE_ORDER' | 'A2A_AUTH_MISCONFIGURED';

/** A wiring or configuration mistake found while serving a request (uncalled factory, wrong order, bad mapping). */
export class A2AWiringError extends Error {
  readonly code: A2AWiringErrorCode;
  constructor(code: A2AWiringErrorCode, message: string) {
    super(message);
    this.name = 'A2AWiringError';
    this.code = code;
  }
}

export function isA2AMiddlewareError(value: unknown): value is A2AMiddlewareError {
  return value instanceof A2AMiddlewareError;
}

// REST routes of the HTTP+JSON binding (optionally behind a `/{tenant}` or `/v1` prefix).
const REST_PATH = /(?:^|\/)(?:message:|tasks(?:[/:]|$)|extendedAgentCard$|card$)/;

/**
 * Which binding an error body should speak. A JSON-RPC body (already parsed) decides; otherwise a
 * POST to a path that is not a REST route is taken as JSON-RPC, everything else as HTTP+JSON.
 */
export function errorBindingFor(req: Request): 'jsonrpc' | 'rest' {
  const body: unknown = req.body;
  if (body !== null && typeof body === 'object' && !Array.isArray(body) && 'jsonrpc' in body) return 'jsonrpc';
  if (req.method !== 'POST') return 'rest';
  return REST_PATH.test(req.path ?? '') ? 'rest' : 'jsonrpc';
}

function jsonRpcIdOf(req: Request): string | number | null {
  const body: unknown = req.body;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** The one builder of middleware error bodies: a JSON-RPC envelope or a `google.rpc.Status`. */
export function buildMiddlewareErrorBody(
  req: Request,
  err: A2AMiddlewareError,
): { contentType: string; body: unknown } {
  if (errorBindingFor(req) === 'jsonrpc') {
    return { contentType: 'application/json', body: errorEnvelope(jsonRpcIdOf(req), err) };
  }
  return {
    contentType: 'application/a2a+json',
    body: { error: { code: err.httpStatus, status: err.status, message: err.message, details: errorDetails(err) ?? [] } },
  };
}

/** Writes `err` as the response (status, its headers, the A2A-shaped body). */
export function sendMiddlewareError(req: Request, res: Response, err: A2AMiddlewareError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { contentType, body } = buildMiddlewareErrorBody(req, err);
  res.status(err.httpStatus);
  for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', `${contentType}; charset=utf-8`);
  res.end(JSON.stringify(body));
}

/**
 * Routes an error raised while handling a request: A2AMiddlewareErrors are written directly in
 * 'respond' mode; wiring errors and foreign errors always go to `next(err)` so the app's error
 * handler and logs see them.
 */
export function reportMiddlewareError(
  err: unknown,
  req: Request,
  res: Response,
  next: NextFunction,
  mode: A2AErrorMode,
): void {
  if (mode === 'respond' && isA2AMiddlewareError(err)) {
    try {
      sendMiddlewareError(req, res, err);
    } catch (writeError) {
      next(writeError);
    }
    return;
  }
  next(err);
}
