/**
 * The router's assembly: the card as served (its push capability kept to what is configured), the
 * task store behind its metrics, push delivery, observability and the engine (A2ARequestHandler),
 * from the checked options. Nothing here knows about HTTP.
 */
import type { Logger } from '../logger.js';
import { optionsError } from '../options.js';
import type { AgentCard } from '../protocol/schemas.js';
import { A2ARequestHandler } from '../engine/request-handler.js';
import { InMemoryTaskStore } from '../backends/memory/in-memory-task-store.js';
import { combineEngineEvents } from '../engine/engine-events.js';
import { createPushNotifications } from '../engine/push/push-options.js';
import { routerObservability } from '../observability/router-observability.js';
import type { RouterSettings } from './options.js';

/** What the router serves with: the card, the engine, and push delivery when configured. */
export interface Assembly {
  readonly card: AgentCard;
  readonly handler: A2ARequestHandler;
  readonly push: ReturnType<typeof createPushNotifications> | undefined;
}

/** The card the router serves: a parsed copy that states push support exactly when push is configured. */
function servedCard(settings: RouterSettings): AgentCard {
  // Parsed copy of the card (validated, unknown fields dropped); the interface list may still be empty.
  const card: AgentCard = { ...settings.agentCard, supportedInterfaces: settings.agentCard.supportedInterfaces ?? [] };
  // A promise the server can keep: the card states push support exactly when push is configured.
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

export function assemble(settings: RouterSettings, logger: Logger): Assembly {
  const card = servedCard(settings);
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
  return { card, handler, push };
}
