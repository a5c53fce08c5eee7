/**
 * Wiring mistakes that would otherwise pass silently, found from notes on the request and from the host app's stack; the router reports each once
 * through its logger (wiringReporter).
 */
import type { Request } from 'express';
import { readA2AState, peekRequestRecord, requestRecord } from '../context/request-state.js';
import {
  isMountedAppLayer,
  isRouteLayer,
  layerHandle,
  layersOf,
  matchedPrefix,
  nestedLayers,
  routeServes,
  type ExpressLayer,
} from '../internals/express-layer-stack.js';
import type { Logger } from '../options.js';
import { mountPathOf } from '../context/node-request.js';
import { a2aMiddlewareKind, type A2AMiddlewareKind } from './types.js';

// One small integer per request in the kit's per-request record (lib/context/request-state.ts), no object: bit 0 = a request id was known when the
// first a2aAuth ran (a2aTracing had run), the rest = how many a2aAuth instances ran.

export function noteAuthRun(req: Request): void {
  const record = requestRecord(req);
  const notes = record.wiringNotes;
  record.wiringNotes = notes === undefined ? 2 + (record.requestId !== undefined ? 1 : 0) : notes + 2;
}

const AUTH_TWICE = 1;
const TRACING_AFTER_AUTH = 2;

/** What the notes say is wrong once the middlewares in front of the router ran (0 for nothing): a number, so the common case allocates nothing. */
function requestWiringProblems(req: Request): number {
  const record = peekRequestRecord(req);
  const notes = record?.wiringNotes;
  if (notes === undefined) return 0;
  // a2aTracing always records a request id: known now, unknown when auth ran, so tracing ran later.
  const tracingLate = (notes & 1) === 0 && record!.requestId !== undefined;
  return (notes >> 1 > 1 ? AUTH_TWICE : 0) | (tracingLate ? TRACING_AFTER_AUTH : 0);
}

// The layer Express created for each router mounted with app.use (its handle is a wrapper).
const MOUNTED_LAYERS = new WeakMap<object, object>();
/** Every A2A router, with whether it serves v0.3 (its `compatibility`). */
const ROUTERS = new WeakMap<object, boolean>();
/** The same routers, for a host without a stack to read (Connect records a mount on the router: `route`). */
const ALL_ROUTERS = new Set<WeakRef<object>>();

/** Marks `router` as an A2A router (wiring checks, and where a request refused in front of it was going). */
export function registerRouter(router: object, v0_3: boolean): void {
  ROUTERS.set(router, v0_3);
  ALL_ROUTERS.add(new WeakRef(router));
}

/** a2aAuthErrors handlers (found in the app's stack by the A2A_WIRING_AUTH_ERRORS check). */
const AUTH_ERROR_HANDLERS = new WeakSet<object>();
export const registerAuthErrors = (handler: object): void => void AUTH_ERROR_HANDLERS.add(handler);

/** The A2A router a layer calls (directly, or through the sub-app wrapper Express made for it). */
export function routerOfLayer(layer: ExpressLayer): object | undefined {
  const handle = layerHandle(layer) as object;
  return ROUTERS.has(handle) ? handle : MOUNTED_LAYERS.get(layer);
}

export const servesV03 = (router: object): boolean => ROUTERS.get(router) ?? true;

/** The routers Connect mounted (each with the path Connect states on it: `route`), live ones only. */
export function* connectMountedRouters(): Generator<{ router: object; route: string }> {
  for (const ref of ALL_ROUTERS) {
    const router = ref.deref();
    if (router === undefined) ALL_ROUTERS.delete(ref);
    else if (typeof (router as { route?: unknown }).route === 'string') yield { router, route: (router as { route: string }).route };
  }
}

/** Called as Express mounts `router` on `parent`: the layer wrapping it was just pushed, the last of the parent's stack. */
export function rememberMountLayer(router: object, parent: unknown): void {
  const layer = layersOf(parent)?.at(-1);
  if (layer && isMountedAppLayer(layer)) MOUNTED_LAYERS.set(layer, router);
}

const rest = (path: string, prefix: string): string => {
  const remaining = path.slice(prefix.length);
  return remaining.startsWith('/') ? remaining : `/${remaining}`;
};

interface Position {
  readonly stack: readonly ExpressLayer[];
  readonly index: number;
  readonly path: string;
}

/** Where `router` sits, searching nested Routers, for a request to `path`. */
function locate(stack: readonly ExpressLayer[], path: string, router: object, depth = 0): Position | undefined {
  if (depth > 8) return undefined;
  for (let index = 0; index < stack.length; index++) {
    const layer = stack[index];
    const prefix = matchedPrefix(layer, path);
    if (prefix === undefined) continue;
    if (routerOfLayer(layer) === router) return { stack, index, path };
    const inner = nestedLayers(layer);
    const found = inner && locate(inner, rest(path, prefix), router, depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** Where the router sits in the app's stack, for a request that reached it (see mountedAfter). */
function locateRouter(req: Request, router: object): Position | undefined {
  const stack = layersOf(req.app);
  if (!stack) return undefined;
  // `req.baseUrl` is the path to the router from the origin; `req.app` may itself be mounted somewhere, so try it and each shorter suffix until the
  // router is found.
  const base = mountPathOf(req) || '/';
  const candidates = [base];
  for (let i = base.indexOf('/', 1); i !== -1; i = base.indexOf('/', i + 1)) candidates.push(base.slice(i));
  if (base !== '/') candidates.push('/');
  for (const path of candidates) {
    const position = locate(stack, path, router);
    if (position) return position;
  }
  return undefined;
}

function findRoute(stack: readonly ExpressLayer[], from: number, path: string, method: string, depth = 0): boolean {
  for (let index = from; index < stack.length && depth <= 8; index++) {
    const layer = stack[index];
    if (isRouteLayer(layer)) {
      if (routeServes(layer, path, method)) return true;
      continue;
    }
    const inner = nestedLayers(layer);
    const prefix = inner && matchedPrefix(layer, path);
    if (inner && prefix !== undefined && findRoute(inner, 0, rest(path, prefix), method, depth + 1)) return true;
  }
  return false;
}

/** Whether a route registered after the router (app.get('/agent/docs')) would have served this request, which the router answers 404/405. */
function laterRouteServes(req: Request, router: object, path: string): boolean {
  try {
    const position = locateRouter(req, router);
    if (!position) return false;
    const full = (position.path === '/' ? '' : position.path.replace(/\/$/, '')) + path;
    return findRoute(position.stack, position.index + 1, full, req.method);
  } catch {
    return false;
  }
}

/** What is mounted after the router on its path and so never sees what it serves. */
type ShadowedKind = A2AMiddlewareKind | 'router';

function collectAfter(stack: readonly ExpressLayer[], from: number, path: string, self: object, found: Set<ShadowedKind>, depth = 0): void {
  for (let index = from; index < stack.length && depth <= 8; index++) {
    const layer = stack[index];
    const prefix = matchedPrefix(layer, path);
    if (prefix === undefined) continue;
    const handle = layerHandle(layer);
    const kind = a2aMiddlewareKind(handle);
    if (kind) found.add(kind);
    else if (routerOfLayer(layer) !== undefined && routerOfLayer(layer) !== self) {
      found.add('router');
    } else {
      const inner = nestedLayers(layer);
      if (inner) collectAfter(inner, 0, rest(path, prefix), self, found, depth + 1);
    }
  }
}

/**
 * Kit middlewares and other A2A routers mounted after `router` on the path this request reached it by. Reads the stack of the app that handles the
 * request (`req.app`) and the Routers in it; a layout it cannot follow yields nothing (these are warnings, never errors).
 */
function mountedAfter(req: Request, router: object): Set<ShadowedKind> {
  const found = new Set<ShadowedKind>();
  try {
    const position = locateRouter(req, router);
    if (position) collectAfter(position.stack, position.index + 1, position.path, router, found);
  } catch {
    // An Express internal this file does not know: no warning rather than a failed request.
  }
  return found;
}

/** Every layer a request to `path` passes, in order, nested Routers followed. */
function* layersOnPath(stack: readonly ExpressLayer[], path: string, depth = 0): Generator<ExpressLayer> {
  for (const layer of stack) {
    const prefix = matchedPrefix(layer, path);
    if (prefix === undefined || depth > 8) continue;
    yield layer;
    const inner = routerOfLayer(layer) === undefined ? nestedLayers(layer) : undefined;
    if (inner) yield* layersOnPath(inner, rest(path, prefix), depth + 1);
  }
}

/**
 * Where the errors of the app's auth in front of `router` go: undefined when an a2aAuthErrors answers them first; else the name of the app's error
 * handler that does, or '' for Express's final handler (HTML). Undefined too for a stack it cannot read.
 */
function authErrorsMissed(req: Request, router: object): string | undefined {
  try {
    const stack = layersOf(req.app);
    const full = `${mountPathOf(req)}/`;
    if (!stack) return undefined;
    let seen = false;
    for (const layer of layersOnPath(stack, full)) {
      seen ||= routerOfLayer(layer) === router;
      const handle = layerHandle(layer) as ((...args: unknown[]) => unknown) | undefined;
      if (!seen || typeof handle !== 'function' || handle.length !== 4) continue;
      return AUTH_ERROR_HANDLERS.has(handle) ? undefined : handle.name || 'anonymous';
    }
    return seen ? '' : undefined;
  } catch {
    return undefined;
  }
}

/** What the app's own auth leaves on a request it let through (express-jwt, passport, express-openid-connect). */
const appAuthRan = (req: Request): boolean => {
  const fields = req as Request & { auth?: unknown; user?: unknown; oidc?: { user?: unknown } };
  return fields.auth !== undefined || fields.user !== undefined || fields.oidc?.user !== undefined;
};

const LOOPBACK = /^(?:127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+|localhost)$/i;

/** The address the accepting server listens on when not loopback (a wildcard such as 0.0.0.0 counts as public); else undefined. */
function publicListenAddress(req: Request): string | undefined {
  const socket = req.socket as (Request['socket'] & { server?: { address?: () => unknown } }) | undefined;
  if (!socket) return undefined;
  let bound: unknown;
  try {
    bound = socket.server?.address?.();
  } catch {
    bound = undefined;
  }
  if (typeof bound === 'string') return undefined; // a Unix socket or a named pipe
  const address = (bound as { address?: unknown } | null | undefined)?.address ?? socket.localAddress;
  return typeof address === 'string' && address !== '' && !LOOPBACK.test(address) ? address : undefined;
}

const AFTER_ROUTER: Record<ShadowedKind, string> = {
  auth: "the router answers before it runs, so every caller is anonymous. Mount it in front of the router: app.use(path, a2aAuth(...), router), or use the router's auth option",
  tenant:
    "the router answers before it runs, so no tenant is resolved. Mount it in front of the router: app.use(path, a2aTenant(...), router), or use the router's tenant option",
  security:
    "the router answers before it runs, so its headers and body limit never apply. Mount it in front of the router: app.use(path, a2aSecurity(), router), or use the router's security option",
  tracing:
    "the router answers before it runs, so there is no request id or trace context. Mount it in front of the router: app.use(path, a2aTracing(), router), or use the router's tracing option",
  router: 'it never receives a request, since this one answers first. Mount each router at its own path',
};

/** Reports each wiring mistake once through the router's logger, with the fix. */
export function wiringReporter(logger: Logger, hasCallContext: boolean) {
  const warned = new Set<string>();
  let authErrorsChecked = false;
  let exposure: string | null | undefined;
  const warnOnce = (code: string, fields: object, message: string): void => {
    if (warned.has(code)) return;
    warned.add(code);
    logger.warn({ code, ...fields }, message);
  };
  return {
    firstRequest: true,
    /** Where the router is mounted from the origin, as the first request it served says (undefined before). */
    mountPath: undefined as string | undefined,
    /** The host app's stack, once: what is mounted after this router on its path. */
    checkMount(req: Request, router: object): void {
      this.firstRequest = false;
      this.mountPath = mountPathOf(req);
      const path = this.mountPath || '/';
      for (const kind of mountedAfter(req, router)) {
        const what = kind === 'router' ? 'another A2A router' : `a2a${kind[0].toUpperCase()}${kind.slice(1)}`;
        warnOnce(
          `A2A_WIRING_${kind.toUpperCase()}_AFTER_ROUTER`,
          { path },
          `${what} is mounted after the A2A router at ${path}: ${AFTER_ROUTER[kind]}`,
        );
      }
    },
    /** A request the router answers 404/405 that a route registered after it would serve. */
    checkUnmatched(req: Request, router: object, path: string): void {
      if (warned.has('A2A_WIRING_ROUTE_AFTER_ROUTER') || !laterRouteServes(req, router, path)) return;
      const where = `${mountPathOf(req)}${path}`;
      warnOnce(
        'A2A_WIRING_ROUTE_AFTER_ROUTER',
        { method: req.method, path: where },
        `${req.method} ${where} matches a route registered after the A2A router, which answers everything under its mount path itself (404/405). Register that route before the router, or create the router with unmatched: 'next'`,
      );
    },
    /** Per A2A request, after the preset: what the middlewares noted, and who the caller is. */
    checkRequest(req: Request, router: object): void {
      if (!authErrorsChecked) {
        authErrorsChecked = true;
        const handler = appAuthRan(req) ? authErrorsMissed(req, router) : undefined;
        if (handler !== undefined) {
          const where = handler === '' ? "Express's final handler (an HTML page)" : `the app's error handler ${handler}`;
          warnOnce(
            'A2A_WIRING_AUTH_ERRORS',
            { path: mountPathOf(req) || '/', handler: handler || 'final' },
            `the app's own auth runs in front of the A2A router at ${mountPathOf(req) || '/'}, and its 401s and 403s there reach ${where} before any a2aAuthErrors: A2A clients get the app's error shape, without WWW-Authenticate. Mount app.use(a2aAuthErrors()) after the routes and before the app's own error handler`,
          );
        }
      }
      const problems = requestWiringProblems(req);
      if (problems & AUTH_TWICE) {
        warnOnce(
          'A2A_WIRING_AUTH_TWICE',
          {},
          "a2aAuth ran twice on one request (e.g. app-wide and again in front of the router, or in the router's auth option): the second one decides. Configure it once",
        );
      }
      if (problems & TRACING_AFTER_AUTH) {
        warnOnce(
          'A2A_WIRING_TRACING_AFTER_AUTH',
          {},
          'a2aTracing runs after a2aAuth: authentication failures carry no request id and their log lines are not correlated. Mount a2aTracing before a2aAuth',
        );
      }
      if (hasCallContext || warned.has('A2A_WIRING_NO_AUTH') || readA2AState(req)?.caller !== undefined) return;
      if (exposure === undefined) exposure = publicListenAddress(req) ?? null;
      if (exposure !== null) {
        warnOnce(
          'A2A_WIRING_NO_AUTH',
          { address: exposure },
          `the A2A router has no authentication and the server listens on ${exposure}: every caller shares one anonymous bucket and can read and cancel every task. Add a2aAuth (or the router's auth option, or callContext), or listen on 127.0.0.1 behind a gateway`,
        );
      }
    },
  };
}
