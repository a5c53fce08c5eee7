/**
 * What createA2ARouter's `metrics` and `onTaskEvent` options turn into: one guarded engine listener,
 * the measured store, and the live gauges. With neither option, nothing is wrapped or listened to.
 */
import type { Logger } from '../logger.js';
import type { StreamResponse, Task } from '../protocol/schemas.js';
import { combineEngineEvents, type EngineEvents } from '../engine/engine-events.js';
import type { TaskStore } from '../engine/seams/task-store.js';
import type { PushDeliveryObserver } from '../engine/push/push-dispatcher.js';
import { routerMetrics, type A2AMetricsOption, type LiveGauges } from './metrics.js';

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
 * Called synchronously after each commit, on the engine's path: keep it cheap (count, enqueue) and
 * do not mutate `event` or `task`. A throw is logged and ignored; the task goes on.
 */
export type A2ATaskEventHook = (info: A2ATaskEventInfo) => void;

interface RouterObservability {
  readonly events: EngineEvents | undefined;
  taskStore(store: TaskStore): TaskStore;
  observe(gauges: LiveGauges): void;
  /** Push delivery metrics (undefined with metrics off). */
  readonly push: PushDeliveryObserver | undefined;
}

export function routerObservability(
  options: { readonly metrics?: A2AMetricsOption; readonly onTaskEvent?: A2ATaskEventHook },
  logger: Logger,
): RouterObservability {
  const metrics = routerMetrics(options.metrics, logger);
  const listeners: EngineEvents[] = [];
  if (metrics) listeners.push(metrics.events);
  const hook = options.onTaskEvent;
  if (hook) listeners.push({ taskEvent: (info) => hook(info) });
  return {
    events: combineEngineEvents(listeners, logger),
    taskStore: (store) => (metrics ? metrics.instrumentStore(store) : store),
    observe: (gauges) => metrics?.observe(gauges),
    push: metrics?.push,
  };
}
