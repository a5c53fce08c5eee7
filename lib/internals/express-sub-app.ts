/**
 * Private reach: how Express mounts a sub-app. app.use(path, fn) treats a function that has `handle`
 * and `set` as an app: it sets `mountpath` and `parent` on it and emits 'mount' with the parent.
 */
// Guarded on Express 4 and 5 by __tests__/middleware/express-layer-stack.test.ts (the sub-app probes).
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
 * Returns where it is mounted, through its parent apps ('' before it is mounted, or at '/').
 */
export function mountAsSubApp(
  handler: Handler,
  onMount: (parent: unknown, mountpath: string | string[] | undefined) => void,
): () => string {
  const app = handler as Handler & SubAppFields;
  app.handle = handler;
  app.set = () => app;
  app.emit = (event: string, parent: unknown) => {
    if (event === 'mount') onMount(parent, app.mountpath);
    return true;
  };
  return () => {
    const parent = app.parent;
    const own = typeof app.mountpath === 'string' ? app.mountpath : '';
    return (parent && typeof parent.path === 'function' ? parent.path() : '') + (own === '/' ? '' : own);
  };
}
