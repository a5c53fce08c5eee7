/**
 * What a resumed turn (executor.resume()) is queued as: no request brought it, so the task's owner
 * and tenant are its context, and the task's last message stands in for the one a request carries.
 */
import type { Task } from '../../protocol/schemas.js';
import type { TaskScope } from '../seams/task-store.js';
import type { Turn } from './turn.js';

export function resumeRequest(scope: TaskScope, task: Task, taskId: string, contextId: string): Turn['request'] {
  const { owner, tenant } = scope;
  const caller = { id: owner, authenticated: false };
  const requestContext = { caller, tenant };
  // Never read for a resume (the task exists; no history is joined).
  const message = task.history?.at(-1) ?? { role: 'ROLE_USER' as const, parts: [], messageId: `resume-${taskId}`, taskId, contextId };
  const context = { userText: '', taskId, contextId, caller, tenant, configuration: undefined, metadata: undefined, extensions: [], requestContext };
  return { message, context };
}
