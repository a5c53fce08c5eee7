/**
 * The engine's seams under one deadline (RequestHandlerOptions.storeTimeoutMs): every call it makes
 * to the task store, the bus's history, the leases and the push stores fails with SeamTimeoutError
 * (answered as unavailable) instead of hanging its request for a whole outage.
 */
import { Deadlines, withDeadlines } from './deadlines.js';
import { offerImmediateWrites } from './immediate-writes.js';
import type { TaskEventBus } from './seams/task-event-bus.js';
import type { TaskLease, TaskLeases } from './seams/task-leases.js';
import type { TaskStore } from './seams/task-store.js';

/** The default deadline of a seam call. */
export const DEFAULT_STORE_TIMEOUT_MS = 5_000;

/** The bounded store keeps offering the store's immediate writes (they never wait: no deadline to bound). */
export function boundStore(store: TaskStore, deadlines: Deadlines): TaskStore {
  const bounded = withDeadlines(store, 'taskStore', ['get', 'create', 'update', 'list', 'findUnfinished'], deadlines);
  offerImmediateWrites(bounded, store);
  return bounded;
}

export const boundBus = (bus: TaskEventBus, deadlines: Deadlines): TaskEventBus =>
  bus.history ? withDeadlines(bus, 'bus', ['history'], deadlines) : bus;

/**
 * acquire() gets its wait on top of the deadline. A lease granted after its call timed out is
 * given back at once (nobody holds it to release it, and it would be renewed for ever). The leases'
 * onWrites is kept only when `store` (the engine's, unbounded) is the one their writes ride on.
 */
export function boundLeases(leases: TaskLeases, deadlines: Deadlines, store: TaskStore): TaskLeases {
  const boundLease = (lease: TaskLease): TaskLease => withDeadlines(lease, 'lease', ['release'], deadlines);
  const onWrites = leases.onWrites?.store === store ? leases.onWrites : undefined;
  return {
    onWrites: onWrites && { store, leaseOnCreate: (key, task) => boundLease(onWrites.leaseOnCreate(key, task)) },
    get sweepIntervalMs() {
      return leases.sweepIntervalMs;
    },
    claimExpired: () => deadlines.bound(leases.claimExpired(), 'leases.claimExpired()'),
    acquire: (key, task, waitMs) => {
      let timedOut = false;
      const acquired = leases.acquire(key, task, waitMs).then((lease) => {
        if (lease && timedOut) void lease.release().catch(() => undefined);
        return lease && boundLease(lease);
      });
      const bounded = deadlines.bound(acquired, 'leases.acquire()', waitMs);
      bounded.catch(() => (timedOut = true));
      return bounded;
    },
  };
}
