/** The router's dispatcher: path match, binding and version recorded, preset, body, then serve(). */
// Not an Express sub-app: that re-prototypes req/res per request, and Express 4 and 5 disagree on ':' in paths.
import express, { type NextFunction, type Request, type Response } from 'express';
import asyncHandler from 'express-async-handler';
import { recordServedAs, requestedVersion, routeOf, servedVersion } from '../context/request-state.js';
import { writeError } from '../context/reply.js';
import type { ErrorBinding } from '../protocol/error-body.js';
import type { JsonRpcRequest } from '../protocol/jsonrpc.js';
import type { RestMatch } from '../protocol/rest.js';
import type { VersionPolicy } from '../protocol/version.js';
import { requestPath } from '../context/node-request.js';
import { unsupportedMediaType } from '../http/rest.js';
import { serve, type Codec, type ServeSettings } from '../http/serve.js';
import { bodyTooLargeError, readA2ABodyLimit } from '../middleware/security.js';
import { answerBeforeBody, bodyOverLimit } from '../middleware/body-limit.js';
import type { A2AMiddleware } from '../middleware/types.js';
import type { wiringReporter } from '../middleware/wiring.js';
import { answerUnmatched, CARD_METHODS, RPC_METHODS, UNSUPPORTED_MEDIA_TYPE, type RouterErrorHandler } from './router-errors.js';
import type { RouterSettings } from './options.js';

export interface Codecs {
  readonly jsonRpc: Codec<JsonRpcRequest>;
  readonly jsonRpcV03: Codec<JsonRpcRequest>;
  readonly rest: Codec<RestMatch>;
  readonly restV03: Codec<RestMatch>;
}

interface DispatcherOptions {
  readonly settings: Pick<RouterSettings, 'bindings' | 'compatibility' | 'unmatched' | 'bodyLimit'>;
  readonly preset: readonly A2AMiddleware[];
  readonly codecs: Codecs;
  readonly serve: ServeSettings;
  readonly serveCard: (req: Request, res: Response) => void;
  readonly fail: RouterErrorHandler;
  readonly wiring: ReturnType<typeof wiringReporter>;
  readonly notFound: string;
  /** The inspector's handler, for paths below `/_inspector` (only when it is on: else no check at all). */
  readonly inspector?: Handler;
}

type Handler = (req: Request, res: Response, next: NextFunction) => void;

/** A step of the dispatcher once the route is known: the route's match (none for JSON-RPC) and the version the request stated. */
type RouteStep = (req: Request, res: Response, next: NextFunction, match: RestMatch | undefined, requested: string | undefined) => void;

/** serve() behind express-async-handler (arguments passed through, `next` last): a rejection goes to `next`. */
type Route = (
  req: Request,
  res: Response,
  codec: Codec<never>,
  match: RestMatch | undefined,
  requested: string | undefined,
  next: (error?: unknown) => void,
) => Promise<void>;

const JSON_TYPES = ['application/json', 'application/*+json'];

const bindingOf = (match: RestMatch | undefined): ErrorBinding => (match === undefined ? 'jsonrpc' : match.v03 ? 'rest-v0.3' : 'rest');

/** JSON parsers per limit (a2aSecurity may lower it); not strict, so `42` is an invalid request, not a parse error. */
function bodyParsers(): (limit: number) => express.RequestHandler {
  const parsers = new Map<number, express.RequestHandler>();
  return (limit) => {
    let parser = parsers.get(limit);
    if (!parser) parsers.set(limit, (parser = express.json({ limit, type: JSON_TYPES, strict: false })));
    return parser;
  };
}

/** The preset in order, then `then`; binding and version recorded first, so a rejection answers in them. */
function withPreset(preset: readonly A2AMiddleware[], policy: VersionPolicy, fail: RouterErrorHandler, then: RouteStep): RouteStep {
  return (req, res, next, match, requested) => {
    recordServedAs(req, match ? 'rest' : 'jsonrpc', servedVersion(match, requested, policy.v0_3));
    let index = 0;
    const step = (error?: unknown): void => {
      if (error) return fail(error, req, res, next, bindingOf(match));
      const middleware = preset[index++];
      if (!middleware) return then(req, res, next, match, requested);
      try {
        middleware(req, res, step);
      } catch (thrown) {
        step(thrown);
      }
    };
    step();
  };
}

export function a2aDispatcher(options: DispatcherOptions): Handler {
  const { settings, preset, codecs, fail, wiring } = options;
  const { bindings, unmatched } = settings;
  const serveSettings = options.serve;
  const parserFor = bodyParsers();
  const route = asyncHandler(((req: Request, res: Response, codec: Codec<never>, match: RestMatch | undefined, requested: string | undefined) =>
    serve(req, res, codec, match, requested, serveSettings)) as never) as unknown as Route;

  const dispatch: RouteStep = (req, res, next, match, requested) => {
    const version = servedVersion(match, requested, settings.compatibility.v0_3);
    const codec = match ? (version === '0.3' ? codecs.restV03 : codecs.rest) : version === '0.3' ? codecs.jsonRpcV03 : codecs.jsonRpc;
    void route(req, res, codec as Codec<never>, match, requested, (error?: unknown) => fail(error, req, res, next, bindingOf(match)));
  };

  /** The body (JSON-RPC always; HTTP+JSON on a POST): media type, size limit, JSON; then the route. */
  const readBody: RouteStep = (req, res, next, match, requested) => {
    wiring.checkRequest(req, router);
    if (match && !match.hasBody) return dispatch(req, res, next, match, requested);
    const binding = bindingOf(match);
    const unsupported = match ? unsupportedMediaType(req) : undefined;
    if (unsupported) {
      answerBeforeBody(req, res);
      return writeError(req, res, unsupported, binding, null, undefined, UNSUPPORTED_MEDIA_TYPE);
    }
    const limit = readA2ABodyLimit(req) ?? settings.bodyLimit;
    if (bodyOverLimit(req, limit)) {
      answerBeforeBody(req, res);
      return fail(bodyTooLargeError(limit), req, res, next, binding);
    }
    parserFor(limit)(req, res, (parseError?: unknown) =>
      parseError ? fail(parseError, req, res, next, binding) : dispatch(req, res, next, match, requested),
    );
  };

  const serveA2A = preset.length > 0 ? withPreset(preset, settings.compatibility, fail, readBody) : readBody;

  // The public card needs no credentials and no tenant, so it is served before the preset.
  const a2aRoutes = function a2aRouter(req: Request, res: Response, next: NextFunction): void {
    if (wiring.firstRequest) wiring.checkMount(req, router);
    const path = requestPath(req);
    const requested = requestedVersion(req);
    const found = routeOf(req.method, path, requested, settings.compatibility.v0_3);
    if (found === 'jsonrpc' && bindings.jsonRpc) {
      if (req.method === 'POST') return serveA2A(req, res, next, undefined, requested);
      if (unmatched === 'respond') return answerUnmatched(req, res, path, router, options, RPC_METHODS);
    } else if (found === 'card') {
      if (req.method === 'GET' || req.method === 'HEAD') return options.serveCard(req, res);
      if (unmatched === 'respond') return answerUnmatched(req, res, path, router, options, CARD_METHODS);
    } else {
      const lookup = bindings.rest && typeof found === 'object' ? found : undefined;
      if (lookup && 'match' in lookup) return serveA2A(req, res, next, lookup.match, requested);
      if (unmatched === 'respond') return answerUnmatched(req, res, path, router, options, lookup?.allow);
    }
    next();
  };
  const inspector = options.inspector;
  // Two functions rather than a flag: with the inspector off, a request runs no check for it.
  const router: Handler = inspector
    ? function a2aRouterWithInspector(req, res, next) {
        if (requestPath(req).startsWith(INSPECTOR_PREFIX)) return inspector(req, res, next);
        a2aRoutes(req, res, next);
      }
    : a2aRoutes;
  return router;
}

/** Where the inspector is served, below the mount path. */
const INSPECTOR_PREFIX = '/_inspector';
