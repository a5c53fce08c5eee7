/** Task store metrics (latency by operation, failures by kind): a seam hook, and instrumentTaskStore(store, meter) for a store used elsewhere. */
import { interceptSeam, type SeamHook } from '../engine/seams/intercept.js';
import {
  InvalidPageTokenError,
  TaskExistsError,
  TaskNotFoundInStoreError,
  TaskVersionConflictError,
  type TaskStore,
} from '../engine/seams/task-store.js';
import type { CounterLike, HistogramLike, MeterLike, MetricAttributesLike } from './meter.js';

/** Names repeated here (not imported from metrics.ts) so the two files do not import each other. */
const STORE_DURATION = 'a2a.store.operation.duration';
const STORE_ERRORS = 'a2a.store.errors';

// From an in-memory map (tens of microseconds) to a slow database.
const STORE_BUCKETS = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

type Operation = 'get' | 'create' | 'update' | 'list';

/** `error.type` of a failed store call: the store errors the engine understands, else 'unavailable'. */
export type TaskStoreErrorKind = 'conflict' | 'not_found' | 'exists' | 'invalid_token' | 'unavailable';

export function taskStoreErrorKind(error: unknown): TaskStoreErrorKind {
  if (error instanceof TaskVersionConflictError) return 'conflict';
  if (error instanceof TaskNotFoundInStoreError) return 'not_found';
  if (error instanceof TaskExistsError) return 'exists';
  if (error instanceof InvalidPageTokenError) return 'invalid_token';
  return 'unavailable';
}

const OPERATIONS: readonly Operation[] = ['get', 'create', 'update', 'list'];
const KINDS: readonly TaskStoreErrorKind[] = ['conflict', 'not_found', 'exists', 'invalid_token', 'unavailable'];

// Every attribute set there can be, made once.
const SUCCEEDED = {} as Record<Operation, MetricAttributesLike>;
const FAILED = {} as Record<Operation, Record<TaskStoreErrorKind, MetricAttributesLike>>;
for (const operation of OPERATIONS) {
  SUCCEEDED[operation] = Object.freeze({ 'a2a.store.operation': operation });
  FAILED[operation] = {} as Record<TaskStoreErrorKind, MetricAttributesLike>;
  for (const kind of KINDS) FAILED[operation][kind] = Object.freeze({ 'a2a.store.operation': operation, 'error.type': kind });
}

export interface StoreInstruments {
  readonly duration: HistogramLike;
  readonly errors: CounterLike;
}

export function storeInstruments(meter: MeterLike): StoreInstruments {
  return {
    duration: meter.createHistogram(STORE_DURATION, {
      description: 'Duration of task store calls',
      unit: 's',
      advice: { explicitBucketBoundaries: STORE_BUCKETS },
    }),
    errors: meter.createCounter(STORE_ERRORS, {
      description: 'Task store calls that failed, by kind (conflicts are expected under concurrency)',
      unit: '{error}',
    }),
  };
}

/** Store metrics as a seam hook; with no instruments yet (the meter still loading), calls pass through. */
export function storeMetricsHook(instruments: () => StoreInstruments | undefined): SeamHook {
  return {
    wraps: (call) => call.seam === 'taskStore' && (OPERATIONS as readonly string[]).includes(call.method),
    around(call, args, next) {
      const measured = instruments();
      if (!measured) return next(args);
      const operation = call.method as Operation;
      const start = performance.now();
      const failed = (error: unknown): never => {
        const attributes = FAILED[operation][taskStoreErrorKind(error)];
        measured.duration.record((performance.now() - start) / 1000, attributes);
        measured.errors.add(1, attributes);
        throw error;
      };
      let pending: Promise<unknown>;
      try {
        pending = next(args) as Promise<unknown>;
      } catch (error) {
        return failed(error);
      }
      return pending.then((value) => {
        measured.duration.record((performance.now() - start) / 1000, SUCCEEDED[operation]);
        return value;
      }, failed);
    },
  };
}

/**
 * Wraps `store` so each call records `a2a.store.operation.duration` (seconds; attribute `a2a.store.operation`, plus `error.type` when it failed) and
 * each failure `a2a.store.errors`. `createA2ARouter({ metrics })` does this itself; call it for a store you also use elsewhere.
 */
export function instrumentTaskStore(store: TaskStore, meter: MeterLike): TaskStore {
  const instruments = storeInstruments(meter);
  return interceptSeam(store, 'taskStore', [storeMetricsHook(() => instruments)]);
}
