/** The one writer of JSON responses and JSON-RPC error replies, shared by the router's routes. */
import type { Request, Response } from 'express';
import { toA2AError, type A2AError } from '../errors.js';
import { errorResponse, type JsonRpcId } from '../protocol/jsonrpc.js';

/** Where the router is reached from this request: origin plus mount path. */
export const baseUrlOf = (req: Request): string => `${req.protocol}://${req.get('host') ?? 'localhost'}${req.baseUrl}`;

/** A JSON body with its length (no ETag hashing: these bodies are never the same twice). */
export function writeJson(res: Response, status: number, body: string): void {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** HTTP status of a JSON-RPC error reply: 200, except 401 (with a challenge) and 413. */
function httpStatusOf(error: A2AError): number {
  return error.kind === 'Unauthenticated' || error.kind === 'PayloadTooLarge' ? error.httpStatus : 200;
}

/** A JSON-RPC error reply; anything that is not an A2AError becomes a generic Internal error. */
export function writeJsonRpcError(res: Response, id: JsonRpcId, thrown: unknown): void {
  const error = toA2AError(thrown);
  if (error.kind === 'Unauthenticated' && !res.headersSent) res.setHeader('WWW-Authenticate', 'Bearer realm="a2a"');
  writeJson(res, httpStatusOf(error), errorResponse(id, error));
}
