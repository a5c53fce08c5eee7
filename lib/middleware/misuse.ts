/**
 * Detects a factory handed to Express uncalled (`app.use(a2aAuth)`): Express then calls the factory itself with (req, res, next) on the first
 * request, which we recognise and report via next(err).
 */
import { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction } from 'express';
import { A2AWiringError } from './errors.js';
import type { A2AMiddleware } from './types.js';

function looksLikeRequest(value: unknown): value is IncomingMessage {
  if (value instanceof IncomingMessage) return true;
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof (value as { method?: unknown }).method === 'string' &&
    typeof (value as { headers?: unknown }).headers === 'object' &&
    typeof (value as { url?: unknown }).url === 'string'
  );
}

function looksLikeResponse(value: unknown): boolean {
  return (
    value instanceof ServerResponse ||
    (value !== null && typeof value === 'object' && typeof (value as { setHeader?: unknown }).setHeader === 'function')
  );
}

/** The error a misused factory reports; also used when a source helper is passed uncalled. */
function misuseError(factory: string, example: string): A2AWiringError {
  return new A2AWiringError('A2A_MIDDLEWARE_MISUSE', `${factory} was passed to app.use() without being called: write app.use(${example})`);
}

/** When `args` are Express's (req, res, next): reports the misuse through `next`, returns a pass-through for the factory to return. */
export function detectUncalledFactory(factory: string, example: string, args: ArrayLike<unknown>): A2AMiddleware | undefined {
  if (args.length < 3 || !looksLikeRequest(args[0]) || !looksLikeResponse(args[1]) || typeof args[2] !== 'function') {
    return undefined;
  }
  (args[2] as NextFunction)(misuseError(factory, example));
  return function a2aMisusedFactory(_req: unknown, _res: unknown, next: () => void) {
    next();
  };
}
