/** An OpenTelemetry SDK meter whose metrics a test reads on demand (in-memory, cumulative). */
import type { Attributes } from '@opentelemetry/api';
import { DataPointType, MeterProvider, MetricReader, type MetricData } from '@opentelemetry/sdk-metrics';
import type { MeterLike } from '../../lib';

class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

export interface Point {
  readonly attributes: Attributes;
  /** Sum for counters, last value for observed counters, count for histograms. */
  readonly value: number;
  /** Histograms only. */
  readonly sum?: number;
}

export interface Collected {
  /** The metric of that name, or undefined when nothing was recorded on it. */
  metric(name: string): MetricData | undefined;
  /** Every data point of `name`. */
  points(name: string): Point[];
  /** The value of the point of `name` whose attributes include `attributes` (0 when none). */
  value(name: string, attributes?: Attributes): number;
}

export interface TestMeter {
  readonly meter: MeterLike;
  readonly provider: MeterProvider;
  collect(): Promise<Collected>;
}

export function testMeter(): TestMeter {
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  // A real Meter satisfies the kit's structural MeterLike (checked by the compiler here).
  const meter: MeterLike = provider.getMeter('a2a-express-kit-test');
  return {
    meter,
    provider,
    async collect() {
      const { resourceMetrics, errors } = await reader.collect();
      if (errors.length > 0) throw errors[0];
      const metrics = resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics);
      const metric = (name: string) => metrics.find((m) => m.descriptor.name === name);
      const points = (name: string): Point[] => {
        const found = metric(name);
        if (!found) return [];
        if (found.dataPointType === DataPointType.HISTOGRAM) {
          return found.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value.count, sum: p.value.sum }));
        }
        return (found.dataPoints as { attributes: Attributes; value: number }[]).map((p) => ({ attributes: p.attributes, value: p.value }));
      };
      const matches = (actual: Attributes, wanted: Attributes) => Object.entries(wanted).every(([k, v]) => actual[k] === v);
      return {
        metric,
        points,
        value: (name, attributes = {}) =>
          points(name)
            .filter((p) => matches(p.attributes, attributes))
            .reduce((n, p) => n + p.value, 0),
      };
    },
  };
}
