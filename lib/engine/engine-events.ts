/** What the engine reports as it works (cheap, synchronous, never throwing) and what it asks of tracing. */
import type { StreamResponse, Task, TaskState } from '../protocol/schemas.js';
import type { Logger } from '../options.js';
import type { TaskScope } from './seams/task-store.js';
import type { Turn } from './execution/turn.js';

export interface EngineEvents {
  /** A message's turn starts running `execute()`. */
  turnStarted?(info: { readonly taskId: string; readonly tenant: string; readonly followUp: boolean }): void;
  /** A turn ended: with a Message reply, the state its task reached, or an error answered to the client. */
  turnEnded?(info: {
    readonly taskId: string;
    readonly tenant: string;
    readonly outcome: 'message' | 'error' | TaskState;
    readonly durationMs: number;
  }): void;
  /** An event was committed, in the async context of the request that produced it. */
  taskEvent?(info: {
    readonly taskId: string;
    readonly tenant: string;
    /** The caller id owning the task (with `tenant`, the task's scope). */
    readonly owner: string;
    readonly event: StreamResponse;
    readonly task: Task;
    /** The store version this event's write produced. */
    readonly version: number;
  }): void;
  /** A task reached a terminal state (once per task and process that wrote it). */
  taskFinished?(info: { readonly taskId: string; readonly tenant: string; readonly state: TaskState }): void;
  /** A CancelTask was answered. */
  cancelAnswered?(info: { readonly taskId: string; readonly tenant: string; readonly outcome: 'canceled' | 'not-cancelable' | 'error' }): void;
  /** Spans around turns and cancels (the router's `traces` option); not a listener: the first one given is kept. */
  readonly tracing?: EngineTracing;
}

const METHODS = ['turnStarted', 'turnEnded', 'taskEvent', 'taskFinished', 'cancelAnswered'] as const;

/** One EngineEvents calling several, each guarded: a listener that throws is logged and skipped. */
export function combineEngineEvents(listeners: readonly EngineEvents[], logger: Logger): EngineEvents | undefined {
  if (listeners.length === 0) return undefined;
  const combined: Record<string, unknown> = {};
  const tracing = listeners.find((l) => l.tracing)?.tracing;
  if (tracing) combined.tracing = tracing;
  for (const name of METHODS) {
    const fns = listeners.map((l) => l[name]?.bind(l)).filter((f): f is (info: never) => void => f !== undefined);
    if (fns.length === 0) continue;
    combined[name] = (info: never) => {
      for (const fn of fns) {
        try {
          fn(info);
        } catch (error) {
          logger.error({ err: error }, `an engine event listener (${name}) threw; ignored`);
        }
      }
    };
  }
  return combined as EngineEvents;
}

export interface TracedTask {
  readonly taskId: string;
  readonly contextId: string;
  readonly scope: TaskScope;
}

/** Absent when tracing is off, and then the engine makes no call at all. */
export interface EngineTracing {
  /** Runs the whole turn (lease, history, execute()) inside its span. */
  startTurn(task: TracedTask, turn: Turn, resumed: string | undefined, start: (turn: Turn) => void): void;
  /** `run` notes its steps: the cancel() hook returned, the grace period ran out. */
  traceCancel<T>(task: TracedTask, run: (note: (step: 'hook' | 'grace') => void) => Promise<T>): Promise<T>;
}
