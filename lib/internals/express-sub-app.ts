/** Private reach: app.use(path, fn) mounts a function with `handle` and `set` as an app (`mountpath`, `parent`, 'mount'). */
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';

type Handler = (req: Request, res: Response, next: NextFunction) => void;

interface SubAppFields {
  handle: Handler;
  set: () => unknown;
  emit: (event: string, parent: unknown) => boolean;
  mountpath?: string | string[];
  parent?: { path?: () => string };
}

/** Makes `handler` mountable as a sub-app; returns its path through the parent apps (undefined until mounted). */
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
    return trimTrailingSlash(typeof parent.path === 'function' ? parent.path() : '') + trimTrailingSlash(own);
  };
}

/** `/agent/` as `/agent`, the way a request's baseUrl names the mount. */
const trimTrailingSlash = (path: string): string => (path.endsWith('/') ? path.slice(0, -1) : path);

/** Under Connect, `handler`'s `route` (its path in its parent), trusted only when the server's top app mounts there. */
export function connectMountPath(handler: Handler, req: IncomingMessage): string | undefined {
  const route = (handler as { route?: unknown }).route;
  if (typeof route !== 'string') return undefined;
  const server = (req.socket as { server?: { listeners?: (event: string) => unknown[] } } | undefined)?.server;
  const top = server?.listeners?.('request').find((app) => Array.isArray((app as { stack?: unknown }).stack)) as
    { stack: Array<{ route?: unknown }> } | undefined;
  return top?.stack.some((layer) => layer.route === route) ? trimTrailingSlash(route) : undefined;
}
