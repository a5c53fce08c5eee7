/** The one writer of JSON response bodies, shared by the router's routes and the error writer. */
import type { Response } from 'express';

/** A JSON body with its length (no ETag hashing: these bodies are never the same twice). */
export function writeJson(res: Response, status: number, body: string, contentType = 'application/json'): void {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}
