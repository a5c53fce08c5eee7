/**
 * The router's dispatcher: classifies the request (lib/context's routeOf), runs the preset, reads
 * the body and hands the request to the request skeleton (lib/http/serve.ts) with its codec.
 */
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

/** The four codecs: each binding in each version. */
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
  /** The 404 text: what the router serves. */
  readonly notFound: string;
}

type Handler = (req: Request, res: Response, next: NextFunction) => void;

/** A step of the dispatcher once the route is known: the route's match (none for JSON-RPC) and the version the request stated. */
type RouteStep = (req: Request, res: Response, next: NextFunction, match: RestMatch | undefined, requested: string | undefined) => void;

/**
 * The skeleton behind express-async-handler, as every route handler: a rejection goes to `next`,
 * then to the router's error handler. It passes its arguments through, `next` last.
 */
type Route = (
  req: Request,
  res: Response,
  codec: Codec<never>,
  match: RestMatch | undefined,
  requested: string | undefined,
  next: (error?: unknown) => void,
) => Promise<void>;

const JSON_TYPES = ['application/json', 'application/*+json'];

/** The error shape of a route: JSON-RPC (either version), HTTP+JSON v1.0 or v0.3. */
const bindingOf = (match: RestMatch | undefined): ErrorBinding => (match === undefined ? 'jsonrpc' : match.v03 ? 'rest-v0.3' : 'rest');

/**
 * Parses JSON unless the host app already did. Not strict: a body such as `42` is valid JSON, so it
 * is an invalid request (-32600), not a parse error. raw-body (under express.json in Express 4 and
 * 5) binds its callback to the caller's async context, so AsyncLocalStorage values survive parsing.
 * a2aSecurity may set a smaller limit per request: one parser per distinct limit.
 */
function bodyParsers(): (limit: number) => express.RequestHandler {
  const parsers = new Map<number, express.RequestHandler>();
  return (limit) => {
    let parser = parsers.get(limit);
    if (!parser) parsers.set(limit, (parser = express.json({ limit, type: JSON_TYPES, strict: false })));
    return parser;
  };
}

/**
 * The preset middlewares in order, then `then` (the body and the route). The binding and version
 * are recorded first: a middleware's rejection answers in them.
 */
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

  /** The codec of the route and version, then the skeleton; a rejection reaches the error handler. */
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
    // Too large before reading (declared), or read already by the host's own, larger-limit parser.
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
  const router = function a2aRouter(req: Request, res: Response, next: NextFunction): void {
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
  return router;
}
