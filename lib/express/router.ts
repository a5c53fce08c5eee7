/**
 * createA2ARouter(): an Express middleware that serves one A2A agent where it is mounted:
 * the agent card at `<mount>/.well-known/agent-card.json`, JSON-RPC at `POST <mount>` and the
 * HTTP+JSON routes below it (`POST <mount>/message:send`, `GET <mount>/tasks/{id}`, ...); for v0.3
 * clients (compatibility), JSON-RPC v0.3 at the mount and the v0.3 HTTP+JSON routes below `/v1`.
 * Three parts: the options (./options.ts, checked here at construction), the assembly
 * (./assemble.ts) and the dispatcher (./dispatcher.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { consoleLogger, type Logger } from '../logger.js';
import { optionsError, parseOptions } from '../options.js';
import { ExtensionNegotiator } from '../protocol/extensions.js';
import type { TaskScope } from '../engine/seams/task-store.js';
import type { TaskPublisher } from '../engine/task-publisher.js';
import { agentCardRoute } from './agent-card-route.js';
import { cardPresenter } from './card-presenter.js';
import { CardSigner, CardSigningKeyError, type CardSigningOptions } from './card-signer.js';
import { statedJsonRpcInterface, statedRestInterface, type ServedBindings } from '../protocol/card.js';
import { originOf } from '../context/node-request.js';
import { jsonRpcCodec } from '../http/jsonrpc.js';
import { restCodec } from '../http/rest.js';
import { v03JsonRpcCodec } from '../http/v03-jsonrpc.js';
import { v03RestCodec } from '../http/v03-rest.js';
import { streamLimits } from '../http/stream.js';
import { a2aMiddlewareChain } from '../middleware/preset.js';
import { registerRouter, wiringReporter } from '../middleware/wiring.js';
import { withRequestContext } from '../middleware/logger.js';
import { assemble, type Assembly } from './assemble.js';
import { a2aDispatcher, type Codecs } from './dispatcher.js';
import { makeMountable, type MountableApp } from './mount.js';
import { RouterOptionsSchema, type A2ARouterOptions, type RouterSettings } from './options.js';
import { notFoundMessage, routerErrorHandler } from './router-errors.js';

export type { A2ARouterOptions } from './options.js';

/**
 * A `(req, res, next)` handler as Express, Connect and plain Node servers call it: typed with Node's
 * own request and response, so using it needs no Express types.
 */
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
   * Serves the card at the origin root, where the spec's discovery looks for it:
   * `app.get('/.well-known/agent-card.json', agent.wellKnownCard)`. The interface URL in it is the
   * `publicUrl` option when set; else the router's mount path through its parent apps (app.use on
   * an app), or as learned from the first request the router served (nested in Routers, Connect).
   * Before either is known it advertises the bare origin and warns once (A2A_WIRING_CARD_URL_UNKNOWN).
   */
  readonly wellKnownCard: A2AHandler;
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

export function createA2ARouter(options: A2ARouterOptions): A2ARouter {
  const settings = parseOptions('createA2ARouter', RouterOptionsSchema, options);
  // Every engine log line written while serving a request carries its request id and trace ids.
  const logger = withRequestContext(settings.logger ?? consoleLogger);
  const assembly = assemble(settings, logger);
  const { card, handler } = assembly;
  const bindings: ServedBindings = settings.bindings;
  const publicUrl = settings.publicUrl;
  // The card never changes after construction: its Last-Modified is now (§8.6.1).
  const cardModified = new Date();
  // Every served card (public, origin root, extended) is presented alike: interfaces, v0.3 fields, signatures.
  const presenter = cardPresenter({
    bindings,
    // Each binding served also speaks v0.3 (HTTP+JSON under `/v1/...`) while compatibility is on.
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
  }) as A2ARouter & MountableApp;
  registerRouter(router, settings.compatibility.v0_3);
  const mountedPath = makeMountable(router, card, bindings.jsonRpc, logger);
  // At the origin root, the endpoint is where this router is mounted (through its parent apps).
  const rootBaseUrl = publicUrl === undefined ? rootBaseUrlOf(mountedPath, wiring, card, bindings, logger) : () => publicUrl;
  const wellKnownCard = agentCardRoute(card, settings.agentCardMaxAgeSeconds, rootBaseUrl, cardModified, presenter.at);
  return withGauges(router, assembly, wellKnownCard);
}

/**
 * Where the card at the origin root says the router is: its mount path through the parent apps
 * (known once an app mounted it), else the one the first request it served came by (a Router emits
 * no 'mount'; Connect neither). Before either, the bare origin, with one warning naming the fix,
 * unless the card states every interface URL itself.
 */
function rootBaseUrlOf(
  mountedPath: () => string | undefined,
  wiring: ReturnType<typeof wiringReporter>,
  card: Assembly['card'],
  bindings: ServedBindings,
  logger: Logger,
): (req: IncomingMessage) => string {
  const statesItsUrl = bindings.jsonRpc ? statedJsonRpcInterface(card) !== undefined : statedRestInterface(card) !== undefined;
  let warned = statesItsUrl;
  return (req) => {
    const path = mountedPath() ?? wiring.mountPath;
    if (path === undefined && !warned) {
      warned = true;
      logger.warn(
        { code: 'A2A_WIRING_CARD_URL_UNKNOWN' },
        "agent.wellKnownCard serves a card whose interface URL is the bare origin: the router was not mounted with app.use on an app (a Router or Connect emits no 'mount') and no request has reached it yet, so its mount path is unknown. Set the router's publicUrl option (e.g. publicUrl: 'https://example.com/api/v2/agent'), or state the interface URLs in the card",
      );
    }
    return originOf(req) + (path ?? '');
  };
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

/** The router's gauges, the origin-root card, task hand-off and graceful close. */
function withGauges(router: A2ARouter, { handler, push, stopRetention, openPublisher }: Assembly, wellKnownCard: A2AHandler): A2ARouter {
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
