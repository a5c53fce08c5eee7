/**
 * A host as small as Connect, without Connect: handlers mounted on path prefixes, the prefix cut
 * from `req.url` while a handler runs and the original kept in `req.originalUrl`, as Connect 3 does
 * (senchalabs/connect index.js). No Express helper is ever added to the request or response.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listen, type Listening } from '../helpers/http';

type Next = (error?: unknown) => void;
type Handle = (req: IncomingMessage, res: ServerResponse, next: Next) => void;

export interface PlainHost {
  (req: IncomingMessage, res: ServerResponse, out?: Next): void;
  use(path: string, handle: Handle): PlainHost;
}

/** A Connect-like app: `use(path, handle)`, nestable (an app is itself a handle). */
export function plainHost(): PlainHost {
  const stack: { route: string; handle: Handle }[] = [];
  const app = ((req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, out?: Next) => {
    req.originalUrl ??= req.url;
    let index = 0;
    let cut = '';
    let slashAdded = false;
    const next: Next = (error) => {
      if (cut !== '') {
        req.url = cut + (slashAdded ? req.url!.slice(1) : req.url);
        cut = '';
        slashAdded = false;
      }
      const layer = stack[index++];
      if (!layer) return finish(res, error, out);
      const path = (req.url ?? '/').split('?')[0];
      const after = path[layer.route.length];
      if (!path.toLowerCase().startsWith(layer.route.toLowerCase()) || (after !== undefined && after !== '/' && after !== '.')) return next(error);
      if (error) return next(error);
      if (layer.route !== '') {
        cut = layer.route;
        const rest = req.url!.slice(layer.route.length);
        slashAdded = !rest.startsWith('/');
        req.url = slashAdded ? `/${rest}` : rest;
      }
      try {
        layer.handle(req, res, next);
      } catch (thrown) {
        next(thrown);
      }
    };
    next();
  }) as PlainHost;
  app.use = (path, handle) => {
    // Connect drops a trailing slash of the mount path.
    stack.push({ route: path.endsWith('/') ? path.slice(0, -1) : path, handle });
    return app;
  };
  return app;
}

function finish(res: ServerResponse, error: unknown, out: Next | undefined): void {
  if (out) return out(error);
  res.statusCode = error ? 500 : 404;
  res.end(error ? 'host error' : 'host 404');
}

/** Serves `app` with a bare `http.createServer` on an ephemeral loopback port. */
export function listenPlain(app: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listening> {
  return listen({ listen: (port, host, cb) => createServer(app).listen(port, host, cb) });
}

/** fetch, with a JSON body read as `any` (the tests look into it field by field). */
export const fetchAny = (...args: Parameters<typeof fetch>) => fetch(...args) as Promise<Omit<Response, 'json'> & { json(): Promise<any> }>;
