/**
 * The part of an OpenTelemetry `Meter` the kit uses, and how `metrics: true` finds one: the global MeterProvider of `@opentelemetry/api`, an optional
 * peer loaded only when asked for.
 */
import type { Logger } from '../options.js';

export type MetricAttributesLike = Readonly<Record<string, string | number | boolean>>;

export interface InstrumentOptionsLike {
  readonly description?: string;
  readonly unit?: string;
  /** Bucket boundaries a histogram should use (@opentelemetry/api ≥ 1.7; older versions ignore it). */
  readonly advice?: { readonly explicitBucketBoundaries?: number[] };
}

export interface CounterLike {
  add(value: number, attributes?: MetricAttributesLike): void;
}

export interface HistogramLike {
  record(value: number, attributes?: MetricAttributesLike): void;
}

interface ObservableResultLike {
  observe(value: number, attributes?: MetricAttributesLike): void;
}

export interface ObservableLike {
  addCallback(callback: (result: ObservableResultLike) => void): void;
}

/** What the kit needs of an OpenTelemetry `Meter` (a real one from `@opentelemetry/api` fits). */
export interface MeterLike {
  createCounter(name: string, options?: InstrumentOptionsLike): CounterLike;
  createHistogram(name: string, options?: InstrumentOptionsLike): HistogramLike;
  createObservableUpDownCounter(name: string, options?: InstrumentOptionsLike): ObservableLike;
}

/** Instrumentation scope name of the kit's meter. */
const METER_NAME = 'a2a-express-kit';

export function isMeterLike(value: unknown): value is MeterLike {
  const meter = value as Partial<MeterLike> | null;
  return (
    typeof meter === 'object' &&
    meter !== null &&
    typeof meter.createCounter === 'function' &&
    typeof meter.createHistogram === 'function' &&
    typeof meter.createObservableUpDownCounter === 'function'
  );
}

/** A meter that may arrive after start-up: `metrics: true` loads `@opentelemetry/api` asynchronously. */
export interface MeterSlot {
  meter: MeterLike | undefined;
  /** Settles once the meter is known (or known to be missing). */
  readonly ready: Promise<void>;
}

interface MetricsApiLike {
  readonly metrics: { getMeter(name: string): unknown };
}

const isMetricsApi = (value: unknown): value is MetricsApiLike => typeof (value as Partial<MetricsApiLike> | null)?.metrics?.getMeter === 'function';

/**
 * The kit's meter from the global MeterProvider of `@opentelemetry/api`, if installed. Register the SDK's provider before creating the router: the
 * API hands out no-op meters until one is. A non-literal specifier keeps bundlers from requiring the optional peer.
 */
export function globalMeter(logger: Logger): MeterSlot {
  const specifier = '@opentelemetry/api';
  const slot: { meter: MeterLike | undefined; ready: Promise<void> } = { meter: undefined, ready: Promise.resolve() };
  slot.ready = import(specifier).then(
    (module: unknown) => {
      const api = isMetricsApi(module) ? module : (module as { default?: unknown } | null)?.default;
      const meter = isMetricsApi(api) ? api.metrics.getMeter(METER_NAME) : undefined;
      if (isMeterLike(meter)) slot.meter = meter;
      else logger.warn('metrics: true, but @opentelemetry/api has no usable metrics API (>= 1.4 needed); no metrics are recorded');
    },
    () => {
      logger.warn('metrics: true, but @opentelemetry/api is not installed; no metrics are recorded (npm install @opentelemetry/api)');
    },
  );
  return slot;
}
