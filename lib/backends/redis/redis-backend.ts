/**
 * createRedisBackend(): the three Redis seams on one client, ready to spread into createA2ARouter: `createA2ARouter({ agentCard, executor,
 * ...backend.options })`. Connects a client from `url`, or uses the application's own `client` (left open on close()).
 */
import { z } from 'zod';
import { consoleLogger, type Logger, A2AOptionsError, markUnawaitedSpread, optionsError, parseOptions } from '../../options.js';
import { type RedisClient, clientSchema, keyPrefixSchema, loggerSchema, millisecondsSchema } from './redis-client.js';
import { RedisTaskEventBus } from './redis-event-bus.js';
import { RedisPushConfigStore } from './redis-push-config-store.js';
import { RedisPushOutbox } from './redis-push-outbox.js';
import { withCommandDeadline } from './redis-deadline.js';
import { RedisTaskLeases } from './redis-task-leases.js';
import { RedisTaskStore } from './redis-task-store.js';

export interface RedisBackendOptions {
  /** `redis://[[user]:password@]host[:port][/db]` or `rediss://…` (TLS): a client is connected and owned by the backend. */
  readonly url?: string;
  /** Your own node-redis client instead of `url` (connected here if it is not yet); close() leaves it open. */
  readonly client?: RedisClient;
  /** Put before every key and channel; replicas of one agent share it. Default 'a2a:'. */
  readonly keyPrefix?: string;
  /** Task lease time to live: how soon a dead replica's tasks are settled. Default 10000. */
  readonly leaseTtlMs?: number;
  /** How long a task's events stay resumable (SSE Last-Event-ID) after its last one. Default 3600000. */
  readonly streamRetentionMs?: number;
  /** About how many of a task's latest events stay resumable. Default 200. */
  readonly streamMaxLength?: number;
  /** How long connecting may take before createRedisBackend() rejects. Default 10000. */
  readonly connectTimeoutMs?: number;
  /**
   * How long any one Redis command may go unanswered before the call behind it fails (a request then gets 503 UNAVAILABLE). Applies to a `client` of
   * yours too, in the backend's own calls. Default 2000.
   */
  readonly commandTimeoutMs?: number;
  /**
   * With `url`: how many commands may wait (unsent or unanswered) before new ones fail at once ("The queue is full"); commands also fail at once
   * while the client is reconnecting. For your own `client`, set node-redis's `commandsQueueMaxLength` / `disableOfflineQueue` yourself. Default
   * 10000.
   */
  readonly maxQueuedCommands?: number;
  /** Connection trouble and lease renewals are reported here. Default: the console. */
  readonly logger?: Logger;
}

export interface RedisBackend {
  /** Spread into createA2ARouter({ ... }). */
  readonly options: {
    readonly taskStore: RedisTaskStore;
    readonly eventBus: RedisTaskEventBus;
    readonly taskLeases: RedisTaskLeases;
  };
  readonly taskStore: RedisTaskStore;
  readonly eventBus: RedisTaskEventBus;
  readonly taskLeases: RedisTaskLeases;
  /**
   * Durable push notifications on the same Redis, for `pushNotifications: { ...backend.push, allow }`: configs and delivery cursors in Redis, events
   * from the task streams; a replica that dies before delivering has its deliveries taken over by another after `leaseTtlMs`.
   */
  readonly push: { readonly configStore: RedisPushConfigStore; readonly outbox: RedisPushOutbox };
  /** Closes the subscriber connections, stops lease renewals, and closes the client when it was made from `url`. Call it after router.close(). */
  close(): Promise<void>;
}

const FACTORY = 'createRedisBackend';

const schema = z.strictObject({
  url: z
    .string()
    .regex(/^rediss?:\/\//i, { error: 'must be a redis:// or rediss:// URL' })
    .optional(),
  client: clientSchema.optional(),
  keyPrefix: keyPrefixSchema,
  leaseTtlMs: millisecondsSchema(30).optional(),
  streamRetentionMs: millisecondsSchema(1000).optional(),
  streamMaxLength: z.number().int().min(1).max(1_000_000).optional(),
  connectTimeoutMs: millisecondsSchema(1).default(10_000),
  commandTimeoutMs: millisecondsSchema(1).default(2000),
  maxQueuedCommands: z.number().int().min(1).max(10_000_000).default(10_000),
  logger: loggerSchema.default(consoleLogger),
});

export function createRedisBackend(options: RedisBackendOptions): Promise<RedisBackend> {
  // `{ ...createRedisBackend(opts) }` without await spreads nothing: the mark lets the router say so.
  return markUnawaitedSpread(openRedisBackend(options), FACTORY, '.options');
}

async function openRedisBackend(options: RedisBackendOptions): Promise<RedisBackend> {
  const parsed = parseOptions(FACTORY, schema, options);
  const { url, keyPrefix, logger, connectTimeoutMs } = parsed;
  if ((url === undefined) === (parsed.client === undefined)) {
    throw optionsError(FACTORY, url === undefined ? 'url' : 'client', 'pass either url or client (exactly one)');
  }
  const owned = parsed.client === undefined;
  const ownClient = parsed.client ?? (await clientFromUrl(url!, parsed.maxQueuedCommands, logger));
  if (!ownClient.isOpen) await connectWithin(ownClient, connectTimeoutMs, url);
  // Every seam (and its subscriber connections) talks through the deadline; close() uses the client itself.
  const client = withCommandDeadline(ownClient, parsed.commandTimeoutMs);

  const eventBus = new RedisTaskEventBus({
    client,
    keyPrefix,
    logger,
    ...(parsed.streamRetentionMs === undefined ? {} : { streamRetentionMs: parsed.streamRetentionMs }),
    ...(parsed.streamMaxLength === undefined ? {} : { streamMaxLength: parsed.streamMaxLength }),
  });
  // Linked: each store write appends its event to the bus's stream in its own script (see RedisTaskStoreOptions.eventBus).
  const taskStore = new RedisTaskStore({ client, keyPrefix, eventBus });
  const taskLeases = new RedisTaskLeases({
    client,
    keyPrefix,
    logger,
    ...(parsed.leaseTtlMs === undefined ? {} : { leaseTtlMs: parsed.leaseTtlMs }),
  });
  // Nothing runs until the router's push dispatcher starts the outbox (push enabled).
  const configStore = new RedisPushConfigStore({ client, keyPrefix });
  const outbox = new RedisPushOutbox({
    client,
    configStore,
    taskStore,
    keyPrefix,
    logger,
    ...(parsed.leaseTtlMs === undefined ? {} : { claimTtlMs: parsed.leaseTtlMs }),
  });
  let closing: Promise<void> | undefined;
  return {
    options: { taskStore, eventBus, taskLeases },
    taskStore,
    eventBus,
    taskLeases,
    push: { configStore, outbox },
    close: () =>
      (closing ??= (async () => {
        await Promise.allSettled([eventBus.close(), taskLeases.close()]);
        if (owned && ownClient.isOpen) await ownClient.close();
      })()),
  };
}

async function clientFromUrl(url: string, maxQueuedCommands: number, logger: Logger): Promise<RedisClient> {
  let redis: typeof import('redis');
  try {
    redis = await import('redis');
  } catch {
    throw new A2AOptionsError(`${FACTORY}: the "redis" package is not installed (npm install redis)`);
  }
  // Bounded, and no offline queue: during an outage commands fail fast instead of piling up.
  const client: RedisClient = redis.createClient({ url, commandsQueueMaxLength: maxQueuedCommands, disableOfflineQueue: true });
  // node-redis reconnects by itself; an unhandled 'error' event would end the process.
  client.on('error', (error) => logger.warn({ err: error }, 'Redis connection error'));
  return client;
}

/** connect(), given up after `timeoutMs` (node-redis would otherwise retry forever). */
async function connectWithin(client: RedisClient, timeoutMs: number, url: string | undefined): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${FACTORY}: could not connect to ${redacted(url)} within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([client.connect(), timeout]);
  } catch (error) {
    if (client.isOpen) client.destroy();
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** The URL without its password, for messages. */
function redacted(url: string | undefined): string {
  if (url === undefined) return 'Redis';
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'Redis';
  }
}
