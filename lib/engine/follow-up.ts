/**
 * Where a message to an existing task goes: behind the task's live execution here, or to a new one
 * built from the stored copy, or refused (the task is finished, or its turn runs in another process).
 */
import { acceptsNoMoreMessages, busyElsewhere, invalidParams } from '../errors.js';
import type { Execution } from './execution/execution.js';
import type { Executions } from './lifecycle.js';
import type { TaskScope, VersionedTask } from './seams/task-store.js';
import { taskKey } from './task-key.js';
import { isInterrupted, isTerminal } from './task-state.js';

export interface FollowUpDeps {
  readonly executions: Executions;
  /** Several replicas: the execution waits for the task's lease and decides then. */
  readonly leased: boolean;
}

/**
 * The execution that takes a message for task `taskId`; `read` resolves the task in the caller's
 * scope. The stored copy may be old by now; its version makes the first write (the message joining
 * the history) fail if so, and the execution then decides on a fresh one.
 */
export async function routeFollowUp(
  deps: FollowUpDeps,
  scope: TaskScope,
  _taskId: string,
  contextId: string | undefined,
  read: () => Promise<VersionedTask>,
): Promise<Execution> {
  const stored = await read();
  const task = stored.task;
  if (contextId && contextId !== task.contextId) {
    throw invalidParams([{ field: 'message.contextId', description: `does not match the contextId of task ${task.id}` }]);
  }
  if (isTerminal(task.status.state)) throw acceptsNoMoreMessages(task.id);
  const key = taskKey(scope, task.id);
  const { executions } = deps;
  const live = executions.get(key);
  if (live) return live;
  const parked = isInterrupted(task.status.state) || deps.leased ? stored : await parkedNow(executions, task.id, key, read);
  return executions.getOrOpen(key, scope, task.id, task.contextId ?? '', parked);
}

/**
 * The task was mid-turn when read, and no turn of it runs here now: read it again. Parked since
 * (the turn here ended meanwhile), it takes this message; still mid-turn, the turn runs in another
 * process, where this message cannot queue: it is refused rather than run beside that turn.
 */
async function parkedNow(
  executions: Executions,
  taskId: string,
  key: string,
  read: () => Promise<VersionedTask>,
): Promise<VersionedTask | undefined> {
  const fresh = await read();
  if (executions.get(key)) return undefined; // a turn started here meanwhile: queue behind it
  const state = fresh.task.status.state;
  if (isTerminal(state)) throw acceptsNoMoreMessages(taskId);
  if (!isInterrupted(state)) throw busyElsewhere(taskId);
  return fresh;
}
