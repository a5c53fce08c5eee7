/**
 * Where a request that has not reached an A2A router stands below one (a kit middleware or the app's auth refused it in front): from Express's stack,
 * or the mounts Connect states on routers.
 */
import type { IncomingMessage } from 'node:http';
import { classifyInFront, peekRequestRecord, requestedVersion, routeOf } from '../context/request-state.js';
import { mountPathOf, requestPath } from '../context/node-request.js';
import { layersOf, matchedPrefix, nestedLayers, type ExpressLayer } from '../internals/express-layer-stack.js';
import { connectMountedRouters, routerOfLayer, servesV03 } from './wiring.js';

/** A router's view of a request: the path below its mount, and whether it serves v0.3. */
interface BelowRouter {
  readonly path: string;
  readonly v0_3: boolean;
}

const below = (path: string, prefix: string): string => {
  const remaining = path.slice(prefix.length);
  return remaining.startsWith('/') ? remaining : `/${remaining}`;
};

const serves = (req: IncomingMessage, path: string, v0_3: boolean): boolean =>
  routeOf(req.method ?? 'GET', path, requestedVersion(req), v0_3) !== undefined;

function inStack(req: IncomingMessage, stack: readonly ExpressLayer[], path: string, depth = 0): BelowRouter | undefined {
  if (depth > 8) return undefined;
  for (const layer of stack) {
    const prefix = matchedPrefix(layer, path);
    if (prefix === undefined) continue;
    const router = routerOfLayer(layer);
    if (router !== undefined) {
      const v0_3 = servesV03(router);
      if (serves(req, below(path, prefix), v0_3)) return { path: below(path, prefix), v0_3 };
      continue;
    }
    const inner = nestedLayers(layer);
    const found = inner && inStack(req, inner, below(path, prefix), depth + 1);
    if (found) return found;
  }
  return undefined;
}

/**
 * The router `req` is for, seen from in front of it: Express's stack (`req.app`, nested Routers included), else a router Connect mounted on a prefix
 * of the path. Read on error paths only; a layout it cannot follow reads as none.
 */
function routerAhead(req: IncomingMessage): BelowRouter | undefined {
  // `req.app` may itself be mounted below the origin: try the path and each shorter suffix.
  const full = `${mountPathOf(req)}${requestPath(req)}`.replace(/\/\/+/g, '/');
  try {
    const stack = layersOf((req as { app?: unknown }).app);
    for (let from = 0; from !== -1; from = full.indexOf('/', from + 1)) {
      const found = stack ? inStack(req, stack, full.slice(from)) : connectRouter(req, full.slice(from));
      if (found) return found;
    }
  } catch {
    // An Express internal this module does not know.
  }
  return undefined;
}

function connectRouter(req: IncomingMessage, path: string): BelowRouter | undefined {
  for (const { router, route } of connectMountedRouters()) {
    if (!path.startsWith(route) || (path.length > route.length && path[route.length] !== '/')) continue;
    const v0_3 = servesV03(router);
    if (serves(req, below(path, route), v0_3)) return { path: below(path, route), v0_3 };
  }
  return undefined;
}

/** Whether `req` is for an A2A router: recorded as one, or refused in front of one its mount leads to (a2aAuthErrors' default scope). */
export function isA2ARequest(req: IncomingMessage): boolean {
  return peekRequestRecord(req)?.binding !== undefined || routerAhead(req) !== undefined;
}

/**
 * Records how the router will serve `req` (binding, version) when a kit piece in front of it is the first to need it: the path below the router found
 * ahead, else the path below this mount.
 */
export function classifyAhead(req: IncomingMessage): void {
  if (peekRequestRecord(req)?.binding !== undefined) return;
  const ahead = routerAhead(req);
  classifyInFront(req, ahead?.path ?? requestPath(req), ahead?.v0_3 ?? true);
}
