/** The task lifecycle as a state machine, the statuses the engine writes itself, and trimming for an answer. */
import { randomUUID } from 'node:crypto';
import type { Message, Task, TaskState, TaskStatus } from '../protocol/schemas.js';

export const TERMINAL_STATES: ReadonlySet<TaskState> = new Set<TaskState>([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);

export const INTERRUPTED_STATES: ReadonlySet<TaskState> = new Set<TaskState>(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED']);

export const isTerminal = (state: TaskState): boolean => TERMINAL_STATES.has(state);
export const isInterrupted = (state: TaskState): boolean => INTERRUPTED_STATES.has(state);
/** A state after which the current turn is over: the task is parked or finished. */
export const endsTurn = (state: TaskState): boolean => TERMINAL_STATES.has(state) || INTERRUPTED_STATES.has(state);

/** Whether `from` may move to `to` (the digest's recommended validator, §5.1). */
export function canTransition(from: TaskState, to: TaskState): boolean {
  if (isTerminal(from)) return false;
  if (from === 'TASK_STATE_INPUT_REQUIRED') return to !== 'TASK_STATE_SUBMITTED';
  if (from === 'TASK_STATE_AUTH_REQUIRED') return to !== 'TASK_STATE_SUBMITTED';
  return true;
}

let lastMs = -1;
let lastIso = '';

/** The text is kept for the millisecond it names: formatting a Date costs ~15 clock reads. */
export function now(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

function agentMessage(text: string, task: Pick<Task, 'id' | 'contextId'>): Message {
  return {
    messageId: randomUUID(),
    role: 'ROLE_AGENT',
    parts: [{ text }],
    contextId: task.contextId,
    taskId: task.id,
  };
}

/** A status the engine writes itself (failure, forced cancel), with an explanatory message. */
export function engineStatus(state: 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED', task: Pick<Task, 'id' | 'contextId'>, text: string): TaskStatus {
  return { state, message: agentMessage(text, task), timestamp: now() };
}

export const GENERIC_FAILURE_TEXT = 'The agent failed while processing this task.';
export const CANCELED_TEXT = 'The task was canceled.';

/** At most `historyLength` newest messages; none (field omitted) for 0. */
export function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || !task.history) return task;
  if (historyLength === 0) {
    const { history: _dropped, ...rest } = task;
    return rest;
  }
  return task.history.length <= historyLength ? task : { ...task, history: task.history.slice(-historyLength) };
}

export function withoutArtifacts(task: Task): Task {
  if (task.artifacts === undefined) return task;
  const { artifacts: _omitted, ...rest } = task;
  return rest;
}
