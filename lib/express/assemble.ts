/** The router's assembly from the checked options: card, store, push, observability, engine. No HTTP here. */
import type { Logger } from '../options.js';
import { optionsError } from '../options.js';
import type { AgentCard } from '../protocol/schemas.js';
import { A2ARequestHandler } from '../engine/request-handler.js';
import { InMemoryTaskStore } from '../backends/memory/in-memory-task-store.js';
import { combineEngineEvents, type EngineEvents } from '../engine/engine-events.js';
import type { PushDeliveryObserver } from '../engine/push/push-dispatcher-deps.js';
import { createPushNotifications } from '../engine/push/push-options.js';
import { routerObservability } from '../observability/router-observability.js';
import { startRetention, type StopRetention } from '../engine/retention.js';
import type { TaskStore } from '../engine/seams/task-store.js';
import type { RouterSettings } from './options.js';

/** What the router serves with: the card, the engine, and push delivery when configured. */
export interface Assembly {
  readonly card: AgentCard;
  readonly handler: A2ARequestHandler;
  /** The task store as the engine uses it. */
  readonly taskStore: TaskStore;
  readonly push: ReturnType<typeof createPushNotifications> | undefined;
  readonly stopRetention: StopRetention;
  readonly operations: ReturnType<typeof routerObservability>['operations'];
  /** router.openTaskPublisher's span, with traces on (else `open()` itself). */
  readonly openPublisher: ReturnType<typeof routerObservability>['openPublisher'];
}

/** A parsed copy of the card, stating push support exactly when push is configured. */
function servedCard(settings: RouterSettings): AgentCard {
  const card: AgentCard = { ...settings.agentCard, supportedInterfaces: settings.agentCard.supportedInterfaces ?? [] };
  if (settings.pushNotifications) card.capabilities = { ...card.capabilities, pushNotifications: true };
  else if (card.capabilities.pushNotifications === true) {
    throw optionsError(
      'createA2ARouter',
      'agentCard.capabilities.pushNotifications',
      'is true, but push notifications are not configured: set the pushNotifications option (the card then states it by itself)',
    );
  }
  return card;
}

/** What the inspector, when on, listens to: engine events, delivery attempts, and its own webhook receiver. */
export interface AssemblyTap {
  readonly events: EngineEvents;
  readonly push: PushDeliveryObserver;
  readonly exemptWebhook: (url: URL) => boolean;
}

export function assemble(settings: RouterSettings, logger: Logger, tap?: AssemblyTap): Assembly {
  const card = servedCard(settings);
  const observability = routerObservability(settings, logger);
  const taskStore = settings.taskStore ?? new InMemoryTaskStore();
  const stopRetention = retentionOf(settings, taskStore, logger);
  const push = settings.pushNotifications
    ? createPushNotifications(settings.pushNotifications, {
        taskStore,
        logger,
        observer: tap ? { ...observability.push, ...pushObserverBoth(observability.push, tap.push) } : observability.push,
        exemptWebhook: tap?.exemptWebhook,
      })
    : undefined;
  const handler = new A2ARequestHandler({
    agentCard: card,
    executor: settings.executor,
    taskStore,
    push: push?.service,
    bus: settings.eventBus,
    leases: settings.taskLeases,
    seamHooks: observability.seamHooks(taskStore),
    leaseWaitMs: settings.leaseWaitMs,
    events:
      push || tap
        ? combineEngineEvents(
            [observability.events, push?.service.events, tap?.events].filter((e) => e !== undefined),
            logger,
          )
        : observability.events,
    logger,
    cancelGracePeriodMs: settings.cancelGracePeriodMs,
    turnTimeoutMs: settings.turnTimeoutMs,
    storeTimeoutMs: settings.storeTimeoutMs,
    extendedAgentCard: settings.extendedAgentCard,
  });
  observability.observe(handler);
  return { card, handler, taskStore, push, stopRetention, operations: observability.operations, openPublisher: observability.openPublisher };
}

/** Both observers of delivery attempts (metrics or traces, and the inspector). */
function pushObserverBoth(first: PushDeliveryObserver | undefined, second: PushDeliveryObserver): PushDeliveryObserver {
  return {
    attempt: (info) => {
      first?.attempt?.(info);
      second.attempt?.(info);
    },
    gaveUp: (info) => {
      first?.gaveUp?.(info);
      second.gaveUp?.(info);
    },
  };
}

const NO_RETENTION: StopRetention = async () => {};

/** The retention sweeper on the store as given (unmeasured), when the option asks for one. */
function retentionOf(settings: RouterSettings, store: TaskStore, logger: Logger): StopRetention {
  const retention = settings.retention;
  if (!retention) return NO_RETENTION;
  if (typeof store.removeFinished !== 'function') {
    throw optionsError(
      'createA2ARouter',
      'retention',
      'the task store has no removeFinished(finishedBefore, limit): implement it (see the retention group of describeTaskStoreContract) or leave retention off',
    );
  }
  return startRetention({ store, ttlMs: retention.finishedTaskTtlMs, intervalMs: retention.intervalMs, batchSize: retention.batchSize, logger });
}
