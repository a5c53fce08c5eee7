/**
 * What the engine asks of tracing (lib/observability/tracing.ts implements it): a span around each
 * turn and each cancel. Absent when tracing is off, and then the engine makes no call at all.
 */
import type { TaskScope } from './seams/task-store.js';
import type { Turn } from './execution/turn.js';

/** The task a turn or cancel works on. */
export interface TracedTask {
  readonly taskId: string;
  readonly contextId: string;
  readonly scope: TaskScope;
}

export interface EngineTracing {
  /** Starts `turn`'s span and runs `start` (the whole turn: lease, history, execute()) inside it. */
  startTurn(task: TracedTask, turn: Turn, resumed: string | undefined, start: (turn: Turn) => void): void;
  /** Runs a cancel inside its span; `run` notes its steps: the cancel() hook returned, the grace period ran out. */
  traceCancel<T>(task: TracedTask, run: (note: (step: 'hook' | 'grace') => void) => Promise<T>): Promise<T>;
}

/**
 * How an execution starts its turns: `start` itself when tracing is off (nothing added per turn),
 * else each turn inside a span of its own. `resumed`: the reason of a turn run by executor.resume().
 */
export function tracedTurns(
  tracing: EngineTracing | undefined,
  task: TracedTask,
  start: (turn: Turn) => void,
  resumed?: string,
): (turn: Turn) => void {
  return tracing ? (turn) => tracing.startTurn(task, turn, resumed, start) : start;
}
