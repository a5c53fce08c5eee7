/**
 * What a resumed turn (executor.resume()) is queued as: no request brought it, so its call is the
 * task's owner and tenant, and the task's last message stands in for the one a request carries.
 */
import { ownerCall } from '../../context/request-state.js';
import type { Task } from '../../protocol/schemas.js';
import type { TaskScope } from '../seams/task-store.js';
import type { Turn } from './turn.js';

export function resumeRequest(scope: TaskScope, task: Task, taskId: string, contextId: string): Turn['request'] {
  // Never read for a resume (the task exists; no history is joined).
  const message = task.history?.at(-1) ?? { role: 'ROLE_USER' as const, parts: [], messageId: `resume-${taskId}`, taskId, contextId };
  return { message, call: ownerCall(scope.owner, scope.tenant) };
}
