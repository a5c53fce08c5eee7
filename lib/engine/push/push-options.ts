/** The router's `pushNotifications` option: its zod schema (defaults in one place) and the factory of what it describes. */
import { z } from 'zod';
import { hasMethods } from '../../options.js';
import type { Logger } from '../../options.js';
import type { TaskStore } from '../seams/task-store.js';
import { InMemoryPushConfigStore } from '../../backends/memory/in-memory-push-config-store.js';
import type { PushConfigStore } from '../seams/push-config-store.js';
import { PushDispatcher } from './push-dispatcher.js';
import type { PushDeliveryObserver } from './push-dispatcher-deps.js';
import { InMemoryPushOutbox, type PushOutbox } from '../seams/push-outbox.js';
import { PushNotificationService } from './push-service.js';
import { parseAllowList, SsrfGuard, type WebhookLookup } from './ssrf-guard.js';

export interface A2APushNotificationsOptions {
  /** Webhook hosts exempt from the SSRF guard: names (`*.corp.example`), addresses or CIDR ranges (`10.1.0.0/16`). Default none. */
  readonly allow?: readonly string[];
  /** Whether webhooks on public addresses are accepted. Default true; false: only `allow` is. */
  readonly publicAddresses?: boolean;
  /** Configs a task may have at once. Default 10. */
  readonly maxConfigsPerTask?: number;
  /** Deadline of one webhook request. Default 10000 ms (§13.2 recommends 10-30 s). */
  readonly timeoutMs?: number;
  /** Attempts per event and config before the config is marked failing. Default 5. */
  readonly maxAttempts?: number;
  /** First retry delay; doubled per attempt, with jitter. Default 1000 ms. */
  readonly retryBaseMs?: number;
  /** Longest retry delay. Default 60000 ms. */
  readonly retryMaxMs?: number;
  /** Webhook requests in flight at once per origin (scheme, host, port). Default 4. */
  readonly maxInFlightPerHost?: number;
  /** Where configs live; in memory by default. */
  readonly configStore?: PushConfigStore;
  /** Where deliveries wait until done; in memory by default (a durable one survives a restart). */
  readonly outbox?: PushOutbox;
  /** Resolves webhook host names (node's dns.lookup by default). */
  readonly lookup?: WebhookLookup;
}

const ms = (min: number, max: number, fallback: number) => z.number().int().min(min).max(max).default(fallback);

const PushObjectSchema = z.strictObject({
  allow: z
    .array(z.string().min(1))
    .superRefine((entries, ctx) => {
      try {
        parseAllowList(entries);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
      }
    })
    .default([]),
  publicAddresses: z.boolean().default(true),
  maxConfigsPerTask: z.number().int().min(1).max(100).default(10),
  timeoutMs: ms(100, 120_000, 10_000),
  maxAttempts: z.number().int().min(1).max(20).default(5),
  retryBaseMs: ms(0, 3_600_000, 1_000),
  retryMaxMs: ms(0, 86_400_000, 60_000),
  maxInFlightPerHost: z.number().int().min(1).max(1_000).default(4),
  configStore: z
    .custom<PushConfigStore>(hasMethods('put', 'get', 'list', 'delete', 'deleteAll', 'setFailing'), {
      error: 'must implement put, get, list, delete, deleteAll and setFailing (PushConfigStore)',
    })
    .optional(),
  outbox: z
    .custom<PushOutbox>(hasMethods('add', 'recordAttempts', 'remove', 'pending'), {
      error: 'must implement add, recordAttempts, remove and pending (PushOutbox)',
    })
    .optional(),
  lookup: z
    .custom<WebhookLookup>((v) => typeof v === 'function', { error: 'must be a function (hostname) => Promise<{ address, family }[]>' })
    .optional(),
});

/** `true` for every default, the options object, or `false` (off, as when absent). */
export const PushNotificationsOptionSchema = z
  .union([z.boolean(), PushObjectSchema])
  .transform((value) => (value === false ? undefined : value === true ? PushObjectSchema.parse({}) : value));

type PushNotificationsSettings = z.output<typeof PushObjectSchema>;

interface PushNotifications {
  readonly service: PushNotificationService;
  readonly dispatcher: PushDispatcher;
  readonly configs: PushConfigStore;
}

/** Builds push from parsed settings; resumes what a durable outbox holds. */
export function createPushNotifications(
  settings: PushNotificationsSettings,
  deps: {
    readonly taskStore: TaskStore;
    readonly logger: Logger;
    readonly observer?: PushDeliveryObserver;
    readonly exemptWebhook?: (url: URL) => boolean;
  },
): PushNotifications {
  const configs = settings.configStore ?? new InMemoryPushConfigStore();
  const guard = new SsrfGuard({
    allow: settings.allow,
    lookup: settings.lookup,
    publicAddresses: settings.publicAddresses,
    exempt: deps.exemptWebhook,
  });
  const dispatcher = new PushDispatcher({
    configs,
    outbox: settings.outbox ?? new InMemoryPushOutbox(),
    guard,
    logger: deps.logger,
    observer: deps.observer,
    settings: {
      timeoutMs: settings.timeoutMs,
      maxAttempts: settings.maxAttempts,
      retryBaseMs: settings.retryBaseMs,
      retryMaxMs: Math.max(settings.retryMaxMs, settings.retryBaseMs),
      maxInFlightPerHost: settings.maxInFlightPerHost,
    },
  });
  if (settings.outbox) {
    dispatcher.resume().catch((error: unknown) => deps.logger.error({ err: error }, 'push notifications: could not resume the outbox'));
  }
  const service = new PushNotificationService({
    taskStore: deps.taskStore,
    configs,
    guard,
    dispatcher,
    logger: deps.logger,
    maxConfigsPerTask: settings.maxConfigsPerTask,
  });
  return { service, dispatcher, configs };
}
