/** a2a-express-kit: serve an A2A v1.0 agent from the Express app you already run. */
export { createA2ARouter } from './express/router.js';
export type { A2ARouter, A2ARouterOptions, A2AHandler } from './express/router.js';
export type { AgentCardInput } from './protocol/card.js';
export { defineAgentCard, type AgentCardDefinition, type AgentSkillDefinition } from './protocol/define-card.js';
export type { CallContextHook } from './http/serve.js';
export type { CallerResolution } from './http/call.js';
export { ANONYMOUS_CALLER } from './http/call.js';

export type { AgentExecutor, ExecutionContext, CancelContext, ResumeContext, ResumeReason } from './engine/executor.js';
export { TaskEvents } from './engine/task-events.js';
export type { ArtifactInput, MessageContent, HandOff } from './engine/task-events.js';
export type { TaskPublisher } from './engine/task-publisher.js';
export { InvalidAgentEventError } from './engine/task-events.js';
export { A2ARequestHandler } from './engine/request-handler.js';
export type { CallContext, ExtendedAgentCardProvider } from './engine/request-handler.js';
export { InMemoryTaskStore } from './backends/memory/in-memory-task-store.js';
export {
  InvalidPageTokenError,
  TaskExistsError,
  TaskNotFoundInStoreError,
  TaskStoreError,
  TaskVersionConflictError,
} from './engine/seams/task-store.js';
export type { TaskStore, TaskScope, ListTasksQuery, TaskPage, TaskChange, VersionedTask } from './engine/seams/task-store.js';
export { reduceTask } from './engine/task-reducer.js';
export { startRetention } from './engine/retention.js';
export type { RetentionOptions, StopRetention } from './engine/retention.js';
export type { TaskEvent, Reduction, ReduceContext } from './engine/task-reducer.js';
export { InProcessTaskEventBus } from './engine/seams/task-event-bus.js';
export type { TaskEventBus, CommittedEvent, CommittedEventListener } from './engine/seams/task-event-bus.js';
export { TERMINAL_STATES, INTERRUPTED_STATES, isTerminal, isInterrupted } from './engine/task-state.js';

export { A2A_METRICS } from './observability/metrics.js';
export type { A2AMetricsOption } from './observability/metrics.js';
export { A2A_SPANS, A2A_SPAN_ATTRIBUTES, A2A_SPAN_EVENTS } from './observability/span-names.js';
export type { A2ATracesOption } from './observability/tracing.js';
export type { OpenTelemetryTraceApiLike, TracerLike, SpanLike, SpanContextLike, ContextLike } from './observability/trace-api.js';
export { instrumentTaskStore, taskStoreErrorKind } from './observability/task-store-metrics.js';
export type { TaskStoreErrorKind } from './observability/task-store-metrics.js';
export type { MeterLike } from './observability/meter.js';
export type { A2ATaskEventHook, A2ATaskEventInfo } from './observability/router-observability.js';

export { getA2ARequestContext, tryGetA2ARequestContext } from './context/carrier.js';
export type { A2ACaller, A2ARequestContext, A2ATraceContext } from './context/carrier.js';
export { contributeA2AState, readA2AState } from './context/request-state.js';
export type { A2ARequestState } from './context/request-state.js';

export type { CardSigningOptions, CardSigningAlgorithm, CardSigningKey } from './express/card-signer.js';
export { canonicalCardPayload } from './protocol/card-canonical.js';

export { A2AError, ERROR_TABLE } from './errors.js';
export type { A2AErrorName, A2AErrorSpec, FieldViolation } from './errors.js';
export { A2AOptionsError } from './options.js';
export type { Logger } from './options.js';
export { silentLogger } from './options.js';

export * from './middleware/index.js';

export * from './protocol/schemas.js';
export * from './protocol/requests.js';

// Push notifications: the option, and the seams a durable backend implements.
export type { A2APushNotificationsOptions } from './engine/push/push-options.js';
export { InMemoryPushConfigStore } from './backends/memory/in-memory-push-config-store.js';
export { PushConfigLimitError } from './engine/seams/push-config-store.js';
export type { PushConfigStore, StoredPushConfig, PushProtocol } from './engine/seams/push-config-store.js';
export { InMemoryPushOutbox } from './engine/seams/push-outbox.js';
export type { PushOutbox, PushDelivery } from './engine/seams/push-outbox.js';
export type { WebhookLookup, ResolvedAddress } from './engine/push/ssrf-guard.js';
