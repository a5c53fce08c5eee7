/**
 * Private reach: how Express mounts a sub-app. app.use(path, fn) treats a function that has `handle`
 * and `set` as an app: it sets `mountpath` and `parent` on it and emits 'mount' with the parent.
 */
// Guarded on Express 4 and 5 by __tests__/middleware/express-layer-stack.test.ts (the sub-app probes).
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';

type Handler = (req: Request, res: Response, next: NextFunction) => void;

/** What Express sets on, and calls of, a function it mounts as a sub-app. */
interface SubAppFields {
  handle: Handler;
  set: () => unknown;
  emit: (event: string, parent: unknown) => boolean;
  mountpath?: string | string[];
  parent?: { path?: () => string };
}

/**
 * Makes `handler` mountable as a sub-app: `onMount(parent, mountpath)` runs when Express mounts it.
 * Returns where it is mounted, through its parent apps, without a trailing '/' ('' at the root;
 * undefined before an app mounted it: a Router emits no 'mount').
 */
export function mountAsSubApp(
  handler: Handler,
  onMount: (parent: unknown, mountpath: string | string[] | undefined) => void,
): () => string | undefined {
  const app = handler as Handler & SubAppFields;
  app.handle = handler;
  app.set = () => app;
  app.emit = (event: string, parent: unknown) => {
    if (event === 'mount') onMount(parent, app.mountpath);
    return true;
  };
  return () => {
    const parent = app.parent;
    if (!parent) return undefined;
    const own = typeof app.mountpath === 'string' ? app.mountpath : '';
    // `app.use('/agent/', router)` serves at `/agent`, as a request's baseUrl says.
    return trimTrailingSlash(typeof parent.path === 'function' ? parent.path() : '') + trimTrailingSlash(own);
  };
}

/** `/agent/` as `/agent` (and `/` as ''), the way a request's baseUrl names the mount. */
const trimTrailingSlash = (path: string): string => (path.endsWith('/') ? path.slice(0, -1) : path);

/**
 * Under Connect, where `handler` is mounted: Connect records only the path within its parent, in
 * `route`, so it is trusted only when the server's top app mounts something there itself.
 */
export function connectMountPath(handler: Handler, req: IncomingMessage): string | undefined {
  const route = (handler as { route?: unknown }).route;
  if (typeof route !== 'string') return undefined;
  const server = (req.socket as { server?: { listeners?: (event: string) => unknown[] } } | undefined)?.server;
  const top = server?.listeners?.('request').find((app) => Array.isArray((app as { stack?: unknown }).stack)) as
    { stack: Array<{ route?: unknown }> } | undefined;
  return top?.stack.some((layer) => layer.route === route) ? trimTrailingSlash(route) : undefined;
}
