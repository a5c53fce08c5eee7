/** The router's `traces` option: OpenTelemetry spans for operations, turns, cancels and webhooks; off by default, and then nothing is wrapped or started. */
import type { Logger } from '../options.js';
import type { EngineTracing } from '../engine/engine-events.js';
import type { TaskScope, TaskStore } from '../engine/seams/task-store.js';
import type { SeamHook } from '../engine/seams/intercept.js';
import type { PushAttemptTracing } from '../engine/push/push-deliverer.js';
import { engineSpans, publisherSpan } from './engine-spans.js';
import { operationTracing, type OperationTracing } from './operation-span.js';
import { pushSpans } from './push-spans.js';
import {
  globalTraceApi,
  isTraceApi,
  isTracerLike,
  TRACER_NAME,
  type OpenTelemetryTraceApiLike,
  type TraceApiSlot,
  type TracerLike,
} from './trace-api.js';
import { tracingHook } from './traced-seams.js';
import { TracingCore } from './tracing-core.js';

/**
 * `createA2ARouter({ traces })`: `true` loads `@opentelemetry/api` (if installed) and uses the
 * global TracerProvider; `{ api }` uses that module (an ESM app: `import * as api from
 * '@opentelemetry/api'`), with `tracer` when given, else the global provider's; `false` or absent
 * traces nothing and costs nothing.
 */
export type A2ATracesOption = boolean | { readonly api: OpenTelemetryTraceApiLike; readonly tracer?: TracerLike };

/** What createA2ARouter wires when traces are on. */
interface RouterTracing {
  readonly engine: EngineTracing;
  readonly operations: OperationTracing;
  readonly push: PushAttemptTracing;
  /** The hook recording store and lease calls; tasks' origins are kept in `store` (when it can keep them). */
  seamHook(store: TaskStore): SeamHook;
  /** router.openTaskPublisher() in a span linked to the request that started the task. */
  openPublisher<T>(scope: TaskScope, taskId: string, open: () => Promise<T>): Promise<T>;
  /** Settles once the API is known (at once for `{ api }`). */
  readonly ready: Promise<void>;
}

/** The tracing of one router, or undefined when it is off. */
export function routerTracing(option: A2ATracesOption | undefined, logger: Logger): RouterTracing | undefined {
  if (option === undefined || option === false) return undefined;
  const slot: TraceApiSlot =
    option === true
      ? globalTraceApi(logger)
      : { api: option.api, tracer: option.tracer ?? option.api.trace.getTracer(TRACER_NAME), ready: Promise.resolve() };
  const core = new TracingCore(slot, logger);
  return {
    engine: engineSpans(core),
    operations: operationTracing(core),
    push: pushSpans(core),
    seamHook(store) {
      core.store = store;
      return tracingHook(core);
    },
    openPublisher: (scope, taskId, open) => publisherSpan(core, scope, taskId, open),
    ready: slot.ready,
  };
}

/** zod-friendly check of the `traces` option. */
export function isTracesOption(value: unknown): value is A2ATracesOption {
  if (typeof value === 'boolean') return true;
  if (typeof value !== 'object' || value === null) return false;
  const { api, tracer } = value as { api?: unknown; tracer?: unknown };
  return isTraceApi(api) && (tracer === undefined || isTracerLike(tracer));
}
