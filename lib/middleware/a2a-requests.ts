/**
 * Whether a request is one for an A2A router: what a2aAuthErrors answers by default, so that the
 * host app's own 401s and 403s on its other routes keep their own answer.
 */
import type { Request } from 'express';
import { peekRequestRecord } from '../context/request-state.js';
import { mountPathOf, requestPath } from '../context/node-request.js';
import { layersOf, matchedPrefix, nestedLayers, type ExpressLayer } from '../internals/express-layer-stack.js';
import { matchRestRoute } from '../protocol/rest.js';
import { matchV03RestRoute } from '../protocol/v0_3/rest.js';
import { isA2ARouterLayer } from './wiring.js';

const CARD_PATH = '/.well-known/agent-card.json';

/** Whether a router mounted where `path` (below its mount) leads serves it: JSON-RPC, the card, an HTTP+JSON route. */
function routerPath(method: string, path: string): boolean {
  if (path === '/' || path === '' || path === CARD_PATH) return true;
  return matchRestRoute(method, path) !== undefined || matchV03RestRoute(method, path) !== undefined;
}

const below = (path: string, prefix: string): string => {
  const remaining = path.slice(prefix.length);
  return remaining.startsWith('/') ? remaining : `/${remaining}`;
};

function leadsToRouter(stack: readonly ExpressLayer[], path: string, method: string, depth = 0): boolean {
  if (depth > 8) return false;
  for (const layer of stack) {
    const prefix = matchedPrefix(layer, path);
    if (prefix === undefined) continue;
    if (isA2ARouterLayer(layer)) {
      if (routerPath(method, below(path, prefix))) return true;
      continue;
    }
    const inner = nestedLayers(layer);
    if (inner && leadsToRouter(inner, below(path, prefix), method, depth + 1)) return true;
  }
  return false;
}

/**
 * A request the router recorded as served (lib/context/request-state.ts), or one refused before it
 * reached the router (express-jwt mounted in front of it) whose path leads to one in the app's
 * stack. Read from Express's stack only on this error path; a layout it cannot follow reads as no.
 */
export function isA2ARequest(req: Request): boolean {
  if (peekRequestRecord(req)?.binding !== undefined) return true;
  try {
    const stack = layersOf(req.app);
    if (!stack) return false;
    // `req.app` may itself be mounted below the origin: try the path and each shorter suffix.
    const full = `${mountPathOf(req)}${requestPath(req)}`.replace(/\/\/+/g, '/');
    for (let from = 0; from !== -1; from = full.indexOf('/', from + 1)) {
      if (leadsToRouter(stack, full.slice(from), req.method)) return true;
    }
  } catch {
    // An Express internal this module does not know.
  }
  return false;
}
