/**
 * createA2ARouter(): an Express middleware that serves one A2A agent where it is mounted:
 * the agent card at `<mount>/.well-known/agent-card.json`, JSON-RPC at `POST <mount>` and the
 * HTTP+JSON routes below it (`POST <mount>/message:send`, `GET <mount>/tasks/{id}`, ...); for v0.3
 * clients (compatibility), JSON-RPC v0.3 at the mount and the v0.3 HTTP+JSON routes below `/v1`.
 * Options are checked with zod here, at construction, not at the first request.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import asyncHandler from 'express-async-handler';
import { z } from 'zod';
import { A2AError } from '../errors.js';
import { consoleLogger, type Logger } from '../logger.js';
import { hasMethods, optionsError, parseOptions } from '../options.js';
import { ExtensionNegotiator } from '../protocol/extensions.js';
import { AgentCardSchema, AgentInterfaceSchema, type AgentCard } from '../protocol/schemas.js';
import type { AgentExecutor } from '../engine/executor.js';
import { A2ARequestHandler, type ExtendedAgentCardProvider } from '../engine/request-handler.js';
import { InMemoryTaskStore } from '../backends/memory/in-memory-task-store.js';
import type { TaskScope, TaskStore } from '../engine/seams/task-store.js';
import type { TaskPublisher } from '../engine/task-publisher.js';
import type { TaskEventBus } from '../engine/seams/task-event-bus.js';
import type { TaskLeases } from '../engine/seams/task-leases.js';
import { agentCardRoute } from './agent-card-route.js';
import { cardPresenter } from './card-presenter.js';
import { CARD_SIGNING_ALGORITHMS, CardSigner, CardSigningKeyError, type CardSigningKey, type CardSigningOptions } from './card-signer.js';
import { statedJsonRpcInterface, type AgentCardInput, type ServedBindings } from '../protocol/card.js';
import { jsonRpcRoute, type CallContextHook } from './jsonrpc-route.js';
import { matchRestRoute, type RestLookup, type RestMatch } from '../protocol/rest.js';
import { matchV03RestRoute, V03_REST_PREFIX } from '../protocol/v0_3/rest.js';
import { requestsV03 } from './request-call.js';
import { restRoute, unsupportedMediaType } from './rest-route.js';
import { streamLimits } from './stream.js';
import { writeError, type ErrorBinding, type StatusOverride } from './error-writer.js';
import { a2aMiddlewareChain, type A2AMiddlewareChainOptions } from '../middleware/preset.js';
import { A2AWiringError, errorBindingFor } from '../middleware/errors.js';
import { requestIdOf } from '../protocol/jsonrpc.js';
import { bodyTooLargeError, parseByteSize, readA2ABodyLimit } from '../middleware/security.js';
import { answerBeforeBody, bodyOverLimit } from '../middleware/body-limit.js';
import { registerRouter, rememberMountLayer, wiringReporter } from '../middleware/wiring.js';
import { withRequestContext } from '../middleware/logger.js';
import { isMetricsOption, type A2AMetricsOption } from '../observability/metrics.js';
import { routerObservability, type A2ATaskEventHook } from '../observability/router-observability.js';
import { combineEngineEvents } from '../engine/engine-events.js';
import { createPushNotifications, PushNotificationsOptionSchema, type A2APushNotificationsOptions } from '../engine/push/push-options.js';


export interface A2ARouterOptions {
  readonly agentCard: AgentCardInput;
  readonly executor: AgentExecutor;
  /** Where tasks live; an in-memory store by default. */
  readonly taskStore?: TaskStore;
  /**
   * Where committed task events are published and followed; in-process by default. Several
   * replicas share one (e.g. `createRedisBackend()` from `a2a-express-kit/redis`).
   */
  readonly eventBus?: TaskEventBus;
  /**
   * Per-task leases, for several replicas on one store: one replica runs a task's turns at a time,
   * a follow-up arriving elsewhere waits for the lease, and a task whose replica died is settled
   * once its lease expires. None by default (one process needs none).
   */
  readonly taskLeases?: TaskLeases;
  /**
   * How long a follow-up waits for a task's lease held by another replica (its turn running there)
   * before it is refused. Default 30000 ms. Only with `taskLeases`.
   */
  readonly leaseWaitMs?: number;
  /** pino-compatible; warnings and errors go to the console by default. */
  readonly logger?: Logger;
  /** Resolves the caller and tenant per request (overrides what a2aAuth/a2aTenant contributed). */
  readonly callContext?: CallContextHook;
  /** How long CancelTask waits for the agent before writing CANCELED itself. Default 5000 ms. */
  readonly cancelGracePeriodMs?: number;
  /** Interval of `: ping` comments on idle SSE streams. Default 15000 ms; 0 disables. */
  readonly heartbeatIntervalMs?: number;
  /** Bytes an SSE stream may hold for a client that does not read; past it the stream is cut (the client can resume). Default 1 MiB. */
  readonly streamBufferBytes?: number;
  /** Bytes all the SSE streams of the router may hold together; past it the furthest behind are cut. Default 16 MiB. */
  readonly streamBufferTotalBytes?: number;
  /** How long a client may take to read one event larger than streamBufferBytes before its stream is cut. Default 10 s. */
  readonly streamStallMs?: number;
  /** A turn that has not ended after this long is failed (its signal fires). Default 0: no deadline. */
  readonly turnTimeoutMs?: number;
  /** Served by GetExtendedAgentCard to authenticated callers when the card declares it. */
  readonly extendedAgentCard?: ExtendedAgentCardProvider;
  /**
   * Largest accepted request body (bytes or a string such as '1mb'). Default '1mb'. Also applies to
   * a body the host app already parsed with a larger `express.json({ limit })`.
   */
  readonly bodyLimit?: string | number;
  /**
   * Requests under the mount path that the router does not serve (another path, or another method
   * on one of its paths): 'respond' (default) answers an A2A-shaped JSON 404, or 405 with `Allow`;
   * 'next' passes them on, for an app that serves its own routes under the same prefix after the router.
   */
  readonly unmatched?: 'respond' | 'next';
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
  /**
   * OpenTelemetry metrics (see README, Observability): `true` uses the global MeterProvider of
   * `@opentelemetry/api`, `{ meter }` that meter. Off by default: then nothing is measured or wrapped.
   */
  readonly metrics?: A2AMetricsOption;
  /** Called with every event committed to the store (lifecycle hook; no OpenTelemetry needed). */
  readonly onTaskEvent?: A2ATaskEventHook;
  /**
   * The bindings served at the mount path, both by default: JSON-RPC (`POST <mount>`) and HTTP+JSON
   * (`<mount>/message:send`, `<mount>/tasks/...`). One turned off answers 404 and leaves the card.
   */
  readonly bindings?: { readonly jsonRpc?: boolean; readonly rest?: boolean };
  /**
   * A2A v0.3 compatibility, on by default: a request without `A2A-Version` (or with `0.3`) is served
   * with v0.3 methods and shapes on both bindings (JSON-RPC at the mount; HTTP+JSON at the v0.3 paths
   * `<mount>/v1/message:send`, `<mount>/v1/tasks/{id}`, ..., `<mount>/v1/card`), and the card carries
   * the v0.3 discovery fields and interfaces. A request stating 1.0 reads `/v1` as a tenant, as before.
   * `{ v0_3: false }`: such a request is answered VersionNotSupported (-32009), the card is v1.0 only.
   */
  readonly compatibility?: { readonly v0_3?: boolean };
  /**
   * Sign every served card, public and extended (§8.4): a JWS over the card's RFC 8785 canonical
   * form with `key` (a private KeyObject, CryptoKey, JWK or PEM); `kid` defaults to the key's JWK
   * thumbprint, `alg` to the key's, `jku` is left out unless given.
   */
  readonly signCard?: CardSigningOptions;
  /**
   * Push notifications (§3.1.7-3.1.10): the four config methods on every binding, inline configs
   * in SendMessage, and delivery of every committed event to the task's webhooks. `true` takes
   * every default. Off by default (or `false`): the methods answer PushNotificationNotSupported, and a card
   * stating `capabilities.pushNotifications: true` is refused. On, the card states it.
   */
  readonly pushNotifications?: boolean | A2APushNotificationsOptions;
}

/** The router (an Express middleware), plus read-only gauges for tests and operators. */
export type A2ARouter = express.RequestHandler & {
  /** Tasks with a live execution (0 when every task is parked or finished). */
  readonly liveExecutions: number;
  /** Blocking sends, streams and subscribers attached to live executions. */
  readonly liveObservers: number;
  /** Push work held in this process: fan-outs, deliveries, their per-task, per-config and per-host state (0 once all is done). */
  readonly livePushDeliveries: number;
  /**
   * Serves the card at the origin root, where the spec's discovery looks for it:
   * `app.get('/.well-known/agent-card.json', agent.wellKnownCard)`. The JSON-RPC URL in it is the
   * router's mount path through its parent apps (mount it with app.use on an app, not a Router,
   * or state the URL in the card).
   */
  readonly wellKnownCard: express.RequestHandler;
  /**
   * A publisher for work an agent handed off (`events.handOff()` in execute()): the same event
   * methods as execute()'s events, plus `signal` (a CancelTask of the task) and `close()`. Usable
   * from a queue worker in this process, or in another process sharing the store and event bus.
   * TaskNotFound when the task is not visible in `scope` (the HandOff's).
   */
  openTaskPublisher(scope: TaskScope, taskId: string): Promise<TaskPublisher>;
  /**
   * Graceful shutdown: new messages are refused at once (HTTP 503, `-32603`); running turns get
   * `graceMs` (default 10 s) to finish, then are aborted and their tasks FAILED with a reason; every
   * open stream ends after its last event. Resolves when nothing is left running. Call it on
   * SIGTERM before `server.close()`.
   */
  close(options?: { graceMs?: number }): Promise<void>;
};

const RouterOptionsSchema = z.strictObject({
  agentCard: AgentCardSchema.extend({ supportedInterfaces: z.array(AgentInterfaceSchema).optional() }),
  executor: z.custom<AgentExecutor>(hasMethods('execute'), { error: 'must be an object with an execute(context, events) method' }),
  taskStore: z
    .custom<TaskStore>(hasMethods('get', 'create', 'update', 'list'), { error: 'must implement get, create, update and list' })
    .optional(),
  eventBus: z
    .custom<TaskEventBus>(hasMethods('publish', 'subscribe', 'requestCancel', 'onCancelRequest'), {
      error: 'must implement publish, subscribe, requestCancel and onCancelRequest',
    })
    .optional(),
  taskLeases: z.custom<TaskLeases>(hasMethods('acquire', 'claimExpired'), { error: 'must implement acquire and claimExpired' }).optional(),
  leaseWaitMs: z.number().int().min(0).max(3_600_000).default(30_000),
  logger: z.custom<Logger>(hasMethods('debug', 'info', 'warn', 'error'), { error: 'must have debug, info, warn and error methods' }).optional(),
  callContext: z.custom<CallContextHook>((v) => typeof v === 'function', { error: 'must be a function (req) => ({ caller, tenant })' }).optional(),
  cancelGracePeriodMs: z.number().int().min(0).max(600_000).default(5_000),
  heartbeatIntervalMs: z.number().int().min(0).max(3_600_000).default(15_000),
  streamBufferBytes: z.number().int().min(1024).default(1024 * 1024),
  streamBufferTotalBytes: z.number().int().min(1024).default(16 * 1024 * 1024),
  streamStallMs: z.number().int().min(1).max(600_000).default(10_000),
  turnTimeoutMs: z.number().int().min(0).max(2_147_483_647).default(0),
  extendedAgentCard: z
    .custom<ExtendedAgentCardProvider>((v) => typeof v === 'function' || (typeof v === 'object' && v !== null), {
      error: 'must be an agent card or a function (caller) => card',
    })
    .optional(),
  bodyLimit: z
    .union([z.string().min(1), z.number().int().positive()])
    .transform((value, ctx) => {
      const bytes = parseByteSize(value);
      if (bytes === undefined) {
        ctx.addIssue({ code: 'custom', message: "must be a positive number of bytes, or a size such as '512kb' or '2mb'" });
        return z.NEVER;
      }
      return bytes;
    })
    .default(1024 * 1024),
  unmatched: z.enum(['respond', 'next']).default('respond'),
  agentCardMaxAgeSeconds: z.number().int().min(0).default(300),
  // Checked by a2aMiddlewareChain, which names the factory option that is wrong.
  security: z.unknown().optional(),
  tracing: z.unknown().optional(),
  auth: z.unknown().optional(),
  tenant: z.unknown().optional(),
  metrics: z.custom<A2AMetricsOption>(isMetricsOption, { error: 'must be true, false or { meter } (an OpenTelemetry Meter)' }).optional(),
  onTaskEvent: z.custom<A2ATaskEventHook>((v) => typeof v === 'function', { error: 'must be a function (info) => void' }).optional(),
  bindings: z
    .strictObject({ jsonRpc: z.boolean().default(true), rest: z.boolean().default(true) })
    .refine((b) => b.jsonRpc || b.rest, { error: 'turns off both bindings: keep jsonRpc or rest on' })
    .default({ jsonRpc: true, rest: true }),
  compatibility: z.strictObject({ v0_3: z.boolean().default(true) }).default({ v0_3: true }),
  signCard: z
    .strictObject({
      key: z.custom<CardSigningKey>((v) => typeof v === 'string' || (typeof v === 'object' && v !== null), {
        error: 'must be a private key: a KeyObject, a CryptoKey, a private JWK or a PEM string',
      }),
      kid: z.string().min(1).optional(),
      alg: z.enum(CARD_SIGNING_ALGORITHMS).optional(),
      jku: z.url().optional(),
    })
    .optional(),
  pushNotifications: PushNotificationsOptionSchema.optional(),
});

const JSON_TYPES = ['application/json', 'application/*+json'];

export function createA2ARouter(options: A2ARouterOptions): A2ARouter {
  const settings = parseOptions('createA2ARouter', RouterOptionsSchema, options);
  // Every engine log line written while serving a request carries its request id and trace ids.
  const logger = withRequestContext(settings.logger ?? consoleLogger);
  // a2aAuth built from options logs its rejections (one warn line each) to the router's logger.
  const auth =
    options.auth !== null && typeof options.auth === 'object' && !('logger' in options.auth) ? { ...options.auth, logger } : options.auth;
  const preset = a2aMiddlewareChain(
    { security: options.security, tracing: options.tracing, auth, tenant: options.tenant },
    'createA2ARouter',
  );
  // Parsed copy of the card (validated, unknown fields dropped); the interface list may still be empty.
  const card: AgentCard = { ...settings.agentCard, supportedInterfaces: settings.agentCard.supportedInterfaces ?? [] };
  // The card states push support exactly when push is configured: a promise the server can keep.
  if (settings.pushNotifications) card.capabilities = { ...card.capabilities, pushNotifications: true };
  else if (card.capabilities.pushNotifications === true) {
    throw optionsError(
      'createA2ARouter',
      'agentCard.capabilities.pushNotifications',
      'is true, but push notifications are not configured: set the pushNotifications option (the card then states it by itself)',
    );
  }
  const observability = routerObservability(settings, logger);
  const taskStore = observability.taskStore(settings.taskStore ?? new InMemoryTaskStore());
  const push = settings.pushNotifications
    ? createPushNotifications(settings.pushNotifications, { taskStore, logger, observer: observability.push })
    : undefined;
  const handler = new A2ARequestHandler({
    agentCard: card,
    executor: settings.executor,
    taskStore,
    push: push?.service,
    bus: settings.eventBus,
    leases: settings.taskLeases,
    leaseWaitMs: settings.leaseWaitMs,
    events: push ? combineEngineEvents([observability.events, push.service.events].filter((e) => e !== undefined), logger) : observability.events,
    logger,
    cancelGracePeriodMs: settings.cancelGracePeriodMs,
    turnTimeoutMs: settings.turnTimeoutMs,
    extendedAgentCard: settings.extendedAgentCard,
  });
  observability.observe(handler);

  // Parse JSON unless the host app already did. Not strict: a body such as `42` is valid JSON, so it
  // is an invalid request (-32600), not a parse error. raw-body (under express.json in Express 4 and
  // 5) binds its callback to the caller's async context, so AsyncLocalStorage values survive parsing.
  // a2aSecurity may set a smaller limit per request: one parser per distinct limit.
  const parsers = new Map<number, express.RequestHandler>();
  const parserFor = (limit: number) => {
    let parser = parsers.get(limit);
    if (!parser) parsers.set(limit, (parser = express.json({ limit, type: JSON_TYPES, strict: false })));
    return parser;
  };

  // The card never changes after construction: its Last-Modified is now (§8.6.1).
  const cardModified = new Date();
  const bindings: ServedBindings = settings.bindings;
  // Every served card (public, origin root, extended) is presented alike: interfaces, v0.3 fields, signatures.
  const presenter = cardPresenter({
    bindings,
    // Each binding served also speaks v0.3 (HTTP+JSON under `/v1/...`) while compatibility is on.
    v03Bindings: settings.compatibility.v0_3 ? [...(bindings.jsonRpc ? ['JSONRPC'] : []), ...(bindings.rest ? ['HTTP+JSON'] : [])] : [],
    signer: settings.signCard ? cardSigner(settings.signCard) : undefined,
  });
  const serveCard = agentCardRoute(card, settings.agentCardMaxAgeSeconds, undefined, cardModified, presenter.at);
  // One negotiator and one heartbeat for both bindings.
  const routeOptions = {
    handler,
    logger,
    extensions: new ExtensionNegotiator(card),
    streamLimits: streamLimits(settings.heartbeatIntervalMs, settings.streamBufferBytes, settings.streamStallMs, logger, settings.streamBufferTotalBytes),
    callContext: settings.callContext,
    bindings,
    compatibility: settings.compatibility,
    presentCard: presenter.forRequest,
    presentV03RestCard: presenter.v03RestCard,
    pushNotifications: push !== undefined,
  };
  const serveRpc = asyncHandler(jsonRpcRoute(routeOptions));
  const serveRest = restRoute(routeOptions);
  const fail = routerErrorHandler(logger);
  const notFound = notFoundMessage(bindings);

  const wiring = wiringReporter(logger, settings.callContext !== undefined);

  /** Body parsing, then the JSON-RPC route; errors of either go to the one error handler. */
  const rpc = (req: Request, res: Response, next: NextFunction): void => {
    wiring.checkRequest(req);
    const limit = readA2ABodyLimit(req) ?? settings.bodyLimit;
    // Too large before reading (declared), or read already by the host's own, larger-limit parser.
    if (bodyOverLimit(req, limit)) {
      answerBeforeBody(req, res);
      return fail(bodyTooLargeError(limit), req, res, next);
    }
    parserFor(limit)(req, res, (parseError?: unknown) => {
      if (parseError) return fail(parseError, req, res, next);
      serveRpc(req, res, (error?: unknown) => (error ? fail(error, req, res, next) : next()));
    });
  };

  /**
   * The HTTP+JSON route: a POST's body first (media type, size limit, JSON); errors in HTTP+JSON.
   * A GET or DELETE reads no body.
   */
  const rest = (req: Request, res: Response, next: NextFunction, match: RestMatch): void => {
    wiring.checkRequest(req);
    const binding = restBindingOf(match);
    const serve = (): void => {
      serveRest(req, res, match).catch((error: unknown) => fail(error, req, res, next, binding));
    };
    if (!match.hasBody) return serve();
    const unsupported = unsupportedMediaType(req);
    if (unsupported) {
      answerBeforeBody(req, res);
      return writeError(req, res, unsupported, binding, null, undefined, UNSUPPORTED_MEDIA_TYPE);
    }
    const limit = readA2ABodyLimit(req) ?? settings.bodyLimit;
    if (bodyOverLimit(req, limit)) {
      answerBeforeBody(req, res);
      return fail(bodyTooLargeError(limit), req, res, next, binding);
    }
    parserFor(limit)(req, res, (parseError?: unknown) => (parseError ? fail(parseError, req, res, next, binding) : serve()));
  };

  /**
   * The HTTP+JSON route `path` names. With v0.3 compatibility, a `/v1/...` request served as 0.3
   * (no A2A-Version, or 0.3) that names a v0.3 REST route is v0.3 (`/v1/message:send`); anything
   * else, a request stating 1.0 among them, is read as v1.0, where `/v1` is a tenant prefix. A
   * path without the prefix costs nothing more than before.
   */
  const v03Rest = settings.compatibility.v0_3;
  const matchRest = (req: Request, path: string): RestLookup | undefined =>
    (v03Rest && path.startsWith(V03_REST_PREFIX) && requestsV03(req) && matchV03RestRoute(req.method, path)) || matchRestRoute(req.method, path);

  /** The preset middlewares (if any), in order, then the HTTP+JSON route for a `match`, else JSON-RPC. */
  const withPreset = (req: Request, res: Response, next: NextFunction, match?: RestMatch): void => {
    let index = 0;
    const step = (error?: unknown): void => {
      if (error) return fail(error, req, res, next, match ? restBindingOf(match) : 'jsonrpc');
      const middleware = preset[index++];
      if (!middleware) return match ? rest(req, res, next, match) : rpc(req, res, next);
      try {
        middleware(req, res, step);
      } catch (thrown) {
        step(thrown);
      }
    };
    step();
  };

  // A plain dispatcher rather than an Express sub-app: a sub-app re-prototypes req/res on every
  // request, and Express 4 and 5 disagree on route patterns with a ':' (`/message:send`): the
  // HTTP+JSON paths are matched by matchRestRoute. The public card needs no credentials and no
  // tenant, so it is served before the preset.
  const router = function a2aRouter(req: Request, res: Response, next: NextFunction): void {
    if (wiring.firstRequest) wiring.checkMount(req, router);
    const path = pathOf(req);
    if ((path === '/' || path === '') && bindings.jsonRpc) {
      if (req.method === 'POST') return preset.length > 0 ? withPreset(req, res, next) : rpc(req, res, next);
      if (settings.unmatched === 'respond') return unmatched(req, res, path, RPC_METHODS);
    } else if (path === '/.well-known/agent-card.json') {
      if (req.method === 'GET' || req.method === 'HEAD') return serveCard(req, res);
      if (settings.unmatched === 'respond') return unmatched(req, res, path, CARD_METHODS);
    } else {
      const found = bindings.rest ? matchRest(req, path) : undefined;
      if (found && 'match' in found) return preset.length > 0 ? withPreset(req, res, next, found.match) : rest(req, res, next, found.match);
      if (settings.unmatched === 'respond') return unmatched(req, res, path, found?.allow);
    }
    next();
  } as A2ARouter & MountableApp;
  registerRouter(router);

  /** The JSON 404/405; first, a warning if a route the app registered after the router wanted it. */
  function unmatched(req: Request, res: Response, path: string, allow?: string): void {
    wiring.checkUnmatched(req, router, path);
    answerUnmatched(req, res, notFound, allow);
  }

  // Express mounts objects that have `handle` and `set` as sub-apps: it then records where
  // (`mountpath`, `parent`) and emits 'mount', which is how the router learns its path at start-up.
  router.handle = router;
  router.set = () => router;
  router.emit = (event: string, parent: unknown) => {
    if (event === 'mount') {
      rememberMountLayer(router, parent);
      // With JSON-RPC off, a JSON-RPC interface in the card is served elsewhere.
      if (bindings.jsonRpc) warnOnMountMismatch(router.mountpath, card, logger);
    }
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
    cardModified,
    presenter.at,
  );
  Object.defineProperties(router, {
    liveExecutions: { get: () => handler.liveExecutions, enumerable: true },
    liveObservers: { get: () => handler.liveObservers, enumerable: true },
    wellKnownCard: { value: wellKnownCard, enumerable: true },
    openTaskPublisher: { value: (scope: TaskScope, taskId: string) => handler.openTaskPublisher(scope, taskId), enumerable: true },
    livePushDeliveries: { get: () => (push ? push.dispatcher.pending + push.dispatcher.held : 0), enumerable: true },
    close: {
      value: async (closeOptions?: { graceMs?: number }) => {
        const graceMs = closeOptions?.graceMs ?? 10_000;
        await handler.close(graceMs);
        // The last events' deliveries get the same grace; a durable outbox keeps what is left.
        await push?.service.close(graceMs);
      },
      enumerable: true,
    },
  });
  return router;
}

/** The card signer of the `signCard` option; a key it cannot use is an options error naming it. */
function cardSigner(options: CardSigningOptions): CardSigner {
  try {
    return new CardSigner(options);
  } catch (error) {
    if (error instanceof CardSigningKeyError) throw optionsError('createA2ARouter', `signCard.${error.option}`, error.message);
    throw error;
  }
}

/** The request path below the mount point, without re-parsing the URL on the hot path (`req.path` does). */
function pathOf(req: Request): string {
  const url = req.url;
  if (url.charCodeAt(0) !== 0x2f /* '/' */) return req.path; // absolute-form or unusual targets
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** The error format of an HTTP+JSON route: v1.0's google.rpc.Status, or v0.3's `{code, message}`. */
const restBindingOf = (match: RestMatch): ErrorBinding => (match.v03 ? 'rest-v0.3' : 'rest');

const RPC_METHODS = 'POST, OPTIONS';
const CARD_METHODS = 'GET, HEAD, OPTIONS';
const NOT_FOUND: StatusOverride = { http: 404, status: 'NOT_FOUND' };
const METHOD_NOT_ALLOWED: StatusOverride = { http: 405, status: 'UNIMPLEMENTED' };
// ContentTypeNotSupported (INVALID_ARGUMENT), with the HTTP status that says "request media type".
const UNSUPPORTED_MEDIA_TYPE: StatusOverride = { http: 415, status: 'INVALID_ARGUMENT' };

/** What a 404 under the mount says the router serves. */
function notFoundMessage(bindings: ServedBindings): string {
  const served = [
    ...(bindings.jsonRpc ? ['JSON-RPC at its base URL'] : []),
    ...(bindings.rest ? ['HTTP+JSON below it (message:send, tasks, ...)'] : []),
  ];
  return `Not found: this agent serves ${served.join(', ')} and its card at .well-known/agent-card.json below it`;
}

/**
 * A request under the mount that the router does not serve: OPTIONS on one of its paths → 204 with
 * `Allow`; another method there → 405 with `Allow`; any other path → 404. The body is A2A-shaped in
 * the binding the request looks like (a JSON-RPC envelope for a POST, else a google.rpc.Status).
 */
function answerUnmatched(req: Request, res: Response, notFound: string, allow?: string): void {
  if (allow !== undefined && req.method === 'OPTIONS') {
    res.statusCode = 204;
    res.setHeader('Allow', allow);
    res.end();
    return;
  }
  const binding = errorBindingFor(req);
  const id = binding === 'jsonrpc' ? requestIdOf(req.body) : null;
  if (allow === undefined) {
    const error = new A2AError('MethodNotFound', notFound);
    return writeError(req, res, error, binding, id, undefined, NOT_FOUND);
  }
  res.setHeader('Allow', allow);
  writeError(req, res, new A2AError('MethodNotFound', `Method ${req.method} is not allowed here (allowed: ${allow})`), binding, id, undefined, METHOD_NOT_ALLOWED);
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
 * anything unexpected; in the binding of the route the request was for (JSON-RPC unless said).
 */
function routerErrorHandler(logger: Logger) {
  return function a2aRouterError(error: unknown, req: Request, res: Response, next: NextFunction, binding: ErrorBinding = 'jsonrpc'): void {
    if (res.headersSent) return next(error);
    // A wiring mistake (e.g. an uncalled middleware factory) is for the app's error handler and logs.
    if (error instanceof A2AWiringError) return next(error);
    writeError(req, res, asA2AError(error, logger), binding, binding === 'jsonrpc' ? requestIdOf(req.body) : null);
  };
}

/** What the client is told about an error that reached the router's error handler. */
function asA2AError(error: unknown, logger: Logger): A2AError {
  if (error instanceof A2AError) return error;
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.parse.failed') return new A2AError('ParseError');
  if (type === 'entity.too.large') {
    // The same answer as a declared length over the limit (a2aSecurity's, or the router's own).
    const limit = (error as { limit?: unknown }).limit;
    return typeof limit === 'number' ? bodyTooLargeError(limit) : new A2AError('PayloadTooLarge');
  }
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
