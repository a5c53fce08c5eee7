/**
 * Probe of the Express internals lib/internals/express-layer-stack.ts reads (runs on Express 4 and
 * 5): an Express release that changes its router's stack or Layer fails here by name and version,
 * instead of the wiring warnings going silent.
 */
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import {
  isMountedAppLayer,
  isRouteLayer,
  layerHandle,
  layersOf,
  matchedPrefix,
  nestedLayers,
  routeServes,
  type ExpressLayer,
} from '../../lib/internals/express-layer-stack';
import { mountAsSubApp } from '../../lib/internals/express-sub-app';

declare const EXPRESS_MAJOR: 4 | 5;
// The express4 project maps `express` to the express4 package; its version is in that package.
const version = (require(EXPRESS_MAJOR === 4 ? 'express4/package.json' : 'express/package.json') as { version: string }).version;

/** Throws naming the module and the Express release when a relied-on internal no longer holds. */
function probe(what: string, holds: boolean): void {
  if (!holds) {
    throw new Error(
      `lib/internals/express-layer-stack.ts relies on "${what}", which no longer holds on Express ${version}: ` +
        'a private part of its router changed; update the module for this release (the wiring warnings of lib/middleware/wiring.ts depend on it).',
    );
  }
}

/** The same for lib/internals/express-sub-app.ts (how createA2ARouter learns where it is mounted). */
function probeSubApp(what: string, holds: boolean): void {
  if (!holds) {
    throw new Error(
      `lib/internals/express-sub-app.ts relies on "${what}", which no longer holds on Express ${version}: ` +
        "Express's sub-app mounting changed; update the module for this release (lib/express/mount.ts: the card's root path and the mount warning depend on it).",
    );
  }
}

function pass(_req: Request, _res: Response, next: NextFunction): void {
  next();
}

describe(`the Express router internals on Express ${version}`, () => {
  it('runs on the Express major this project names', () => {
    probe(`the express package is major ${EXPRESS_MAJOR}`, version.split('.')[0] === String(EXPRESS_MAJOR));
  });

  const everywhere = function everywhere(req: Request, res: Response, next: NextFunction) {
    pass(req, res, next);
  };
  const underApi = function underApi(req: Request, res: Response, next: NextFunction) {
    pass(req, res, next);
  };
  const app = express();
  app.use(everywhere);
  app.use('/api', underApi);
  const nested = express.Router();
  nested.get('/items', pass);
  app.use('/nested', nested);
  app.post('/docs', pass);

  // A function Express takes for a sub-app (it has `handle` and `set`), as createA2ARouter is.
  let mountedOn: unknown;
  const subApp = Object.assign((req: Request, res: Response, next: NextFunction) => pass(req, res, next), {
    handle: pass,
    set: () => subApp,
    emit: (event: string, parent: unknown) => {
      if (event === 'mount') mountedOn = parent;
      return true;
    },
  });
  app.use('/sub', subApp as unknown as express.RequestHandler);
  const lastAfterMount = layersOf(app)?.at(-1);

  const layers = layersOf(app) ?? [];
  const byHandle = (handle: unknown): ExpressLayer | undefined => layers.find((layer) => layerHandle(layer) === handle);

  it("reads the app's stack (Express 4 `_router.stack`, Express 5 `router.stack`)", () => {
    probe("layersOf(app) returns the app's router stack", layers.length >= 5);
    probe(
      'each middleware mounted with app.use is a layer whose handle is that function',
      byHandle(everywhere) !== undefined && byHandle(underApi) !== undefined,
    );
    probe('a Router mounted with app.use is a layer whose handle is the Router', byHandle(nested) !== undefined);
    probe("layersOf(router) returns a Router's own stack", layersOf(nested)?.length === 1);
  });

  it('matches a layer against a path without running it', () => {
    probe('a pathless use-layer matches every path with the empty prefix', matchedPrefix(byHandle(everywhere)!, '/anything') === '');
    probe('a use-layer mounted at /api matches /api/x with the prefix /api', matchedPrefix(byHandle(underApi)!, '/api/x') === '/api');
    probe('a use-layer mounted at /api does not match /other', matchedPrefix(byHandle(underApi)!, '/other') === undefined);
  });

  it("finds a Router's stack and the routes in it", () => {
    const inner = nestedLayers(byHandle(nested)!);
    probe("a Router's layer leads to its stack", inner !== undefined && inner.length === 1);
    const route = inner![0];
    probe('router.get() adds a route layer', isRouteLayer(route) && !isRouteLayer(byHandle(nested)!));
    probe('a route layer matches no prefix (it is not a middleware stack)', matchedPrefix(route, '/items') === undefined);
    probe('a GET route serves GET and HEAD at its path', routeServes(route, '/items', 'GET') && routeServes(route, '/items', 'HEAD'));
    probe('a GET route serves neither POST nor another path', !routeServes(route, '/items', 'POST') && !routeServes(route, '/other', 'GET'));
    const post = layers.find((layer) => isRouteLayer(layer) && routeServes(layer, '/docs', 'POST'));
    probe('app.post() adds a route layer to the app stack', post !== undefined);
  });

  it('mounts a function with handle and set as a sub-app, in a wrapper layer it tells apart', () => {
    probe("Express emits 'mount' with the parent app on such a function", mountedOn === app);
    probe('the last layer after app.use(path, subApp) is the mounted_app wrapper', lastAfterMount !== undefined && isMountedAppLayer(lastAfterMount));
    probe('the wrapper matches the mount path', matchedPrefix(lastAfterMount!, '/sub/x') === '/sub');
    probe('other layers are not taken for the wrapper', !isMountedAppLayer(byHandle(underApi)!));
  });

  it('mounts a handler made a sub-app by mountAsSubApp, telling it its parent and the path through the parent apps', () => {
    const handler = (req: Request, res: Response, next: NextFunction) => pass(req, res, next);
    const mounts: Array<{ parent: unknown; mountpath: unknown }> = [];
    const mountedPath = mountAsSubApp(handler, (parent, mountpath) => mounts.push({ parent, mountpath }));
    probeSubApp('a handler not mounted yet has no path (no parent)', mountedPath() === undefined);
    const outer = express();
    const inner = express();
    inner.use('/a2a', handler);
    outer.use('/tenant', inner);
    probeSubApp(
      "Express emits 'mount' once, with the parent app and the mount path set",
      mounts.length === 1 && mounts[0].parent === inner && mounts[0].mountpath === '/a2a',
    );
    probeSubApp("the path through the parent apps is the parents' mount paths and its own", mountedPath() === '/tenant/a2a');
    const wrapper = layersOf(inner)?.at(-1);
    probeSubApp(
      'Express puts it in the mounted_app wrapper layer at its path',
      wrapper !== undefined && isMountedAppLayer(wrapper) && matchedPrefix(wrapper, '/a2a/x') === '/a2a',
    );

    const atRootHandler = (req: Request, res: Response, next: NextFunction) => pass(req, res, next);
    const atRoot = mountAsSubApp(atRootHandler, () => undefined);
    express().use(atRootHandler);
    probeSubApp("a handler mounted without a path (mountpath '/') is at the empty path", atRoot() === '');
  });
});
