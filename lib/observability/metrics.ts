/** The kit's OpenTelemetry metrics, each defined once (name, unit, attributes, per the semantic conventions), fed by engine events, live gauges and the store hook. */
import type { Logger } from '../options.js';
import type { EngineEvents } from '../engine/engine-events.js';
import {
  globalMeter,
  isMeterLike,
  type CounterLike,
  type HistogramLike,
  type MeterLike,
  type MeterSlot,
  type MetricAttributesLike,
} from './meter.js';
import { storeInstruments, storeMetricsHook, type StoreInstruments } from './task-store-metrics.js';
import type { SeamHook } from '../engine/seams/intercept.js';
import type { PushDeliveryObserver } from '../engine/push/push-dispatcher-deps.js';
import { PUSH_METRICS, pushInstruments, pushMetricsObserver, type PushInstruments } from './push-metrics.js';

/**
 * `createA2ARouter({ metrics })`: `true` records through the global MeterProvider of `@opentelemetry/api` (loaded if installed); `{ meter }` through
 * that meter (an ESM app, or a provider of its own); `false` or absent records nothing and costs nothing.
 */
export type A2AMetricsOption = boolean | { readonly meter: MeterLike };

/** Metric names, for dashboards and tests. */
export const A2A_METRICS = {
  /** Counter, `{task}`: tasks that reached a terminal state; attribute `a2a.task.state`. */
  tasksFinished: 'a2a.tasks.finished',
  /** Histogram, `s`: from execute() being called to the turn's end; attribute `a2a.turn.outcome`. */
  turnDuration: 'a2a.turn.duration',
  /** Counter, `{cancel}`: CancelTask answers; attribute `a2a.cancel.outcome`. */
  cancelsAnswered: 'a2a.cancels.answered',
  /** UpDownCounter (observed), `{execution}`: tasks with a live execution in this process. */
  executionsActive: 'a2a.executions.active',
  /** UpDownCounter (observed), `{observer}`: blocking sends, SSE streams and task subscriptions attached. */
  observersActive: 'a2a.observers.active',
  /** Histogram, `s`: task store calls; attributes `a2a.store.operation`, and `error.type` when one failed. */
  storeDuration: 'a2a.store.operation.duration',
  /** Counter, `{error}`: failed task store calls; attributes `a2a.store.operation`, `error.type`. */
  storeErrors: 'a2a.store.errors',
  /** Counter, `{attempt}`: push webhook requests; attribute `a2a.push.outcome`. */
  pushAttempts: PUSH_METRICS.attempts,
  /** Histogram, `s`: one push attempt; attribute `a2a.push.outcome`. */
  pushAttemptDuration: PUSH_METRICS.attemptDuration,
  /** Counter, `{delivery}`: push deliveries given up (config marked failing). */
  pushFailures: PUSH_METRICS.failures,
} as const;

// Turns wait on agents (often a model): from milliseconds to minutes.
const TURN_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** The counts the router can report at collection time. */
export interface LiveGauges {
  readonly liveExecutions: number;
  readonly liveObservers: number;
}

/** `TASK_STATE_INPUT_REQUIRED` → `input_required`: the usual shape of a metric attribute value. */
function shortState(state: string): string {
  return state.startsWith('TASK_STATE_') ? state.slice('TASK_STATE_'.length).toLowerCase() : state.toLowerCase();
}

/** One frozen attributes object per value, so recording allocates nothing. */
function attributeCache(key: string, format: (value: string) => string): (value: string) => MetricAttributesLike {
  const cache = new Map<string, MetricAttributesLike>();
  return (value) => {
    let attributes = cache.get(value);
    if (!attributes) cache.set(value, (attributes = Object.freeze({ [key]: format(value) })));
    return attributes;
  };
}

interface EngineInstruments {
  readonly tasksFinished: CounterLike;
  readonly turnDuration: HistogramLike;
  readonly cancelsAnswered: CounterLike;
  readonly meter: MeterLike;
}

function engineInstruments(meter: MeterLike): EngineInstruments {
  return {
    meter,
    tasksFinished: meter.createCounter(A2A_METRICS.tasksFinished, {
      description: 'Tasks that reached a terminal state',
      unit: '{task}',
    }),
    turnDuration: meter.createHistogram(A2A_METRICS.turnDuration, {
      description: 'Duration of a turn: from execute() being called to a reply, an interrupted or terminal state, or an error',
      unit: 's',
      advice: { explicitBucketBoundaries: TURN_BUCKETS },
    }),
    cancelsAnswered: meter.createCounter(A2A_METRICS.cancelsAnswered, {
      description: 'CancelTask requests answered, by outcome',
      unit: '{cancel}',
    }),
  };
}

function observeGauges(meter: MeterLike, gauges: LiveGauges): void {
  meter
    .createObservableUpDownCounter(A2A_METRICS.executionsActive, {
      description: 'Tasks with a live execution in this process',
      unit: '{execution}',
    })
    .addCallback((result) => result.observe(gauges.liveExecutions));
  meter
    .createObservableUpDownCounter(A2A_METRICS.observersActive, {
      description: 'Blocking sends, SSE streams and task subscriptions attached to tasks',
      unit: '{observer}',
    })
    .addCallback((result) => result.observe(gauges.liveObservers));
}

/** The engine listener recording metrics: only the events it needs are implemented, so the engine skips the others (no call per `taskEvent`). */
function metricsListener(current: () => EngineInstruments | undefined): EngineEvents {
  const stateAttributes = attributeCache('a2a.task.state', shortState);
  const outcomeAttributes = attributeCache('a2a.turn.outcome', shortState);
  const cancelAttributes = attributeCache('a2a.cancel.outcome', (outcome) => outcome.replace('-', '_'));
  return {
    taskFinished({ state }) {
      current()?.tasksFinished.add(1, stateAttributes(state));
    },
    turnEnded({ outcome, durationMs }) {
      current()?.turnDuration.record(durationMs / 1000, outcomeAttributes(outcome));
    },
    cancelAnswered({ outcome }) {
      current()?.cancelsAnswered.add(1, cancelAttributes(outcome));
    },
  };
}

/** What createA2ARouter wires when metrics are on. */
interface RouterMetrics {
  /** The engine listener (combine it with the others). */
  readonly events: EngineEvents;
  /** The hook measuring store calls. */
  readonly seamHook: SeamHook;
  /** Reports the router's live gauges at each collection. */
  observe(gauges: LiveGauges): void;
  /** The push dispatcher's observer (attempts, durations, failures). */
  readonly push: PushDeliveryObserver;
  /** Settles once the meter is known (immediately for `{ meter }`). */
  readonly ready: Promise<void>;
}

/** The metrics of one router, or undefined when they are off (then nothing is wrapped or listened to). */
export function routerMetrics(option: A2AMetricsOption | undefined, logger: Logger): RouterMetrics | undefined {
  if (option === undefined || option === false) return undefined;
  const slot: MeterSlot = option === true ? globalMeter(logger) : { meter: option.meter, ready: Promise.resolve() };
  let engine: EngineInstruments | undefined;
  let store: StoreInstruments | undefined;
  let push: PushInstruments | undefined;
  let gauges: LiveGauges | undefined;
  // The instruments exist once the meter does: now for `{ meter }`, after the import for `true`.
  const ensure = (): void => {
    const meter = slot.meter;
    if (!meter || engine) return;
    engine = engineInstruments(meter);
    store = storeInstruments(meter);
    push = pushInstruments(meter);
    if (gauges) observeGauges(meter, gauges);
  };
  ensure();
  return {
    events: metricsListener(() => engine),
    seamHook: storeMetricsHook(() => store),
    observe(live) {
      gauges = live;
      if (engine) observeGauges(engine.meter, live);
    },
    push: pushMetricsObserver(() => push),
    ready: slot.ready.then(ensure),
  };
}

/** zod-friendly check of the `metrics` option. */
export function isMetricsOption(value: unknown): value is A2AMetricsOption {
  if (typeof value === 'boolean') return true;
  return typeof value === 'object' && value !== null && isMeterLike((value as { meter?: unknown }).meter);
}
