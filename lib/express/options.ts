/** createA2ARouter's options: one zod schema, checked at construction; `A2ARouterOptions` is inferred from it. */
import { z } from 'zod';
import type { Logger } from '../options.js';
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

/** One field per option; a class because the .d.ts keeps a class member's doc comment, not an object literal's. */
class RouterOptionFields {
  /** The agent card (§8): validated here; its interface list is filled in where the router is mounted. */
  readonly agentCard = accepting<AgentCardInput>()(AgentCardSchema.extend({ supportedInterfaces: z.array(AgentInterfaceSchema).optional() }));
  /** The agent: `execute(context, events)`, and optionally `cancel(context, events)`. */
  readonly executor = z.custom<AgentExecutor>(hasMethods('execute'), { error: 'must be an object with an execute(context, events) method' });
  /** Where tasks live; an in-memory store by default. */
  readonly taskStore = z
    .custom<TaskStore>(hasMethods('get', 'create', 'update', 'list'), { error: 'must implement get, create, update and list' })
    .optional();
  /** Where committed task events are published and followed; in-process by default, shared by replicas. */
  readonly eventBus = z
    .custom<TaskEventBus>(hasMethods('publish', 'subscribe', 'requestCancel', 'onCancelRequest'), {
      error: 'must implement publish, subscribe, requestCancel and onCancelRequest',
    })
    .optional();
  /** Per-task leases for replicas on one store: one runs a task's turns at a time; a dead one's tasks settle at expiry. */
  readonly taskLeases = z.custom<TaskLeases>(hasMethods('acquire', 'claimExpired'), { error: 'must implement acquire and claimExpired' }).optional();
  /** How long a follow-up waits for a lease another replica holds before it is refused. Default 30000 ms. Only with `taskLeases`. */
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
  /** Bytes all the router's SSE streams may hold together; past it the furthest behind are cut. Default 32 MiB. */
  readonly streamBufferTotalBytes = z
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024);
  /** How long a client may take to read one event larger than streamBufferBytes before its stream is cut. Default 10 s. */
  readonly streamStallMs = z.number().int().min(1).max(600_000).default(10_000);
  /** Deadline of any one store, bus, lease or push-store call (then 503 / -32603). Default 5000 ms; 0: none. */
  readonly storeTimeoutMs = z.number().int().min(0).max(600_000).default(5_000);
  /** A turn that has not ended after this long is failed (its signal fires). Default 0: no deadline. */
  readonly turnTimeoutMs = z.number().int().min(0).max(2_147_483_647).default(0);
  /** Served by GetExtendedAgentCard to authenticated callers when the card declares it. */
  readonly extendedAgentCard = z
    .custom<ExtendedAgentCardProvider>((v) => typeof v === 'function' || (typeof v === 'object' && v !== null), {
      error: 'must be an agent card or a function (caller) => card',
    })
    .optional();
  /** Largest accepted request body (bytes or '1mb'), also for a body the app already parsed. Default '1mb'. */
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
  /** Requests under the mount it does not serve: 'respond' (default) answers an A2A 404 or 405; 'next' passes them on. */
  readonly unmatched = z.enum(['respond', 'next']).default('respond');
  /** Cache-Control max-age of the public card. Default 300 s. */
  readonly agentCardMaxAgeSeconds = z.number().int().min(0).default(300);
  /** The URL clients reach the router at (`https://agents.example.com/agent`): every card names it, not the request's URL. */
  readonly publicUrl = z
    .url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL such as https://agents.example.com/agent' })
    .refine((value) => !/[?#]/.test(value), { error: 'must have no query or fragment: the origin and the mount path only' })
    .transform((value) => (value.endsWith('/') ? value.slice(0, -1) : value))
    .optional();
  /** The preset (security → tracing → auth → tenant), each the factory's options or a built one. This: a2aSecurity. */
  readonly security = presetSlot<'security'>();
  /** The preset's a2aTracing: `true`, its options, or a built a2aTracing() (see `security`). */
  readonly tracing = presetSlot<'tracing'>();
  /** The preset's a2aAuth: its options or a built a2aAuth() (see `security`). */
  readonly auth = presetSlot<'auth'>();
  /** The preset's a2aTenant: its options or a built a2aTenant() (see `security`). */
  readonly tenant = presetSlot<'tenant'>();
  /** OpenTelemetry metrics: `true` the global MeterProvider, `{ meter }` that meter. Off by default. */
  readonly metrics = z.custom<A2AMetricsOption>(isMetricsOption, { error: 'must be true, false or { meter } (an OpenTelemetry Meter)' }).optional();
  /** OpenTelemetry spans: `true` the global TracerProvider, `{ api, tracer? }` those. Off by default. Not `tracing`. */
  readonly traces = z
    .custom<A2ATracesOption>(isTracesOption, {
      error: 'must be true, false or { api, tracer? } (the @opentelemetry/api module, an OpenTelemetry Tracer)',
    })
    .optional();
  /** Called with every event committed to the store (lifecycle hook; no OpenTelemetry needed). */
  readonly onTaskEvent = z.custom<A2ATaskEventHook>((v) => typeof v === 'function', { error: 'must be a function (info) => void' }).optional();
  /** The bindings served, both by default: JSON-RPC and HTTP+JSON. One turned off answers 404 and leaves the card. */
  readonly bindings = z
    .strictObject({ jsonRpc: z.boolean().default(true), rest: z.boolean().default(true) })
    .refine((b) => b.jsonRpc || b.rest, { error: 'turns off both bindings: keep jsonRpc or rest on' })
    .default({ jsonRpc: true, rest: true });
  /**
   * A2A v0.3 compatibility, on by default: a request without `A2A-Version` (or `0.3`) gets v0.3 (REST under
   * `<mount>/v1/`). `{ v0_3: false }`: VersionNotSupported (-32009) instead, and a v1.0-only card.
   */
  readonly compatibility = z.strictObject({ v0_3: z.boolean().default(true) }).default({ v0_3: true });
  /** Sign every served card (§8.4) with a private `key`; `kid` defaults to its JWK thumbprint, `alg` to the key's. */
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
  /** Push notifications (§3.1.7-3.1.10), stated in the card; `true` takes every default. Off by default (a card claiming it is refused). */
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
   * Retention, off by default: removes tasks finished over `finishedTaskTtlMs` ago, `batchSize` (100) every `intervalMs` (60 s).
   * The store must implement `removeFinished()` (ours do). See docs/stores.md, Retention.
   */
  readonly retention = z
    .strictObject({
      finishedTaskTtlMs: z.number().int().min(1_000),
      intervalMs: z.number().int().min(10).max(86_400_000).default(60_000),
      batchSize: z.number().int().min(1).max(10_000).default(100),
    })
    .optional();
}

/** An object type: a class type has no index signature. */
type RouterOptionsShape = { [K in keyof RouterOptionFields]: RouterOptionFields[K] };

export const RouterOptionsSchema: z.ZodObject<RouterOptionsShape, z.core.$strict> = z.strictObject(new RouterOptionFields());

/** createA2ARouter's options, as users write them (see each field's comment). */
export type A2ARouterOptions = z.input<typeof RouterOptionsSchema>;

/** The options once checked, defaults filled in. */
export type RouterSettings = z.output<typeof RouterOptionsSchema>;
