/** What the router answers outside serve(): its one error handler, and the 404/405 under the mount. */
import type { NextFunction, Request, Response } from 'express';
import { writeError } from '../context/reply.js';
import { A2AError } from '../errors.js';
import type { Logger } from '../options.js';
import type { ErrorBinding, StatusOverride } from '../protocol/error-body.js';
import type { ServedBindings } from '../protocol/card.js';
import { requestIdOf } from '../protocol/jsonrpc.js';
import { A2AWiringError, errorBindingFor } from '../middleware/errors.js';
import { bodyTooLargeError } from '../middleware/security.js';
import type { wiringReporter } from '../middleware/wiring.js';

export const RPC_METHODS = 'POST, OPTIONS';
export const CARD_METHODS = 'GET, HEAD, OPTIONS';
const NOT_FOUND: StatusOverride = { http: 404, status: 'NOT_FOUND' };
const METHOD_NOT_ALLOWED: StatusOverride = { http: 405, status: 'UNIMPLEMENTED' };
/** ContentTypeNotSupported (INVALID_ARGUMENT), with the HTTP status that says "request media type". */
export const UNSUPPORTED_MEDIA_TYPE: StatusOverride = { http: 415, status: 'INVALID_ARGUMENT' };

export type RouterErrorHandler = (error: unknown, req: Request, res: Response, next: NextFunction, binding?: ErrorBinding) => void;

/** Body-parser failures, preset rejections, anything unexpected: answered in the route's binding. */
export function routerErrorHandler(logger: Logger): RouterErrorHandler {
  return function a2aRouterError(error, req, res, next, binding = 'jsonrpc'): void {
    if (res.headersSent) return next(error);
    // A wiring mistake (e.g. an uncalled middleware factory) is for the app's error handler and logs.
    if (error instanceof A2AWiringError) return next(error);
    writeError(req, res, asA2AError(error, logger), binding, binding === 'jsonrpc' ? requestIdOf(req.body) : null);
  };
}

function asA2AError(error: unknown, logger: Logger): A2AError {
  if (error instanceof A2AError) return error;
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') return new A2AError('ParseError');
  if (type === 'entity.too.large') {
    // The same answer as a declared length over the limit (a2aSecurity's, or the router's own).
    const limit = (error as { limit?: unknown }).limit;
    return typeof limit === 'number' ? bodyTooLargeError(limit) : new A2AError('PayloadTooLarge');
  }
  const status = (error as { status?: number } | null)?.status;
  if (status && status >= 400 && status < 500) return new A2AError('InvalidRequest', 'Invalid request: the body could not be read');
  logger.error({ err: error }, 'unexpected error in the A2A router');
  return new A2AError('Internal');
}

export function notFoundMessage(bindings: ServedBindings): string {
  const served = [
    ...(bindings.jsonRpc ? ['JSON-RPC at its base URL'] : []),
    ...(bindings.rest ? ['HTTP+JSON below it (message:send, tasks, ...)'] : []),
  ];
  return `Not found: this agent serves ${served.join(', ')} and its card at .well-known/agent-card.json below it`;
}

interface UnmatchedContext {
  readonly wiring: ReturnType<typeof wiringReporter>;
  readonly notFound: string;
}

/** Not served under the mount: OPTIONS → 204, other method → 405 (with `Allow`), else 404; warns if a later route wanted it. */
export function answerUnmatched(req: Request, res: Response, path: string, router: object, context: UnmatchedContext, allow?: string): void {
  context.wiring.checkUnmatched(req, router, path);
  if (allow !== undefined && req.method === 'OPTIONS') {
    res.statusCode = 204;
    res.setHeader('Allow', allow);
    res.end();
    return;
  }
  const binding = errorBindingFor(req);
  const id = binding === 'jsonrpc' ? requestIdOf(req.body) : null;
  if (allow === undefined) {
    const error = new A2AError('MethodNotFound', context.notFound);
    return writeError(req, res, error, binding, id, undefined, NOT_FOUND);
  }
  res.setHeader('Allow', allow);
  writeError(
    req,
    res,
    new A2AError('MethodNotFound', `Method ${req.method} is not allowed here (allowed: ${allow})`),
    binding,
    id,
    undefined,
    METHOD_NOT_ALLOWED,
  );
}
