/**
 * What every writer of a task does once an event is stored: the bus's subscribers and the engine's
 * listeners (onTaskEvent, push delivery, metrics) hear it. Shared by a task's live execution and by
 * the publishers of handed-off work, so both paths fan out alike.
 */
import type { Logger } from '../options.js';
import type { StreamResponse, Task } from '../protocol/schemas.js';
import type { EngineEvents } from './engine-events.js';
import type { TaskScope } from './seams/task-store.js';
import type { TaskEventBus } from './seams/task-event-bus.js';
import { isTerminal } from './task-state.js';

export interface AnnounceDeps {
  readonly bus: TaskEventBus;
  readonly logger: Logger;
  readonly events?: EngineEvents;
}

/** Which task: its key, scope and id (one object per writer, built once). */
export interface AnnouncedTask {
  readonly key: string;
  readonly scope: TaskScope;
  readonly taskId: string;
}

/** A stored event of that task. */
interface StoredEvent {
  readonly event: StreamResponse;
  readonly task: Task;
  readonly version: number;
}

/**
 * Publishes `stored` on the bus and reports it to the engine's listeners, in the caller's async
 * context. Returns the bus's promise when it has one (a failure is logged here already).
 */
export function announceCommit(deps: AnnounceDeps, of: AnnouncedTask, stored: StoredEvent): void | Promise<void> {
  const { key, scope, taskId } = of;
  const { event, task, version } = stored;
  const published = deps.bus.publish(key, { event, task, version });
  if (published) published.catch((error: unknown) => deps.logger.error({ err: error, taskId }, 'the event bus failed to publish an event'));
  const events = deps.events;
  if (events) {
    const info = { taskId, tenant: scope.tenant };
    events.taskEvent?.({ ...info, owner: scope.owner, event, task, version });
    if (isTerminal(task.status.state)) events.taskFinished?.({ ...info, state: task.status.state });
  }
  return published;
}
