/** createA2ARouter(): the card, JSON-RPC and HTTP+JSON (v1.0, and v0.3 when compatible) where it is mounted. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { consoleLogger, type Logger } from '../options.js';
import { optionsError, parseOptions } from '../options.js';
import { ExtensionNegotiator } from '../protocol/extensions.js';
import type { TaskScope } from '../engine/seams/task-store.js';
import type { TaskPublisher } from '../engine/task-publisher.js';
import { agentCardRoute } from './agent-card-route.js';
import { cardPresenter } from './card-presenter.js';
import { CardSigner, CardSigningKeyError, type CardSigningOptions } from './card-signer.js';
import { statedJsonRpcInterface, statedRestInterface, type ServedBindings } from '../protocol/card.js';
import { originOf } from '../context/node-request.js';
import { literalPathTo } from '../internals/express-layer-stack.js';
import { connectMountPath } from '../internals/express-sub-app.js';
import { jsonRpcCodec } from '../http/jsonrpc.js';
import { restCodec } from '../http/rest.js';
import { v03JsonRpcCodec } from '../http/v03-jsonrpc.js';
import { v03RestCodec } from '../http/v03-rest.js';
import { streamLimits } from '../http/stream.js';
import { a2aMiddlewareChain } from '../middleware/preset.js';
import { registerRouter, wiringReporter } from '../middleware/wiring.js';
import { withRequestContext } from '../middleware/logger.js';
import { assemble, type Assembly } from './assemble.js';
import { inspectorHook } from './inspector-hook.js';
import { a2aDispatcher, type Codecs } from './dispatcher.js';
import { makeMountable, type MountableApp } from './mount.js';
import { RouterOptionsSchema, type A2ARouterOptions, type RouterSettings } from './options.js';
import { notFoundMessage, routerErrorHandler } from './router-errors.js';

export type { A2ARouterOptions } from './options.js';

/** A `(req, res, next)` handler typed with Node's request and response: using it needs no Express types. */
export type A2AHandler = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void;

/** The router (an Express or Connect middleware), plus read-only gauges for tests and operators. */
export type A2ARouter = A2AHandler & {
  /** Tasks with a live execution (0 when every task is parked or finished). */
  readonly liveExecutions: number;
  /** Blocking sends, streams and subscribers attached to live executions. */
  readonly liveObservers: number;
  /** Push work held in this process: fan-outs, deliveries, their per-task, per-config and per-host state (0 once all is done). */
  readonly livePushDeliveries: number;
  /**
   * The card at the origin root (`app.get('/.well-known/agent-card.json', agent.wellKnownCard)`), naming `publicUrl` or the
   * mount; where the mount cannot be known, the bare origin, `no-store`, and one warning (A2A_WIRING_CARD_URL_UNKNOWN).
   */
  readonly wellKnownCard: A2AHandler;
  /** A publisher for handed-off work (`events.handOff()`), in any process sharing the store; TaskNotFound outside `scope`. */
  openTaskPublisher(scope: TaskScope, taskId: string): Promise<TaskPublisher>;
  /**
   * Graceful shutdown (on SIGTERM, before `server.close()`): 503 to new messages; turns get `graceMs` (10 s), then FAIL;
   * streams end after their last event. Resolves when nothing is left running.
   */
  close(options?: { graceMs?: number }): Promise<void>;
};

export function createA2ARouter(options: A2ARouterOptions): A2ARouter {
  const settings = parseOptions('createA2ARouter', RouterOptionsSchema, options);
  const logger = withRequestContext(settings.logger ?? consoleLogger);
  const inspector = settings.inspector ? inspectorHook(settings.inspector, logger) : undefined;
  const assembly = assemble(settings, logger, inspector?.tap);
  const { card, handler } = assembly;
  const bindings: ServedBindings = settings.bindings;
  const publicUrl = settings.publicUrl;
  // The card never changes after construction: its Last-Modified is now (§8.6.1).
  const cardModified = new Date();
  const presenter = cardPresenter({
    bindings,
    v03Bindings: settings.compatibility.v0_3 ? [...(bindings.jsonRpc ? ['JSONRPC'] : []), ...(bindings.rest ? ['HTTP+JSON'] : [])] : [],
    signer: settings.signCard ? cardSigner(settings.signCard) : undefined,
    baseUrlFor: publicUrl === undefined ? undefined : () => publicUrl,
  });
  const wiring = wiringReporter(logger, settings.callContext !== undefined);
  const router = a2aDispatcher({
    settings,
    preset: presetOf(options, logger),
    codecs: codecsOf(settings, card, logger, presenter),
    serve: { handler, callContext: settings.callContext, pushOn: assembly.push !== undefined, tracing: assembly.operations },
    serveCard: agentCardRoute(
      card,
      settings.agentCardMaxAgeSeconds,
      publicUrl === undefined ? undefined : () => publicUrl,
      cardModified,
      presenter.at,
    ),
    fail: routerErrorHandler(logger),
    wiring,
    notFound: notFoundMessage(bindings),
    inspector: inspector?.handler,
  }) as A2ARouter & MountableApp;
  registerRouter(router, settings.compatibility.v0_3);
  const mountedPath = makeMountable(router, card, bindings.jsonRpc, logger);
  inspector?.start(
    { card, taskStore: assembly.taskStore, pushConfigs: assembly.push?.configs, signingKey: settings.signCard?.key },
    () => publicUrl ?? `http://localhost:<port>${mountedPath() ?? ''}`,
  );
  const rootBaseUrl = publicUrl === undefined ? rootBaseUrlOf(router, mountedPath, wiring, card, bindings, logger) : () => publicUrl;
  const wellKnownCard = agentCardRoute(card, settings.agentCardMaxAgeSeconds, rootBaseUrl, cardModified, presenter.at);
  return withGauges(router, assembly, wellKnownCard, inspector?.close);
}

/** Where the origin-root card says the router is: mount path, routing table, Connect, or the first request's path. */
function rootBaseUrlOf(
  router: A2AHandler,
  mountedPath: () => string | undefined,
  wiring: ReturnType<typeof wiringReporter>,
  card: Assembly['card'],
  bindings: ServedBindings,
  logger: Logger,
): (req: IncomingMessage) => string | undefined {
  const statesItsUrl = bindings.jsonRpc ? statedJsonRpcInterface(card) !== undefined : statedRestInterface(card) !== undefined;
  let warned = statesItsUrl;
  let located: string | undefined;
  return (req) => {
    located ??= mountedPath() ?? literalPathTo(rootAppOf(req), (handle) => handle === router) ?? connectMountPath(router, req) ?? wiring.mountPath;
    if (located === undefined && !warned) {
      warned = true;
      logger.warn(
        { code: 'A2A_WIRING_CARD_URL_UNKNOWN' },
        "agent.wellKnownCard cannot tell where the router is mounted (not found in the app's routing table, and no request has reached it yet), so the card it serves names the bare origin, uncached. Set the router's publicUrl option (e.g. publicUrl: 'https://example.com/api/v2/agent'), or state the interface URLs in the card",
      );
    }
    return located === undefined ? undefined : originOf(req) + located;
  };
}

/** The request's top Express app; undefined off Express. */
function rootAppOf(req: IncomingMessage): unknown {
  let app = (req as { app?: { parent?: unknown } }).app;
  while (app?.parent) app = app.parent as { parent?: unknown };
  return app;
}

/** The preset from the router's options; a2aAuth built from options logs its rejections to the router's logger. */
function presetOf(options: A2ARouterOptions, logger: Logger) {
  const auth = options.auth !== null && typeof options.auth === 'object' && !('logger' in options.auth) ? { ...options.auth, logger } : options.auth;
  return a2aMiddlewareChain({ security: options.security, tracing: options.tracing, auth, tenant: options.tenant }, 'createA2ARouter');
}

/** Each binding in each version; one negotiator and one heartbeat for all of them. */
function codecsOf(settings: RouterSettings, card: Assembly['card'], logger: Logger, presenter: ReturnType<typeof cardPresenter>): Codecs {
  const extensions = new ExtensionNegotiator(card);
  const limits = streamLimits(
    settings.heartbeatIntervalMs,
    settings.streamBufferBytes,
    settings.streamStallMs,
    logger,
    settings.streamBufferTotalBytes,
  );
  const shared = { extensions, streamLimits: limits, logger, presentCard: presenter.forRequest };
  return {
    jsonRpc: jsonRpcCodec({ ...shared, policy: settings.compatibility }),
    jsonRpcV03: v03JsonRpcCodec(shared),
    rest: restCodec(shared),
    restV03: v03RestCodec({ ...shared, presentCard: presenter.v03RestCard }),
  };
}

function withGauges(
  router: A2ARouter,
  { handler, push, stopRetention, openPublisher }: Assembly,
  wellKnownCard: A2AHandler,
  closeInspector?: () => void,
): A2ARouter {
  Object.defineProperties(router, {
    liveExecutions: { get: () => handler.liveExecutions, enumerable: true },
    liveObservers: { get: () => handler.liveObservers, enumerable: true },
    wellKnownCard: { value: wellKnownCard, enumerable: true },
    openTaskPublisher: {
      value: (scope: TaskScope, taskId: string) => openPublisher(scope, taskId, () => handler.openTaskPublisher(scope, taskId)),
      enumerable: true,
    },
    livePushDeliveries: { get: () => (push ? push.dispatcher.pending + push.dispatcher.held : 0), enumerable: true },
    close: {
      value: async (closeOptions?: { graceMs?: number }) => {
        const graceMs = closeOptions?.graceMs ?? 10_000;
        closeInspector?.();
        await Promise.all([handler.close(graceMs), stopRetention()]);
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
