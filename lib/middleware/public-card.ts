/**
 * The public agent card must be served without credentials or a tenant (§8.2): auth and tenant let
 * it through. Only the card path itself, relative to where the middleware is mounted, is exempt, so
 * that an app-wide a2aAuth never opens other routes that happen to end with the same path.
 */
import type { IncomingMessage } from 'node:http';
import { requestPath } from '../context/node-request.js';

export const isPublicCardRequest = (req: IncomingMessage): boolean =>
  (req.method === 'GET' || req.method === 'HEAD') && requestPath(req) === '/.well-known/agent-card.json';
