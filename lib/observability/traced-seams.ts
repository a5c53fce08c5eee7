/**
 * The task store and the leases as tracing sees them: a read, a create, a listing or a lease is an
 * event on the kit's span that made it (a turn, a cancel, an operation), with its duration and error
 * kind; updates, one per committed event, are only counted on it (an event each cost about 30 % of
 * a streamed event's CPU, measured); and a task's creation keeps its origin (the request that
 * started it) beside it, for the turns other replicas run.
 */
import type { ListTasksQuery, TaskChange, TaskPage, TaskScope, TaskStore, VersionedTask } from '../engine/seams/task-store.js';
import type { LeasedTask, TaskLease, TaskLeases } from '../engine/seams/task-leases.js';
import type { Task } from '../protocol/schemas.js';
import { A2A_SPAN_ATTRIBUTES as ATTR, A2A_SPAN_EVENTS } from './span-names.js';
import { taskStoreErrorKind } from './task-store-metrics.js';
import type { KitSpan, TracingCore } from './tracing-core.js';
import { TURN_KEY, type TurnSpan } from './engine-spans.js';

type Operation = 'get' | 'create' | 'list';
const EVENT_OF: Readonly<Record<Operation, string>> = {
  get: `${A2A_SPAN_EVENTS.storePrefix}get`,
  create: `${A2A_SPAN_EVENTS.storePrefix}create`,
  list: `${A2A_SPAN_EVENTS.storePrefix}list`,
};

/** Milliseconds since `start`, to the microsecond. */
const since = (start: number): number => Math.round((performance.now() - start) * 1000) / 1000;

class TracedTaskStore implements TaskStore {
  readonly #inner: TaskStore;
  readonly #core: TracingCore;

  constructor(inner: TaskStore, core: TracingCore) {
    this.#inner = inner;
    this.#core = core;
  }

  get(scope: TaskScope, taskId: string): Promise<VersionedTask | undefined> {
    const span = this.#core.activeKitSpan();
    return span ? recorded(span, 'get', this.#inner.get(scope, taskId)) : this.#inner.get(scope, taskId);
  }

  create(scope: TaskScope, task: Task): Promise<number> {
    const span = this.#core.activeKitSpan();
    if (!span) return this.#inner.create(scope, task);
    const turn = this.#core.api.context.active().getValue(TURN_KEY) as TurnSpan | undefined;
    const created = recorded(span, 'create', this.#inner.create(scope, task));
    const origin = turn?.origin;
    if (!origin) return created;
    // Kept before the create is answered: a follow-up on another replica comes after the first answer.
    return created.then((version) => this.#core.saveOrigin(scope, task.id, origin)?.then(() => version) ?? version);
  }

  update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): Promise<number> {
    // Counted, not recorded: no promise, clock or event per committed event.
    const kit = this.#core.activeKitSpan();
    if (kit) kit.storeUpdates++;
    return this.#inner.update(scope, task, expectedVersion, change);
  }

  list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage> {
    const span = this.#core.activeKitSpan();
    return span ? recorded(span, 'list', this.#inner.list(scope, query)) : this.#inner.list(scope, query);
  }

  // The optional methods, passed through untraced (start-up, shutdown, retention, tracing's own).
  get findUnfinished(): TaskStore['findUnfinished'] {
    const inner = this.#inner;
    return inner.findUnfinished ? () => inner.findUnfinished!() : undefined;
  }

  get removeFinished(): TaskStore['removeFinished'] {
    const inner = this.#inner;
    return inner.removeFinished ? (before, limit) => inner.removeFinished!(before, limit) : undefined;
  }

  get close(): TaskStore['close'] {
    const inner = this.#inner;
    return inner.close ? () => inner.close!() : undefined;
  }
}

/** `call`, with an event on `kit`'s span when it settles. */
function recorded<T>(kit: KitSpan, operation: Operation, call: Promise<T>): Promise<T> {
  const span = kit.span;
  const start = performance.now();
  return call.then(
    (value) => {
      span.addEvent(EVENT_OF[operation], { [ATTR.durationMs]: since(start) });
      return value;
    },
    (error: unknown) => {
      span.addEvent(EVENT_OF[operation], { [ATTR.durationMs]: since(start), [ATTR.errorType]: taskStoreErrorKind(error) });
      throw error;
    },
  );
}

/** The store, traced; its own trace methods are what the core keeps origins with. */
export function traceTaskStore(store: TaskStore, core: TracingCore): TaskStore {
  core.store = store;
  return new TracedTaskStore(store, core);
}

/** The leases, traced: acquiring one (a follow-up may wait for another replica's turn) and claiming expired ones. */
export function traceTaskLeases(leases: TaskLeases, core: TracingCore): TaskLeases {
  return {
    get sweepIntervalMs() {
      return leases.sweepIntervalMs;
    },
    acquire(key: string, task: LeasedTask, waitMs: number): Promise<TaskLease | undefined> {
      const span = core.activeKitSpan()?.span;
      if (!span) return leases.acquire(key, task, waitMs);
      const start = performance.now();
      return leases.acquire(key, task, waitMs).then(
        (lease) => {
          span.addEvent(A2A_SPAN_EVENTS.leaseAcquire, { [ATTR.durationMs]: since(start), [ATTR.leaseAcquired]: lease !== undefined });
          return lease;
        },
        (error: unknown) => {
          span.addEvent(A2A_SPAN_EVENTS.leaseAcquire, { [ATTR.durationMs]: since(start), [ATTR.errorType]: 'unavailable' });
          throw error;
        },
      );
    },
    claimExpired(): Promise<LeasedTask[]> {
      const span = core.activeKitSpan()?.span;
      if (!span) return leases.claimExpired();
      const start = performance.now();
      return leases.claimExpired().then((claimed) => {
        span.addEvent(A2A_SPAN_EVENTS.leaseClaimExpired, { [ATTR.durationMs]: since(start) });
        return claimed;
      });
    },
  };
}
