/**
 * createA2ARouter's options: ONE zod schema, checked at construction; the public type
 * `A2ARouterOptions` is inferred from it (its input side), and each field's doc comment is what
 * the type shows. docs/options.md lists exactly these names (a test holds it to that).
 */
import { z } from 'zod';
import type { Logger } from '../logger.js';
import { hasMethods } from '../options.js';
import type { AgentCardInput } from '../protocol/card.js';
import { AgentCardSchema, AgentInterfaceSchema } from '../protocol/schemas.js';
import type { AgentExecutor } from '../engine/executor.js';
import type { ExtendedAgentCardProvider } from '../engine/request-handler.js';
import type { TaskStore } from '../engine/seams/task-store.js';
import type { TaskEventBus } from '../engine/seams/task-event-bus.js';
import type { TaskLeases } from '../engine/seams/task-leases.js';
import { PushNotificationsOptionSchema, type A2APushNotificationsOptions } from '../engine/push/push-options.js';
import { parseByteSize } from '../middleware/security.js';
import type { A2AMiddlewareChainOptions } from '../middleware/preset.js';
import { isMetricsOption, type A2AMetricsOption } from '../observability/metrics.js';
import { isTracesOption, type A2ATracesOption } from '../observability/tracing.js';
import type { A2ATaskEventHook } from '../observability/router-observability.js';
import type { CallContextHook } from '../http/serve.js';
import { CARD_SIGNING_ALGORITHMS, type CardSigningKey } from './card-signer.js';

/** `schema` as accepting `Input` (what users pass), for a field whose zod input type is wider or narrower than the documented one. */
const accepting =
  <Input>() =>
  <S extends z.ZodType>(schema: S) =>
    schema as unknown as z.ZodType<z.output<S>, Input>;

/** A preset slot: checked by a2aMiddlewareChain, which names the factory option that is wrong. */
const presetSlot = <K extends keyof A2AMiddlewareChainOptions>() => z.custom<A2AMiddlewareChainOptions[K]>(() => true).optional();

/**
 * The fields, one per option. A class rather than an object literal: the declaration emitter keeps
 * the doc comment of a class member (what the public .d.ts and an editor show for each option of
 * the inferred type), not of an object literal's property.
 */
class RouterOptionFields {
  /** The agent card (§8): validated here; its interface list is filled in where the router is mounted. */
  readonly agentCard = accepting<AgentCardInput>()(AgentCardSchema.extend({ supportedInterfaces: z.array(AgentInterfaceSchema).optional() }));
  /** The agent: `execute(context, events)`, and optionally `cancel(context, events)`. */
  readonly executor = z.custom<AgentExecutor>(hasMethods('execute'), { error: 'must be an object with an execute(context, events) method' });
  /** Where tasks live; an in-memory store by default. */
  readonly taskStore = z
    .custom<TaskStore>(hasMethods('get', 'create', 'update', 'list'), { error: 'must implement get, create, update and list' })
    .optional();
  /**
   * Where committed task events are published and followed; in-process by default. Several
   * replicas share one (e.g. `createRedisBackend()` from `a2a-express-kit/redis`).
   */
  readonly eventBus = z
    .custom<TaskEventBus>(hasMethods('publish', 'subscribe', 'requestCancel', 'onCancelRequest'), {
      error: 'must implement publish, subscribe, requestCancel and onCancelRequest',
    })
    .optional();
  /**
   * Per-task leases, for several replicas on one store: one replica runs a task's turns at a time,
   * a follow-up arriving elsewhere waits for the lease, and a task whose replica died is settled
   * once its lease expires. None by default (one process needs none).
   */
  readonly taskLeases = z.custom<TaskLeases>(hasMethods('acquire', 'claimExpired'), { error: 'must implement acquire and claimExpired' }).optional();
  /**
   * How long a follow-up waits for a task's lease held by another replica (its turn running there)
   * before it is refused. Default 30000 ms. Only with `taskLeases`.
   */
  readonly leaseWaitMs = z.number().int().min(0).max(3_600_000).default(30_000);
  /** pino-compatible; warnings and errors go to the console by default. */
  readonly logger = z
    .custom<Logger>(hasMethods('debug', 'info', 'warn', 'error'), { error: 'must have debug, info, warn and error methods' })
    .optional();
  /** Resolves the caller and tenant per request (overrides what a2aAuth/a2aTenant contributed). */
  readonly callContext = z
    .custom<CallContextHook>((v) => typeof v === 'function', { error: 'must be a function (req) => ({ caller, tenant })' })
    .optional();
  /** How long CancelTask waits for the agent before writing CANCELED itself. Default 5000 ms. */
  readonly cancelGracePeriodMs = z.number().int().min(0).max(600_000).default(5_000);
  /** Interval of `: ping` comments on idle SSE streams. Default 15000 ms; 0 disables. */
  readonly heartbeatIntervalMs = z.number().int().min(0).max(3_600_000).default(15_000);
  /** Bytes an SSE stream may hold for a client that does not read; past it the stream is cut (the client can resume). Default 1 MiB. */
  readonly streamBufferBytes = z
    .number()
    .int()
    .min(1024)
    .default(1024 * 1024);
  /** Bytes all the SSE streams of the router may hold together; checked before each write, past it the furthest behind are cut. Default 32 MiB (a healthy reader of a long in-memory stream holds up to 16 MB at once). */
  readonly streamBufferTotalBytes = z
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024);
  /** How long a client may take to read one event larger than streamBufferBytes before its stream is cut. Default 10 s. */
  readonly streamStallMs = z.number().int().min(1).max(600_000).default(10_000);
  /**
   * How long any one call to the task store, event bus history, leases or push stores may take
   * before the engine gives up on it (the client gets 503 UNAVAILABLE / -32603 instead of a hang).
   * Default 5000 ms; 0: no deadline.
   */
  readonly storeTimeoutMs = z.number().int().min(0).max(600_000).default(5_000);
  /** A turn that has not ended after this long is failed (its signal fires). Default 0: no deadline. */
  readonly turnTimeoutMs = z.number().int().min(0).max(2_147_483_647).default(0);
  /** Served by GetExtendedAgentCard to authenticated callers when the card declares it. */
  readonly extendedAgentCard = z
    .custom<ExtendedAgentCardProvider>((v) => typeof v === 'function' || (typeof v === 'object' && v !== null), {
      error: 'must be an agent card or a function (caller) => card',
    })
    .optional();
  /**
   * Largest accepted request body (bytes or a string such as '1mb'). Default '1mb'. Also applies to
   * a body the host app already parsed with a larger `express.json({ limit })`.
   */
  readonly bodyLimit = z
    .union([z.string().min(1), z.number().int().positive()])
    .transform((value, ctx) => {
      const bytes = parseByteSize(value);
      if (bytes === undefined) {
        ctx.addIssue({ code: 'custom', message: "must be a positive number of bytes, or a size such as '512kb' or '2mb'" });
        return z.NEVER;
      }
      return bytes;
    })
    .default(1024 * 1024);
  /**
   * Requests under the mount path that the router does not serve (another path, or another method
   * on one of its paths): 'respond' (default) answers an A2A-shaped JSON 404, or 405 with `Allow`;
   * 'next' passes them on, for an app that serves its own routes under the same prefix after the router.
   */
  readonly unmatched = z.enum(['respond', 'next']).default('respond');
  /** Cache-Control max-age of the public card. Default 300 s. */
  readonly agentCardMaxAgeSeconds = z.number().int().min(0).default(300);
  /**
   * The URL clients reach the router at (origin and mount path, e.g. `https://agents.example.com/api/v2/agent`).
   * Every card the router serves, `wellKnownCard` among them, then advertises its interfaces there
   * instead of the URL a request came in on: for a router behind a proxy that rewrites paths, or
   * nested in Routers where `wellKnownCard` cannot learn its mount path before a request reached it.
   */
  readonly publicUrl = z
    .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL such as https://agents.example.com/agent' })
    .refine((value) => !/[?#]/.test(value), { error: 'must have no query or fragment: the origin and the mount path only' })
    .transform((value) => (value.endsWith('/') ? value.slice(0, -1) : value))
    .optional();
  /**
   * The middleware preset, installed inside the router in the right order (security → tracing →
   * auth → tenant); each takes that factory's options or a built middleware. This one: a2aSecurity.
   */
  readonly security = presetSlot<'security'>();
  /** The preset's a2aTracing: `true`, its options, or a built a2aTracing() (see `security`). */
  readonly tracing = presetSlot<'tracing'>();
  /** The preset's a2aAuth: its options or a built a2aAuth() (see `security`). */
  readonly auth = presetSlot<'auth'>();
  /** The preset's a2aTenant: its options or a built a2aTenant() (see `security`). */
  readonly tenant = presetSlot<'tenant'>();
  /**
   * OpenTelemetry metrics (see README, Observability): `true` uses the global MeterProvider of
   * `@opentelemetry/api`, `{ meter }` that meter. Off by default: then nothing is measured or wrapped.
   */
  readonly metrics = z.custom<A2AMetricsOption>(isMetricsOption, { error: 'must be true, false or { meter } (an OpenTelemetry Meter)' }).optional();
  /**
   * OpenTelemetry spans (see docs/operations.md, Traces): one per operation, turn, cancel and
   * webhook request, store and lease calls as their events, linked across requests and replicas.
   * `true` loads `@opentelemetry/api` and uses the global TracerProvider; `{ api }` that module
   * (`{ api, tracer }`: that tracer). Off by default: then nothing is traced or wrapped. Not the
   * `tracing` option, which installs the a2aTracing middleware (request ids, incoming trace context).
   */
  readonly traces = z
    .custom<A2ATracesOption>(isTracesOption, {
      error: 'must be true, false or { api, tracer? } (the @opentelemetry/api module, an OpenTelemetry Tracer)',
    })
    .optional();
  /** Called with every event committed to the store (lifecycle hook; no OpenTelemetry needed). */
  readonly onTaskEvent = z.custom<A2ATaskEventHook>((v) => typeof v === 'function', { error: 'must be a function (info) => void' }).optional();
  /**
   * The bindings served at the mount path, both by default: JSON-RPC (`POST <mount>`) and HTTP+JSON
   * (`<mount>/message:send`, `<mount>/tasks/...`). One turned off answers 404 and leaves the card.
   */
  readonly bindings = z
    .strictObject({ jsonRpc: z.boolean().default(true), rest: z.boolean().default(true) })
    .refine((b) => b.jsonRpc || b.rest, { error: 'turns off both bindings: keep jsonRpc or rest on' })
    .default({ jsonRpc: true, rest: true });
  /**
   * A2A v0.3 compatibility, on by default: a request without `A2A-Version` (or with `0.3`) is served
   * with v0.3 methods and shapes on both bindings (JSON-RPC at the mount; HTTP+JSON at the v0.3 paths
   * `<mount>/v1/message:send`, `<mount>/v1/tasks/{id}`, ..., `<mount>/v1/card`), and the card carries
   * the v0.3 discovery fields and interfaces. A request stating 1.0 reads `/v1` as a tenant, as before.
   * `{ v0_3: false }`: such a request is answered VersionNotSupported (-32009), the card is v1.0 only.
   */
  readonly compatibility = z.strictObject({ v0_3: z.boolean().default(true) }).default({ v0_3: true });
  /**
   * Sign every served card, public and extended (§8.4): a JWS over the card's RFC 8785 canonical
   * form with `key` (a private KeyObject, CryptoKey, JWK or PEM); `kid` defaults to the key's JWK
   * thumbprint, `alg` to the key's, `jku` is left out unless given.
   */
  readonly signCard = z
    .strictObject({
      key: z.custom<CardSigningKey>((v) => typeof v === 'string' || (typeof v === 'object' && v !== null), {
        error: 'must be a private key: a KeyObject, a CryptoKey, a private JWK or a PEM string',
      }),
      kid: z.string().min(1).optional(),
      alg: z.enum(CARD_SIGNING_ALGORITHMS).optional(),
      jku: z.url().optional(),
    })
    .optional();
  /**
   * Push notifications (§3.1.7-3.1.10): the four config methods on every binding, inline configs
   * in SendMessage, and delivery of every committed event to the task's webhooks. `true` takes
   * every default. Off by default (or `false`): the methods answer PushNotificationNotSupported, and a card
   * stating `capabilities.pushNotifications: true` is refused. On, the card states it.
   */
  readonly pushNotifications = accepting<boolean | A2APushNotificationsOptions>()(PushNotificationsOptionSchema).optional();
  /**
   * The development inspector (docs/inspector.md), off by default: `true` serves it at
   * `<mount>/_inspector/` to loopback peers, behind a per-process token logged once with its URL.
   * Refused when NODE_ENV is production unless `allowProduction`; `hosts` adds Host names it
   * answers besides localhost and loopback addresses (e.g. a dev container's name).
   */
  readonly inspector = z
    .union([z.boolean(), z.strictObject({ allowProduction: z.boolean().default(false), hosts: z.array(z.string().min(1)).default([]) })])
    .transform((value) => (value === false ? undefined : value === true ? { allowProduction: false, hosts: [] as string[] } : value))
    .optional();
  /**
   * Retention of finished tasks, off by default (a store keeps what it durably holds until the
   * operator says otherwise): `{ finishedTaskTtlMs }` removes tasks that reached a terminal state
   * longer ago than that, with everything kept for them, in batches of `batchSize` (default 100)
   * every `intervalMs` (default 60000). The task store must implement `removeFinished()` (the
   * in-memory, SQLite, Redis and PostgreSQL stores do). See docs/stores.md, Retention.
   */
  readonly retention = z
    .strictObject({
      finishedTaskTtlMs: z.number().int().min(1_000),
      intervalMs: z.number().int().min(10).max(86_400_000).default(60_000),
      batchSize: z.number().int().min(1).max(10_000).default(100),
    })
    .optional();
}

/** The fields as a shape zod takes (an object type: a class type has no index signature). */
type RouterOptionsShape = { [K in keyof RouterOptionFields]: RouterOptionFields[K] };

export const RouterOptionsSchema: z.ZodObject<RouterOptionsShape, z.core.$strict> = z.strictObject(new RouterOptionFields());

/** createA2ARouter's options, as users write them (see each field's comment). */
export type A2ARouterOptions = z.input<typeof RouterOptionsSchema>;

/** The options once checked, defaults filled in. */
export type RouterSettings = z.output<typeof RouterOptionsSchema>;
