/** What the `metrics`, `traces` and `onTaskEvent` options turn into: one engine listener, seam hooks, push observer, operation spans, gauges; none of it when off. */
import type { Logger } from '../options.js';
import type { StreamResponse, Task } from '../protocol/schemas.js';
import { combineEngineEvents, type EngineEvents } from '../engine/engine-events.js';
import type { TaskScope, TaskStore } from '../engine/seams/task-store.js';
import type { PushDeliveryObserver } from '../engine/push/push-dispatcher-deps.js';
import type { SeamHook } from '../engine/seams/intercept.js';
import type { PushAttemptTracing } from '../engine/push/push-deliverer.js';
import { routerMetrics, type A2AMetricsOption, type LiveGauges } from './metrics.js';
import { routerTracing, type A2ATracesOption } from './tracing.js';
import type { OperationTracing } from './operation-span.js';

/** What `onTaskEvent` receives for every event committed to the store, in commit order per task. */
export interface A2ATaskEventInfo {
  readonly taskId: string;
  /** '' when the deployment is not multi-tenant. */
  readonly tenant: string;
  /** The event as streamed to clients (`task`, `statusUpdate`, `artifactUpdate`). */
  readonly event: StreamResponse;
  /** The task after the event. */
  readonly task: Task;
}

/**
 * Called synchronously after each commit, on the engine's path: keep it cheap (count, enqueue) and do not mutate `event` or `task`. A throw is logged
 * and ignored; the task goes on.
 */
export type A2ATaskEventHook = (info: A2ATaskEventInfo) => void;

interface RouterObservability {
  readonly events: EngineEvents | undefined;
  /** The hooks of the engine's seam calls (none with traces and metrics off); `store` as given keeps traces' origins. */
  seamHooks(store: TaskStore): SeamHook[];
  observe(gauges: LiveGauges): void;
  /** Push delivery metrics and spans (undefined with both off). */
  readonly push: (PushDeliveryObserver & PushAttemptTracing) | undefined;
  /** Operation spans (undefined with traces off). */
  readonly operations: OperationTracing | undefined;
  /** Runs `open` (router.openTaskPublisher) in a span linked to the task's first request, with traces on. */
  openPublisher<T>(scope: TaskScope, taskId: string, open: () => Promise<T>): Promise<T>;
}

export function routerObservability(
  options: { readonly metrics?: A2AMetricsOption; readonly traces?: A2ATracesOption; readonly onTaskEvent?: A2ATaskEventHook },
  logger: Logger,
): RouterObservability {
  const metrics = routerMetrics(options.metrics, logger);
  const tracing = routerTracing(options.traces, logger);
  const listeners: EngineEvents[] = [];
  if (metrics) listeners.push(metrics.events);
  if (tracing) listeners.push({ tracing: tracing.engine });
  const hook = options.onTaskEvent;
  if (hook) listeners.push({ taskEvent: (info) => hook(info) });
  return {
    events: combineEngineEvents(listeners, logger),
    seamHooks: (store) => [metrics?.seamHook, tracing?.seamHook(store)].filter((hook) => hook !== undefined),
    observe: (gauges) => metrics?.observe(gauges),
    push: metrics || tracing ? { ...metrics?.push, ...tracing?.push } : undefined,
    operations: tracing?.operations,
    openPublisher: (scope, taskId, open) => (tracing ? tracing.openPublisher(scope, taskId, open) : open()),
  };
}
