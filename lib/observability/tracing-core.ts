/**
 * What every span of one router shares: the OpenTelemetry API and tracer (once loaded), what this process knows of each task's trace, the store that
 * keeps a task's origin for other replicas, and the context key under which the kit's innermost span rides (store and lease events go on it).
 */
import type { Logger } from '../options.js';
import type { TaskScope, TaskStore } from '../engine/seams/task-store.js';
import { A2A_SPAN_ATTRIBUTES as ATTR } from './span-names.js';
import { TaskTraces, isValidSpanContext, spanContextOf, traceparentOf } from './task-traces.js';
import type { ContextLike, OpenTelemetryTraceApiLike, SpanContextLike, SpanLike, TraceApiSlot, TracerLike } from './trace-api.js';

/** The kit's innermost span in a context: where store and lease calls are recorded as events. */
const KIT_SPAN_KEY = Symbol.for('a2a-express-kit.span');

/**
 * One of the kit's spans as the context carries it: the store's updates made under it are counted here (one per committed event: too many, and too
 * hot, for an event each) and set on it at its end.
 */
export interface KitSpan {
  readonly span: SpanLike;
  storeUpdates: number;
}

/** Ends a kit span, with its count of store updates when it made any. */
export function endKitSpan(kit: KitSpan): void {
  if (kit.storeUpdates > 0) kit.span.setAttribute(ATTR.storeUpdates, kit.storeUpdates);
  kit.span.end();
}

/** The store methods that keep a task's origin beside it (optional: a store without them keeps none). */
type TraceContextStore = Pick<TaskStore, 'saveTraceContext' | 'loadTraceContext'>;

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

  /** `parent` with `kit`'s span active, as the kit's innermost span too. */
  enter(parent: ContextLike, kit: KitSpan): ContextLike {
    return this.api.trace.setSpan(parent, kit.span).setValue(KIT_SPAN_KEY, kit);
  }

  /** The kit's innermost span where the caller runs, if it is recording. */
  activeKitSpan(): KitSpan | undefined {
    if (!this.#slot.api) return undefined;
    const kit = this.#slot.api.context.active().getValue(KIT_SPAN_KEY) as KitSpan | undefined;
    return kit?.span.isRecording() ? kit : undefined;
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
