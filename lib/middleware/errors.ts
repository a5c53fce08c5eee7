/** How the middlewares report a rejection (answer it in the request's binding, or `next(err)`), and the wiring errors. */
import type { NextFunction, Request, Response } from 'express';
import { A2AMiddlewareError } from '../errors.js';
import { recordedErrorBinding, writeError } from '../context/reply.js';
import { renderError, type ErrorBinding } from '../protocol/error-body.js';
import { requestIdOf } from '../protocol/jsonrpc.js';
import { classifyAhead } from './a2a-requests.js';

export { A2A_MIDDLEWARE_ERRORS, A2A_KIT_ERROR_DOMAIN, A2AMiddlewareError, type A2AMiddlewareReason, type A2AMiddlewareErrorInit } from '../errors.js';

/** How a middleware reports a request error: write the A2A response itself, or `next(err)`. */
export type A2AErrorMode = 'respond' | 'next';

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

/**
 * The error shape of a request: the binding and version the router records before its preset runs, or, for a kit piece in front of it, as the router
 * will (classifyAhead: the same classification). A request no router serves: a parsed JSON-RPC body or a POST is JSON-RPC, anything else HTTP+JSON.
 */
export function errorBindingFor(req: Request): ErrorBinding {
  const recorded = recordedErrorBinding(req);
  if (recorded !== undefined) return recorded;
  classifyAhead(req);
  return recordedErrorBinding(req) ?? (isJsonRpcBody(req.body) || req.method === 'POST' ? 'jsonrpc' : 'rest');
}

const isJsonRpcBody = (body: unknown): boolean => body !== null && typeof body === 'object' && !Array.isArray(body) && 'jsonrpc' in body;

/** The body a middleware error is answered with: a JSON-RPC envelope or a `google.rpc.Status`. */
export function buildMiddlewareErrorBody(req: Request, err: A2AMiddlewareError): { contentType: string; body: unknown } {
  const binding = errorBindingFor(req);
  const { contentType, body } = renderError(err, binding, binding === 'jsonrpc' ? requestIdOf(req.body) : null);
  return { contentType, body };
}

/** Writes `err` (status, headers, A2A-shaped body) in `binding` when the caller knows it, else in the binding the request looks like. */
export function sendMiddlewareError(req: Request, res: Response, err: A2AMiddlewareError, binding: ErrorBinding = errorBindingFor(req)): void {
  writeError(req, res, err, binding, binding === 'jsonrpc' ? requestIdOf(req.body) : null);
}

/** A2AMiddlewareErrors are written in 'respond' mode; wiring and foreign errors always go to `next(err)`, for the app's handler and logs. */
export function reportMiddlewareError(err: unknown, req: Request, res: Response, next: NextFunction, mode: A2AErrorMode): void {
  if (mode === 'respond' && isA2AMiddlewareError(err)) {
    try {
      sendMiddlewareError(req, res, err);
    } catch (failure) {
      next(failure);
    }
    return;
  }
  next(err);
}
