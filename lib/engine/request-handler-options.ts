/** How an A2ARequestHandler is configured: agent, card, seams, time limits (createA2ARouter fills it from its options). */
import type { A2ACaller } from '../context/carrier.js';
import type { Logger } from '../options.js';
import type { AgentCard } from '../protocol/schemas.js';
import type { AgentCardInput } from '../protocol/card.js';
import type { Execution } from './execution/execution.js';
import type { AgentExecutor } from './executor.js';
import type { EngineEvents } from './engine-events.js';
import type { PushNotificationService } from './push/push-service.js';
import type { ExecutionRegistry } from './seams/execution-registry.js';
import type { TaskEventBus } from './seams/task-event-bus.js';
import type { TaskLeases } from './seams/task-leases.js';
import type { SeamHook } from './seams/intercept.js';
import type { TaskStore } from './seams/task-store.js';

export type ExtendedAgentCardProvider = AgentCardInput | ((caller: A2ACaller) => AgentCardInput | Promise<AgentCardInput>);

export interface RequestHandlerOptions {
  readonly agentCard: AgentCard;
  readonly executor: AgentExecutor;
  readonly taskStore: TaskStore;
  readonly logger: Logger;
  readonly cancelGracePeriodMs: number;
  /** A turn not ended after this long is failed; 0 or absent: no deadline. */
  readonly turnTimeoutMs?: number;
  readonly extendedAgentCard?: ExtendedAgentCardProvider;
  /** Where committed events are published and followed; in-process by default. */
  readonly bus?: TaskEventBus;
  /** Which tasks run in this process; a local map by default. */
  readonly registry?: ExecutionRegistry<Execution>;
  /** Per-task leases (several replicas on one store); none by default. */
  readonly leases?: TaskLeases;
  /** How long a follow-up waits for a lease held by another replica. Default 30000 ms. */
  readonly leaseWaitMs?: number;
  readonly events?: EngineEvents;
  /** Push notification configs and delivery; absent: the push methods answer PushNotificationNotSupported. */
  readonly push?: PushNotificationService;
  /** How long a request may wait for the seams in all before it answers unavailable. Default 5000 ms; 0: none. */
  readonly storeTimeoutMs?: number;
  /** More hooks on the seams' calls (the router's metrics and traces), inside the deadline's. */
  readonly seamHooks?: readonly SeamHook[];
}
