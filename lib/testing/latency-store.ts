/** A TaskStore as across a network: 1-5 ms before each call (writes late, out of order) and after (stale reads). */
// Run the contract or the engine through it to find races the in-memory store hides.
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

  // Serialized at the call, as by a network client: a later change by the caller does not reach the store.
  const atCall = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));

  return {
    get: (scope, taskId) => delayed(() => store.get(scope, taskId)),
    create: (scope, task) => {
      const sent = atCall(task);
      return delayed(() => store.create(scope, sent));
    },
    update: (scope, task, expectedVersion, change) => {
      // A change travels, not the task (the caller leaves its copy alone until the write settles).
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
