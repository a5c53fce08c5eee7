/**
 * A TaskStore wrapper that behaves like a store across a network: every call waits a random
 * 1-5 ms (by default), part before the inner call and part after it. The part before makes
 * concurrent writes reach the store late and out of order; the part after makes a read's snapshot
 * already stale when the caller gets it. Run the contract or the engine through it to find races
 * the in-memory store hides.
 */
import type { TaskScope, TaskStore } from '../engine/seams/task-store.js';

export interface LatencyOptions {
  /** Shortest total delay per call, in ms. Default 1. */
  minMs?: number;
  /** Longest total delay per call, in ms. Default 5. */
  maxMs?: number;
  /** Source of randomness in [0, 1); pass a seeded one for reproducible runs. Default Math.random. */
  random?: () => number;
}

export function withLatency(store: TaskStore, options: LatencyOptions = {}): TaskStore {
  const { minMs = 1, maxMs = 5, random = Math.random } = options;
  if (!(minMs >= 0 && maxMs >= minMs)) throw new RangeError(`withLatency: need 0 <= minMs <= maxMs, got ${minMs} and ${maxMs}`);

  const delayed = async <T>(call: () => Promise<T>): Promise<T> => {
    const total = Math.round(minMs + (maxMs - minMs) * random());
    const before = Math.floor(random() * (total + 1));
    await sleep(before);
    try {
      return await call();
    } finally {
      // Failures are late too: an error from a remote store also takes a round trip.
      await sleep(total - before);
    }
  };

  // What a network client does at the call: the request is serialized then, so a caller that
  // changes its task afterwards does not change what reaches the store.
  const atCall = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));

  return {
    get: (scope, taskId) => delayed(() => store.get(scope, taskId)),
    create: (scope, task) => {
      const sent = atCall(task);
      return delayed(() => store.create(scope, sent));
    },
    update: (scope, task, expectedVersion, change) => {
      // An artifact or status change is what travels (see TaskChange): the task is the caller's
      // copy, which it leaves alone until the write settles. Copying it costs what the task holds.
      const sent = change?.kind === 'artifact' || change?.kind === 'status' ? task : atCall(task);
      const sentChange = atCall(change);
      return delayed(() => store.update(scope, sent, expectedVersion, sentChange));
    },
    list: (scope, query) => delayed(() => store.list(scope, query)),
    ...(store.findUnfinished ? { findUnfinished: () => delayed(() => store.findUnfinished!()) } : {}),
    ...(store.removeFinished ? { removeFinished: (before: string, limit: number) => delayed(() => store.removeFinished!(before, limit)) } : {}),
    ...(store.saveTraceContext
      ? {
          saveTraceContext: (scope: TaskScope, taskId: string, traceparent: string) =>
            delayed(() => store.saveTraceContext!(scope, taskId, traceparent)),
        }
      : {}),
    ...(store.loadTraceContext
      ? { loadTraceContext: (scope: TaskScope, taskId: string) => delayed(() => store.loadTraceContext!(scope, taskId)) }
      : {}),
    ...(store.close ? { close: () => store.close!() } : {}),
  };
}

// 0 ms still yields a macrotask, so even an unlucky draw lets other callers interleave.
const sleep = (ms: number): Promise<void> => new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));
