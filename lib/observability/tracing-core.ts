/**
 * What every span of one router shares: the OpenTelemetry API and tracer (once loaded), what this
 * process knows of each task's trace, the store that keeps a task's origin for other replicas, and
 * the context key under which the kit's innermost span rides (store and lease events go on it).
 */
import type { Logger } from '../logger.js';
import type { TaskScope, TaskStore } from '../engine/seams/task-store.js';
import { A2A_SPAN_ATTRIBUTES as ATTR } from './span-names.js';
import { TaskTraces, isValidSpanContext, spanContextOf, traceparentOf } from './task-traces.js';
import type { ContextLike, OpenTelemetryTraceApiLike, SpanContextLike, SpanLike, TraceApiSlot, TracerLike } from './trace-api.js';

/** The kit's innermost span in a context: where store and lease calls are recorded as events. */
export const KIT_SPAN_KEY = Symbol.for('a2a-express-kit.span');

/** The store methods that keep a task's origin beside it (optional: a store without them keeps none). */
export type TraceContextStore = Pick<TaskStore, 'saveTraceContext' | 'loadTraceContext'>;

export class TracingCore {
  readonly traces = new TaskTraces();
  readonly #slot: TraceApiSlot;
  readonly logger: Logger;
  /** The router's store as given (its trace methods are called directly, outside the engine's deadlines). */
  store: TraceContextStore | undefined;

  constructor(slot: TraceApiSlot, logger: Logger) {
    this.#slot = slot;
    this.logger = logger;
  }

  /** Undefined until `@opentelemetry/api` is loaded (`traces: true`): nothing is traced before. */
  get tracer(): TracerLike | undefined {
    return this.#slot.tracer;
  }

  get api(): OpenTelemetryTraceApiLike {
    return this.#slot.api!;
  }

  /** `parent` with `span` active, as the kit's innermost span too. */
  enter(parent: ContextLike, span: SpanLike): ContextLike {
    return this.api.trace.setSpan(parent, span).setValue(KIT_SPAN_KEY, span);
  }

  /** The kit's innermost span where the caller runs, if it is recording. */
  activeKitSpan(): SpanLike | undefined {
    if (!this.#slot.api) return undefined;
    const span = this.#slot.api.context.active().getValue(KIT_SPAN_KEY) as SpanLike | undefined;
    return span?.isRecording() ? span : undefined;
  }

  /** Links `span` to `target` (of another request, so a link rather than a parent), when valid. */
  linkTo(span: SpanLike, target: SpanContextLike | undefined, role: string): void {
    if (!isValidSpanContext(target) || target.spanId === span.spanContext().spanId) return;
    span.addLink?.({ context: target, attributes: { [ATTR.linkRole]: role } });
  }

  /** Keeps `origin` as the task's, here and (when the store can) beside the task for other replicas. */
  saveOrigin(scope: TaskScope, taskId: string, origin: SpanContextLike): Promise<void> | undefined {
    this.traces.entry(taskId).origin = origin;
    const save = this.store?.saveTraceContext;
    if (!save) return undefined;
    return save.call(this.store, scope, taskId, traceparentOf(origin)).catch((error: unknown) => {
      this.logger.debug({ err: error, taskId }, 'the task store did not keep the trace context of a task; other replicas will not link to it');
    });
  }

  /** The task's origin: known here, else read from the store (then `found` is called with it, if any). */
  findOrigin(scope: TaskScope, taskId: string, found: (origin: SpanContextLike) => void): void {
    const known = this.traces.get(taskId)?.origin;
    if (known) return found(known);
    const load = this.store?.loadTraceContext;
    if (!load) return;
    load.call(this.store, scope, taskId).then(
      (traceparent) => {
        const origin = spanContextOf(traceparent);
        if (!origin) return;
        this.traces.entry(taskId).origin = origin;
        found(origin);
      },
      (error: unknown) => this.logger.debug({ err: error, taskId }, 'the task store could not read the trace context of a task'),
    );
  }
}
