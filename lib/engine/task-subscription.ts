/** SubscribeToTask: the current task (or the events a resumed stream missed), then committed events from the bus. */
import { A2AError, shuttingDown } from '../errors.js';
import type { Logger } from '../options.js';
import type { StreamResponse, Task } from '../protocol/schemas.js';
import type { EngineLifecycle } from './lifecycle.js';
import type { CommittedEvent, TaskEventBus } from './seams/task-event-bus.js';
import type { VersionedTask } from './seams/task-store.js';
import { isTerminal } from './task-state.js';

interface SubscriptionObserver {
  onEvent(event: StreamResponse, version?: number): void;
  onEnd(outcome: { readonly kind: 'task'; readonly task: Task } | { readonly kind: 'closed' }): void;
  begin?(): void;
}

interface SubscriptionDeps {
  readonly bus: TaskEventBus;
  readonly logger: Logger;
  readonly lifecycle: EngineLifecycle;
}

/** The `Last-Event-ID` of a resumed stream: a version the client has seen, or undefined. */
function resumePoint(lastEventId: string | undefined): number | undefined {
  if (lastEventId === undefined || !/^\d{1,15}$/.test(lastEventId)) return undefined;
  return Number(lastEventId);
}

/**
 * Events committed while the snapshot is read are held back and delivered after it, minus those it
 * includes. Resolves with the function that ends the subscription.
 */
export async function subscribeToTask(
  deps: SubscriptionDeps,
  key: string,
  taskId: string,
  lastEventId: string | undefined,
  read: () => Promise<VersionedTask>,
  observer: SubscriptionObserver,
): Promise<() => void> {
  const { bus, lifecycle } = deps;
  let seen: number | undefined; // the version the subscriber has seen; undefined until the snapshot
  let held: CommittedEvent[] = [];
  let done = false;
  const deliver = (committed: CommittedEvent): void => {
    if (done || committed.version <= seen!) return;
    seen = committed.version;
    observer.onEvent(committed.event, committed.version);
    if (isTerminal(committed.task.status.state)) {
      stop();
      observer.onEnd({ kind: 'task', task: committed.task });
    }
  };
  const unsubscribe = bus.subscribe(key, (committed) => {
    if (seen === undefined) held.push(committed);
    else deliver(committed);
  });
  const stop = (): void => {
    done = true;
    unsubscribe();
    lifecycle.forgetSubscription(endForShutdown);
  };
  // On shutdown the stream ends cleanly after the last event it was sent.
  const endForShutdown = (): void => {
    if (done) return;
    stop();
    observer.onEnd({ kind: 'closed' });
  };
  let stored: VersionedTask;
  try {
    stored = await read();
  } catch (error) {
    stop();
    throw error;
  }
  // A resumed stream gets the events it missed from the bus's history; otherwise the task itself.
  const resumeAfter = resumePoint(lastEventId);
  let missed: CommittedEvent[] | undefined;
  if (resumeAfter !== undefined && resumeAfter < stored.version && bus.history) {
    try {
      missed = await bus.history(key, resumeAfter);
    } catch (error) {
      deps.logger.warn({ err: error, taskId }, 'the event bus could not replay a stream; sending the task instead');
    }
  }
  if (isTerminal(stored.task.status.state) && missed === undefined) {
    stop();
    throw new A2AError('UnsupportedOperation', `Task ${stored.task.id} is in a terminal state; there is nothing to subscribe to`);
  }
  if (lifecycle.closing) {
    stop();
    throw shuttingDown();
  }
  lifecycle.trackSubscription(key, endForShutdown);
  if (missed !== undefined) {
    seen = resumeAfter;
    for (const committed of missed) deliver(committed);
    if (!done && isTerminal(stored.task.status.state)) {
      stop();
      observer.onEnd({ kind: 'task', task: stored.task });
      return stop;
    }
  } else {
    seen = stored.version;
    if (resumeAfter !== stored.version) observer.onEvent({ task: stored.task }, stored.version);
    else observer.begin?.();
  }
  for (const committed of held) deliver(committed);
  held = [];
  return stop;
}
