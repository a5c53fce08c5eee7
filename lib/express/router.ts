/**
 * createA2ARouter(): an Express middleware that serves one A2A agent where it is mounted:
 * the agent card at `<mount>/.well-known/agent-card.json` and JSON-RPC at `POST <mount>`.
 * Options are checked with zod here, at construction, not at the first request.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import asyncHandler from 'express-async-handler';
import { z } from 'zod';
import { A2AError } from '../errors.js';
import { consoleLogger, type Logger } from '../logger.js';
import { parseOptions } from '../options.js';
import { ExtensionNegotiator } from '../protocol/extensions.js';
import { AgentCardSchema, AgentInterfaceSchema, type AgentCard } from '../protocol/schemas.js';
import type { AgentExecutor } from '../server/executor.js';
import { A2ARequestHandler, type ExtendedAgentCardProvider } from '../server/request-handler.js';
import { InMemoryTaskStore } from '../server/stores/in-memory-task-store.js';
import type { TaskStore } from '../server/stores/task-store.js';
import { agentCardRoute } from './agent-card-route.js';
import { statedJsonRpcInterface, type AgentCardInput } from '../protocol/card.js';
import { jsonRpcRoute, type CallContextHook } from './jsonrpc-route.js';
import { writeError } from './error-writer.js';
import { a2aMiddlewareChain, type A2AMiddlewareChainOptions } from '../middleware/preset.js';
import { A2AWiringError } from '../middleware/errors.js';
import { requestIdOf } from '../protocol/jsonrpc.js';
import { readA2ABodyLimit } from '../middleware/security.js';
import { withRequestContext } from '../middleware/logger.js';


export interface A2ARouterOptions {
  readonly agentCard: AgentCardInput;
  readonly executor: AgentExecutor;
  /** Where tasks live; an in-memory store by default. */
  readonly taskStore?: TaskStore;
  /** pino-compatible; warnings and errors go to the console by default. */
  readonly logger?: Logger;
  /** Resolves the caller and tenant per request (overrides what a2aAuth/a2aTenant contributed). */
  readonly callContext?: CallContextHook;
  /** How long CancelTask waits for the agent before writing CANCELED itself. Default 5000 ms. */
  readonly cancelGracePeriodMs?: number;
  /** Interval of `: ping` comments on idle SSE streams. Default 15000 ms; 0 disables. */
  readonly heartbeatIntervalMs?: number;
  /** Served by GetExtendedAgentCard to authenticated callers when the card declares it. */
  readonly extendedAgentCard?: ExtendedAgentCardProvider;
  /** Largest accepted request body (bytes or a string such as '1mb'). Default '1mb'. */
  readonly bodyLimit?: string | number;
  /** Cache-Control max-age of the public card. Default 300 s. */
  readonly agentCardMaxAgeSeconds?: number;
  /**
   * The middleware preset, installed inside the router in the right order
   * (security → tracing → auth → tenant); each takes that factory's options or a built middleware.
   */
  readonly security?: A2AMiddlewareChainOptions['security'];
  readonly tracing?: A2AMiddlewareChainOptions['tracing'];
  readonly auth?: A2AMiddlewareChainOptions['auth'];
  readonly tenant?: A2AMiddlewareChainOptions['tenant'];
}

/** The router (an Express middleware), plus read-only gauges for tests and operators. */
export type A2ARouter = express.RequestHandler & {
  /** Tasks with a live execution (0 when every task is parked or finished). */
  readonly liveExecutions: number;
  /** Blocking sends, streams and subscribers attached to live executions. */
  readonly liveObservers: number;
  /**
   * Serves the card at the origin root, where the spec's discovery looks for it:
   * `app.get('/.well-known/agent-card.json', agent.wellKnownCard)`. The JSON-RPC URL in it is the
   * router's mount path through its parent apps (mount it with app.use on an app, not a Router,
   * or state the URL in the card).
   */
  readonly wellKnownCard: express.RequestHandler;
};

const hasMethods = (...names: string[]) => (value: unknown) =>
  typeof value === 'object' && value !== null && names.every((n) => typeof (value as Record<string, unknown>)[n] === 'function');

const RouterOptionsSchema = z.strictObject({
  agentCard: AgentCardSchema.extend({ supportedInterfaces: z.array(AgentInterfaceSchema).optional() }),
  executor: z.custom<AgentExecutor>(hasMethods('execute'), { error: 'must be an object with an execute(context, events) method' }),
  taskStore: z
    .custom<TaskStore>(hasMethods('get', 'create', 'update', 'list'), { error: 'must implement get, create, update and list' })
    .optional(),
  logger: z.custom<Logger>(hasMethods('debug', 'info', 'warn', 'error'), { error: 'must have debug, info, warn and error methods' }).optional(),
  callContext: z.custom<CallContextHook>((v) => typeof v === 'function', { error: 'must be a function (req) => ({ caller, tenant })' }).optional(),
  cancelGracePeriodMs: z.number().int().min(0).max(600_000).default(5_000),
  heartbeatIntervalMs: z.number().int().min(0).max(3_600_000).default(15_000),
  extendedAgentCard: z
    .custom<ExtendedAgentCardProvider>((v) => typeof v === 'function' || (typeof v === 'object' && v !== null), {
      error: 'must be an agent card or a function (caller) => card',
    })
    .optional(),
  bodyLimit: z.union([z.string().min(1), z.number().int().positive()]).default('1mb'),
  agentCardMaxAgeSeconds: z.number().int().min(0).default(300),
  // Checked by a2aMiddlewareChain, which names the factory option that is wrong.
  security: z.unknown().optional(),
  tracing: z.unknown().optional(),
  auth: z.unknown().optional(),
  tenant: z.unknown().optional(),
});

const JSON_TYPES = ['application/json', 'application/*+json'];

export function createA2ARouter(options: A2ARouterOptions): A2ARouter {
  const settings = parseOptions('createA2ARouter', RouterOptionsSchema, options);
  const preset = a2aMiddlewareChain(
    { security: options.security, tracing: options.tracing, auth: options.auth, tenant: options.tenant },
    'createA2ARouter',
  );
  // Every engine log line written while serving a request carries its request id and trace ids.
  const logger = withRequestContext(settings.logger ?? consoleLogger);
  // Parsed copy of the card (validated, unknown fields dropped); the interface list may still be empty.
  const card: AgentCard = { ...settings.agentCard, supportedInterfaces: settings.agentCard.supportedInterfaces ?? [] };
  const handler = new A2ARequestHandler({
    agentCard: card,
    executor: settings.executor,
    taskStore: settings.taskStore ?? new InMemoryTaskStore(),
    logger,
    cancelGracePeriodMs: settings.cancelGracePeriodMs,
    extendedAgentCard: settings.extendedAgentCard,
  });

  // Parse JSON unless the host app already did. Not strict: a body such as `42` is valid JSON, so it
  // is an invalid request (-32600), not a parse error. raw-body (under express.json in Express 4 and
  // 5) binds its callback to the caller's async context, so AsyncLocalStorage values survive parsing.
  // a2aSecurity may set a smaller limit per request: one parser per distinct limit.
  const parsers = new Map<string | number, express.RequestHandler>();
  const parserFor = (limit: string | number) => {
    let parser = parsers.get(limit);
    if (!parser) parsers.set(limit, (parser = express.json({ limit, type: JSON_TYPES, strict: false })));
    return parser;
  };

  const serveCard = agentCardRoute(card, settings.agentCardMaxAgeSeconds);
  const serveRpc = asyncHandler(
    jsonRpcRoute({
      handler,
      logger,
      extensions: new ExtensionNegotiator(card),
      heartbeatIntervalMs: settings.heartbeatIntervalMs,
      callContext: settings.callContext,
    }),
  );
  const fail = routerErrorHandler(logger);

  /** Body parsing, then the JSON-RPC route; errors of either go to the one error handler. */
  const rpc = (req: Request, res: Response, next: NextFunction): void => {
    parserFor(readA2ABodyLimit(req) ?? settings.bodyLimit)(req, res, (parseError?: unknown) => {
      if (parseError) return fail(parseError, req, res, next);
      serveRpc(req, res, (error?: unknown) => (error ? fail(error, req, res, next) : next()));
    });
  };

  /** The preset middlewares (if any), in order, then `done`. */
  const withPreset = (req: Request, res: Response, next: NextFunction): void => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error) return fail(error, req, res, next);
      const middleware = preset[index++];
      if (!middleware) return rpc(req, res, next);
      try {
        middleware(req, res, step);
      } catch (thrown) {
        step(thrown);
      }
    };
    step();
  };

  // A plain dispatcher rather than an Express sub-app: two routes do not need a router, and a
  // sub-app re-prototypes req/res on every request. The public card needs no credentials and no
  // tenant, so it is served before the preset.
  const router = function a2aRouter(req: Request, res: Response, next: NextFunction): void {
    const path = pathOf(req);
    if (path === '/' || path === '') {
      if (req.method === 'POST') return preset.length > 0 ? withPreset(req, res, next) : rpc(req, res, next);
    } else if (path === '/.well-known/agent-card.json' && (req.method === 'GET' || req.method === 'HEAD')) {
      return serveCard(req, res);
    }
    next();
  } as A2ARouter & MountableApp;

  // Express mounts objects that have `handle` and `set` as sub-apps: it then records where
  // (`mountpath`, `parent`) and emits 'mount', which is how the router learns its path at start-up.
  router.handle = router;
  router.set = () => router;
  router.emit = (event: string) => {
    if (event === 'mount') warnOnMountMismatch(router.mountpath, card, logger);
    return true;
  };
  const mountedPath = (): string => {
    const parent = router.parent;
    const own = typeof router.mountpath === 'string' ? router.mountpath : '';
    return (parent && typeof parent.path === 'function' ? parent.path() : '') + (own === '/' ? '' : own);
  };
  // At the origin root, the endpoint is where this router is mounted (through its parent apps).
  const wellKnownCard = agentCardRoute(
    card,
    settings.agentCardMaxAgeSeconds,
    (req) => `${req.protocol}://${req.get('host') ?? 'localhost'}${mountedPath()}`,
  );
  Object.defineProperties(router, {
    liveExecutions: { get: () => handler.liveExecutions, enumerable: true },
    liveObservers: { get: () => handler.liveObservers, enumerable: true },
    wellKnownCard: { value: wellKnownCard, enumerable: true },
  });
  return router;
}

/** The request path below the mount point, without re-parsing the URL on the hot path (`req.path` does). */
function pathOf(req: Request): string {
  const url = req.url;
  if (url.charCodeAt(0) !== 0x2f /* '/' */) return req.path; // absolute-form or unusual targets
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** What Express sets on, and calls of, an object it mounts as a sub-app. */
interface MountableApp {
  handle: (req: Request, res: Response, next: NextFunction) => void;
  set: () => unknown;
  emit: (event: string, parent: unknown) => boolean;
  mountpath?: string | string[];
  parent?: { path?: () => string };
}

/**
 * The one error handler of the router: body-parser failures, preset rejections (in 'next' mode),
 * anything unexpected. Everything it serves is the JSON-RPC route, so it answers in JSON-RPC.
 */
function routerErrorHandler(logger: Logger) {
  return function a2aRouterError(error: unknown, req: Request, res: Response, next: NextFunction): void {
    if (res.headersSent) return next(error);
    // A wiring mistake (e.g. an uncalled middleware factory) is for the app's error handler and logs.
    if (error instanceof A2AWiringError) return next(error);
    writeError(req, res, asA2AError(error, logger), 'jsonrpc', requestIdOf(req.body));
  };
}

/** What the client is told about an error that reached the router's error handler. */
function asA2AError(error: unknown, logger: Logger): A2AError {
  if (error instanceof A2AError) return error;
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') return new A2AError('ParseError');
  if (type === 'entity.too.large') return new A2AError('PayloadTooLarge');
  const status = (error as { status?: number } | null)?.status;
  if (status && status >= 400 && status < 500) return new A2AError('InvalidRequest', 'Invalid request: the body could not be read');
  logger.error({ err: error }, 'unexpected error in the A2A router');
  return new A2AError('Internal');
}

function warnOnMountMismatch(mountpath: string | string[] | undefined, card: AgentCard, logger: Logger): void {
  const stated = statedJsonRpcInterface(card);
  if (!stated || typeof mountpath !== 'string') return;
  let statedPath: string;
  try {
    statedPath = new URL(stated.url).pathname;
  } catch {
    logger.warn({ url: stated.url }, 'the agent card states a JSON-RPC interface URL that is not an absolute URL');
    return;
  }
  const trim = (p: string) => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p);
  if (trim(statedPath) !== trim(mountpath)) {
    logger.warn(
      { statedUrl: stated.url, mountPath: mountpath },
      `the agent card's JSON-RPC interface URL (${stated.url}) does not match where the router is mounted (${mountpath}); clients will post to the wrong place`,
    );
  }
}
