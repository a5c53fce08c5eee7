/**
 * instrumentTaskStore(store, meter): a TaskStore that measures every call of the one it wraps
 * (latency by operation, failures by operation and kind) and otherwise behaves exactly like it.
 */
import {
  InvalidPageTokenError,
  TaskExistsError,
  TaskNotFoundInStoreError,
  TaskVersionConflictError,
  type ListTasksQuery,
  type TaskChange,
  type TaskPage,
  type TaskScope,
  type TaskStore,
  type VersionedTask,
} from '../engine/seams/task-store.js';
import type { Task } from '../protocol/schemas.js';
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

class MeasuredTaskStore implements TaskStore {
  readonly #inner: TaskStore;
  readonly #instruments: () => StoreInstruments | undefined;

  constructor(inner: TaskStore, instruments: () => StoreInstruments | undefined) {
    this.#inner = inner;
    this.#instruments = instruments;
  }

  get(scope: TaskScope, taskId: string): Promise<VersionedTask | undefined> {
    return this.#measure('get', () => this.#inner.get(scope, taskId));
  }

  create(scope: TaskScope, task: Task): Promise<number> {
    return this.#measure('create', () => this.#inner.create(scope, task));
  }

  update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): Promise<number> {
    return this.#measure('update', () => this.#inner.update(scope, task, expectedVersion, change));
  }

  list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage> {
    return this.#measure('list', () => this.#inner.list(scope, query));
  }
  // The optional methods, passed through unmeasured (start-up and shutdown only).
  get findUnfinished(): TaskStore['findUnfinished'] {
    const inner = this.#inner;
    return inner.findUnfinished ? () => inner.findUnfinished!() : undefined;
  }

  get close(): TaskStore['close'] {
    const inner = this.#inner;
    return inner.close ? () => inner.close!() : undefined;
  }

  // Tracing's, so that a store measured by the app itself still keeps a task's trace context.
  get saveTraceContext(): TaskStore['saveTraceContext'] {
    const inner = this.#inner;
    return inner.saveTraceContext ? (scope, taskId, traceparent) => inner.saveTraceContext!(scope, taskId, traceparent) : undefined;
  }

  get loadTraceContext(): TaskStore['loadTraceContext'] {
    const inner = this.#inner;
    return inner.loadTraceContext ? (scope, taskId) => inner.loadTraceContext!(scope, taskId) : undefined;
  }

  #measure<T>(operation: Operation, call: () => Promise<T>): Promise<T> {
    const instruments = this.#instruments();
    if (!instruments) return call();
    const start = performance.now();
    const failed = (error: unknown): never => {
      const attributes = FAILED[operation][taskStoreErrorKind(error)];
      instruments.duration.record((performance.now() - start) / 1000, attributes);
      instruments.errors.add(1, attributes);
      throw error;
    };
    let pending: Promise<T>;
    try {
      pending = call();
    } catch (error) {
      return failed(error);
    }
    return pending.then((value) => {
      instruments.duration.record((performance.now() - start) / 1000, SUCCEEDED[operation]);
      return value;
    }, failed);
  }
}

/** Used by the router, whose meter may arrive after start-up. */
export function measureTaskStore(store: TaskStore, instruments: () => StoreInstruments | undefined): TaskStore {
  return new MeasuredTaskStore(store, instruments);
}

/**
 * Wraps `store` so each call records `a2a.store.operation.duration` (seconds; attribute
 * `a2a.store.operation`, plus `error.type` when it failed) and each failure `a2a.store.errors`.
 * `createA2ARouter({ metrics })` does this itself; call it for a store you also use elsewhere.
 */
export function instrumentTaskStore(store: TaskStore, meter: MeterLike): TaskStore {
  const instruments = storeInstruments(meter);
  return new MeasuredTaskStore(store, () => instruments);
}
