// The members of prom-client (not a dependency of the kit) that the docs' recipe uses, as prom-client 15 types them.
export interface LabelValues {
  [label: string]: string | number;
}
export class Counter {
  constructor(configuration: { name: string; help: string; labelNames?: readonly string[] });
  inc(labels?: LabelValues, value?: number): void;
}
export class Gauge {
  constructor(configuration: { name: string; help: string; labelNames?: readonly string[]; collect?: (this: Gauge) => void | Promise<void> });
  set(value: number): void;
}
export interface Registry {
  readonly contentType: string;
  metrics(): Promise<string>;
}
export const register: Registry;
export function collectDefaultMetrics(): void;
declare const client: { Counter: typeof Counter; Gauge: typeof Gauge; register: Registry; collectDefaultMetrics: typeof collectDefaultMetrics };
export default client;
