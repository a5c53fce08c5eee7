/** The identity of a task for the engine's per-task structures: its scope plus its id. */
import type { TaskScope } from './seams/task-store.js';

/**
 * A string key for (tenant, owner, taskId). The owner is part of it: a request of another owner can
 * never reach a live execution or a subscription, even by a task id it guessed.
 */
export const taskKey = (scope: TaskScope, taskId: string): string =>
  `${scope.tenant.length}:${scope.tenant}${scope.owner.length}:${scope.owner}${taskId}`;
