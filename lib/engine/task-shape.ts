/** How a task is trimmed for an answer: its newest messages only (historyLength), its artifacts left out. */
import type { Task } from '../protocol/schemas.js';

/** At most `historyLength` newest messages; none (field omitted) for 0. */
export function withHistoryLength(task: Task, historyLength: number | undefined): Task {
  if (historyLength === undefined || !task.history) return task;
  if (historyLength === 0) {
    const { history: _dropped, ...rest } = task;
    return rest;
  }
  return task.history.length <= historyLength ? task : { ...task, history: task.history.slice(-historyLength) };
}

/** The task without its artifacts (ListTasks leaves them out unless includeArtifacts). */
export function withoutArtifacts(task: Task): Task {
  if (task.artifacts === undefined) return task;
  const { artifacts: _omitted, ...rest } = task;
  return rest;
}
