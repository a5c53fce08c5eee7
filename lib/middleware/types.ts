/** Types shared by the middleware factories. */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../logger.js';

/** What every factory returns: a plain, named Express middleware. */
export type A2AMiddleware = (req: Request, res: Response, next: NextFunction) => void;

/** Which factory built a middleware (lets the router and preset check wiring). */
export type A2AMiddlewareKind = 'auth' | 'tenant' | 'tracing' | 'security';

const KIND = Symbol.for('a2a-express-kit.middleware-kind');

export function brandMiddleware<T extends A2AMiddleware>(middleware: T, kind: A2AMiddlewareKind): T {
  Object.defineProperty(middleware, KIND, { value: kind, enumerable: false });
  return middleware;
}

/** The kit middleware kind of `value`, or undefined for anything else. */
export function a2aMiddlewareKind(value: unknown): A2AMiddlewareKind | undefined {
  if (typeof value !== 'function') return undefined;
  return (value as unknown as { [KIND]?: A2AMiddlewareKind })[KIND];
}

/** The part of the kit's (pino-compatible) Logger the middlewares use. */
export type A2AMiddlewareLogger = Pick<Logger, 'warn'>;
