/**
 * The part of `@opentelemetry/api`'s tracing the kit uses (so the package stays an optional peer), and how `traces: true` finds it: the module
 * itself, loaded when asked for, and its global tracer.
 */
import type { Logger } from '../options.js';

export type SpanAttributeValue = string | number | boolean;
export type SpanAttributesLike = Readonly<Record<string, SpanAttributeValue>>;

export interface SpanContextLike {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly isRemote?: boolean;
}

export interface SpanLinkLike {
  readonly context: SpanContextLike;
  readonly attributes?: SpanAttributesLike;
}

/** What the kit does with a span (a real `Span` fits). */
export interface SpanLike {
  spanContext(): SpanContextLike;
  setAttribute(key: string, value: SpanAttributeValue): unknown;
  addEvent(name: string, attributes?: SpanAttributesLike): unknown;
  /** @opentelemetry/api ≥ 1.9; a link found after the span started is dropped on older versions. */
  addLink?(link: SpanLinkLike): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  isRecording(): boolean;
  end(): void;
}

/** An OpenTelemetry `Context` (immutable: setValue returns a new one). */
export interface ContextLike {
  getValue(key: symbol): unknown;
  setValue(key: symbol, value: unknown): ContextLike;
}

export interface SpanOptionsLike {
  readonly kind?: number;
  readonly attributes?: SpanAttributesLike;
  readonly links?: SpanLinkLike[];
}

/** What the kit needs of an OpenTelemetry `Tracer`. */
export interface TracerLike {
  startSpan(name: string, options?: SpanOptionsLike, context?: ContextLike): SpanLike;
}

/** The part of the `@opentelemetry/api` module the kit calls. */
export interface OpenTelemetryTraceApiLike {
  readonly context: {
    active(): ContextLike;
    with<T>(context: ContextLike, fn: () => T): T;
  };
  readonly trace: {
    getTracer(name: string, version?: string): TracerLike;
    setSpan(context: ContextLike, span: SpanLike): ContextLike;
    getSpanContext(context: ContextLike): SpanContextLike | undefined;
    setSpanContext(context: ContextLike, spanContext: SpanContextLike): ContextLike;
  };
}

/** Instrumentation scope name of the kit's tracer (the same as its meter's). */
export const TRACER_NAME = 'a2a-express-kit';

export function isTraceApi(value: unknown): value is OpenTelemetryTraceApiLike {
  const api = value as Partial<OpenTelemetryTraceApiLike> | null;
  return (
    typeof api === 'object' &&
    api !== null &&
    typeof api.context?.active === 'function' &&
    typeof api.context?.with === 'function' &&
    typeof api.trace?.getTracer === 'function' &&
    typeof api.trace?.setSpan === 'function' &&
    typeof api.trace?.getSpanContext === 'function' &&
    typeof api.trace?.setSpanContext === 'function'
  );
}

export function isTracerLike(value: unknown): value is TracerLike {
  return typeof (value as Partial<TracerLike> | null)?.startSpan === 'function';
}

/** The API module and the tracer, once known; `ready` settles when they are (or are known to be missing). */
export interface TraceApiSlot {
  api: OpenTelemetryTraceApiLike | undefined;
  tracer: TracerLike | undefined;
  readonly ready: Promise<void>;
}

/**
 * `@opentelemetry/api` loaded asynchronously (`traces: true`): spans start once it is, from the global TracerProvider (register the SDK's provider
 * before the first request). A non-literal specifier keeps bundlers from requiring the optional peer.
 */
export function globalTraceApi(logger: Logger): TraceApiSlot {
  const specifier = '@opentelemetry/api';
  const slot: { api: OpenTelemetryTraceApiLike | undefined; tracer: TracerLike | undefined; ready: Promise<void> } = {
    api: undefined,
    tracer: undefined,
    ready: Promise.resolve(),
  };
  slot.ready = import(specifier).then(
    (module: unknown) => {
      const api = isTraceApi(module) ? module : (module as { default?: unknown } | null)?.default;
      if (isTraceApi(api)) {
        slot.tracer = api.trace.getTracer(TRACER_NAME);
        slot.api = api;
      } else logger.warn('traces: true, but @opentelemetry/api has no usable tracing API (>= 1.4 needed); no spans are recorded');
    },
    () => {
      logger.warn('traces: true, but @opentelemetry/api is not installed; no spans are recorded (npm install @opentelemetry/api)');
    },
  );
  return slot;
}
