/** Private reach: Express 4/5 router stacks and Layer fields, which have no public API (guarded by express-layer-stack.test.ts). */

/** One Layer of an Express router's stack, opaque outside this module. */
export interface ExpressLayer {
  readonly __expressLayer?: never;
}

interface LayerFields {
  readonly handle?: unknown;
  readonly route?: unknown;
  readonly slash?: boolean; // Express 5, from here to `matchers`
  readonly rawPath?: unknown;
  readonly matchers?: ReadonlyArray<(path: string) => false | { path: string }>;
  readonly regexp?: RegExp & { fast_slash?: boolean; fast_star?: boolean }; // Express 4
}

const fields = (layer: ExpressLayer): LayerFields => layer as LayerFields;

/** The layers of an app or a Router; undefined for anything else, or an Express 4 app with nothing mounted. */
export function layersOf(owner: unknown): readonly ExpressLayer[] | undefined {
  if (owner === null || (typeof owner !== 'object' && typeof owner !== 'function')) return undefined;
  const value = owner as { stack?: unknown; _router?: { stack?: unknown } };
  if (Array.isArray(value.stack)) return value.stack as ExpressLayer[];
  if (value._router !== undefined) return Array.isArray(value._router.stack) ? (value._router.stack as ExpressLayer[]) : undefined;
  if (typeof (owner as { set?: unknown }).set !== 'function') return undefined;
  try {
    // Express 5's lazy getter; Express 4 throws here (it has `_router` once anything is mounted).
    const router = (owner as { router?: { stack?: unknown } }).router;
    return Array.isArray(router?.stack) ? (router.stack as ExpressLayer[]) : undefined;
  } catch {
    return undefined;
  }
}

export function layerHandle(layer: ExpressLayer): unknown {
  return fields(layer).handle;
}

/** Whether the layer is Express's wrapper of an app mounted with app.use(path, subApp). */
export function isMountedAppLayer(layer: ExpressLayer): boolean {
  const handle = fields(layer).handle;
  return typeof handle === 'function' && handle.name === 'mounted_app';
}

export function isRouteLayer(layer: ExpressLayer): boolean {
  return fields(layer).route !== undefined;
}

// Express 4 keeps only the regexp path-to-regexp 0.1 made of a use() path: `^\/a\/b\/?(?=\/|$)`.
const EXPRESS4_LITERAL = /^\^((?:\\[/.]|[\w~%-])*)\\\/\?\(\?=\\\/\|\$\)$/;

/** The literal path a use-layer was mounted at ('' without one), or undefined when it has parameters or is a route. */
function literalPathOf(layer: ExpressLayer): string | undefined {
  const { route, slash, regexp, rawPath } = fields(layer);
  if (route !== undefined) return undefined;
  if (slash || regexp?.fast_slash) return '';
  if (typeof rawPath === 'string') return /[:*?(){}]/.test(rawPath) ? undefined : rawPath.replace(/\/$/, '');
  const literal = regexp && EXPRESS4_LITERAL.exec(regexp.source)?.[1];
  return literal === undefined ? undefined : literal.replace(/\\([/.])/g, '$1');
}

/** The path from `owner` to the use-layer calling `target` through Routers at literal paths (not into sub-apps). */
export function literalPathTo(owner: unknown, target: (handle: unknown, layer: ExpressLayer) => boolean, depth = 0): string | undefined {
  const stack = depth > 8 ? undefined : layersOf(owner);
  for (const layer of stack ?? []) {
    const path = literalPathOf(layer);
    if (path === undefined) continue;
    if (target(fields(layer).handle, layer)) return path;
    const inner = nestedLayers(layer) && literalPathTo(fields(layer).handle, target, depth + 1);
    if (inner !== undefined) return path + inner;
  }
  return undefined;
}

export function matchedPrefix(layer: ExpressLayer, path: string): string | undefined {
  const { route, slash, regexp, matchers } = fields(layer);
  if (route !== undefined) return undefined;
  if (slash || regexp?.fast_slash) return '';
  if (matchers) {
    for (const match of matchers) {
      const found = match(path);
      if (found) return found.path;
    }
    return undefined;
  }
  if (regexp) {
    if (regexp.fast_star) return path;
    regexp.lastIndex = 0;
    return regexp.exec(path)?.[0];
  }
  return undefined;
}

export function nestedLayers(layer: ExpressLayer): readonly ExpressLayer[] | undefined {
  const handle = fields(layer).handle;
  return typeof handle === 'function' && Array.isArray((handle as { stack?: unknown }).stack)
    ? (handle as unknown as { stack: ExpressLayer[] }).stack
    : undefined;
}

export function routeServes(layer: ExpressLayer, path: string, method: string): boolean {
  const { route, matchers, regexp } = fields(layer);
  const methods = (route as { methods?: Record<string, unknown> } | undefined)?.methods;
  if (!methods) return false;
  const name = method.toLowerCase();
  if (!(methods._all || methods[name] || (name === 'head' && methods.get))) return false;
  if (matchers) return matchers.some((match) => match(path) !== false);
  if (regexp) {
    regexp.lastIndex = 0;
    return regexp.test(path);
  }
  return false;
}
