/** Types shared by the middleware factories. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../options.js';

/** A middleware as Express calls it. */
type ExpressMiddleware = (req: Request, res: Response, next: NextFunction) => void;

/**
 * What every factory returns: a plain, named `(req, res, next)` middleware, typed for Express and for Connect or plain Node (it reads nothing Express
 * alone adds), so either host takes it as is.
 */
export type A2AMiddleware = ExpressMiddleware & ((req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void);

/** An error handler as Express calls it, and as Connect or plain Node do: either host takes it as is. */
export type A2AErrorMiddleware = ((err: unknown, req: Request, res: Response, next: NextFunction) => void) &
  ((err: unknown, req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void);

/** Which factory built a middleware (lets the router and preset check wiring). */
export type A2AMiddlewareKind = 'auth' | 'tenant' | 'tracing' | 'security';

const KIND = Symbol.for('a2a-express-kit.middleware-kind');

export function brandMiddleware(middleware: ExpressMiddleware, kind: A2AMiddlewareKind): A2AMiddleware {
  Object.defineProperty(middleware, KIND, { value: kind, enumerable: false });
  return middleware as A2AMiddleware;
}

/** The kit middleware kind of `value`, or undefined for anything else. */
export function a2aMiddlewareKind(value: unknown): A2AMiddlewareKind | undefined {
  if (typeof value !== 'function') return undefined;
  return (value as unknown as { [KIND]?: A2AMiddlewareKind })[KIND];
}

/** The part of the kit's (pino-compatible) Logger the middlewares use. */
export type A2AMiddlewareLogger = Pick<Logger, 'warn'>;
