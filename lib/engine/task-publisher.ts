/**
 * The publisher of handed-off work: what a queue worker (in this process or another one sharing
 * the store and bus) uses to publish a task's later events after execute() called `handOff()`.
 * It writes through a task channel, as a live execution does, and hears a CancelTask through the
 * bus. It holds a cancel listener until the task parks or ends, a cancel arrives, or close() is
 * called; nothing after.
 */
import type { Logger } from '../options.js';
import type { StreamResponse, Task } from '../protocol/schemas.js';
import { InvalidAgentEventError } from './task-events.js';
import { TaskChannel, type ChannelDeps, type ChannelListener, type ChannelWording, type Committed } from './execution/task-channel.js';
import type { TaskScope, VersionedTask } from './seams/task-store.js';
import { TaskEvents, type EventSink } from './task-events.js';
import type { TaskEvent } from './task-reducer.js';
import { endsTurn, isTerminal } from './task-state.js';

interface TaskPublisherDeps extends ChannelDeps {
  readonly logger: Logger;
}

const noop = (): void => {};

/** Why a publisher's signal fired. */
const abortReason = (why: string): Error => new Error(why);

const WORDING: ChannelWording = {
  refused: 'a task publisher published an invalid event; the task is failed',
  storeFailed: 'the task store failed a task publisher write',
  endedBy: 'elsewhere',
};

/** What a TaskPublisher publishes into. */
interface PublisherSink extends EventSink {
  readonly signal: AbortSignal;
  readonly closed: boolean;
  close(): void;
}

/**
 * The sink behind a TaskPublisher: a task channel of its own (the same chain as a live execution's),
 * in the publishing code's async context. It listens to its channel to know when to close.
 */
class HandedOffSink implements PublisherSink, ChannelListener {
  readonly taskId: string;
  readonly contextId: string;
  readonly #abort = new AbortController();
  #closed = false;
  readonly #channel: TaskChannel;
  #stopCancelListener: (() => void) | undefined;

  constructor(deps: TaskPublisherDeps, key: string, scope: TaskScope, stored: VersionedTask) {
    this.taskId = stored.task.id;
    this.contextId = stored.task.contextId ?? '';
    this.#channel = new TaskChannel<void>(deps, key, scope, this, stored, this, WORDING);
    if (isTerminal(stored.task.status.state)) {
      // Finished (or canceled) before the worker got to it: nothing to do, and the signal says so.
      this.#closed = true;
      this.#abort.abort(abortReason(`task ${this.taskId} is already ${stored.task.status.state}`));
      return;
    }
    // A CancelTask anywhere reaches this process through the bus: stop, and refuse later writes.
    this.#stopCancelListener = deps.bus.onCancelRequest(key, () => this.#release(abortReason('task canceled')));
  }

  get closed(): boolean {
    return this.#closed;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  accept(event: StreamResponse): Promise<void> {
    // Each step runs in the async context of the code that published.
    const applied = this.#channel.enqueue(() => this.#apply(event));
    applied.catch(noop); // not awaiting callers must not crash the process; awaiting ones still see it
    return applied;
  }

  close(): void {
    this.#release();
  }

  /** No more writes; the cancel listener is dropped; `reason`: the signal fires with it. */
  #release(reason?: Error): void {
    this.#closed = true;
    this.#stopCancelListener?.();
    this.#stopCancelListener = undefined;
    if (reason && !this.#abort.signal.aborted) this.#abort.abort(reason);
  }

  async #apply(event: StreamResponse): Promise<void> {
    if (this.#closed) {
      const state = this.#channel.task?.status.state;
      throw new InvalidAgentEventError(`the publisher of task ${this.taskId} is closed (the task is in ${state}); its later events are refused`);
    }
    if ('message' in event) throw new InvalidAgentEventError('only execute() may answer with a Message; publish a status message instead');
    try {
      await this.#channel.publish(event as TaskEvent);
    } catch (error) {
      // Refused (the channel failed the task) or ended elsewhere (already released with its reason).
      if (error instanceof InvalidAgentEventError) this.#release(abortReason('task failed'));
      throw error;
    }
  }

  // What the channel tells this sink (ChannelListener).

  openingMessage(): undefined {
    return undefined;
  }

  created(): void {}

  committed(): void {}

  /** Parked or finished: the handed-off work is over (a follow-up message starts a new turn). */
  announced(commit: Committed): void {
    if (endsTurn(commit.task.status.state)) this.#release();
  }

  endedElsewhere(task: Task): void {
    this.#release(abortReason(`task ${task.status.state}`));
  }

  engineWriteFailed(): void {}
}

/**
 * TaskEvents for handed-off work (progress, artifact, complete, fail, requireInput, ...), plus the
 * task's cancel signal and close(). Its writes are refused once the task parks or ends, a CancelTask
 * arrives, or it is closed. Open one with `router.openTaskPublisher(scope, taskId)`.
 */
export class TaskPublisher extends TaskEvents {
  readonly #sink: PublisherSink;

  /** Built by `openTaskPublisher()` (the router's, or A2ARequestHandler's). */
  constructor(sink: PublisherSink) {
    super(sink);
    this.#sink = sink;
  }

  /** Fires when the task is canceled (or ended by someone else, or the turn timed out): stop the work. */
  get signal(): AbortSignal {
    return this.#sink.signal;
  }

  /** True once writes are refused: the task parked or ended, a cancel arrived, or close() was called. */
  get closed(): boolean {
    return this.#sink.closed;
  }

  /** Stops publishing and drops the cancel listener (idempotent). Call it when the work ends without a final event. */
  close(): void {
    this.#sink.close();
  }
}

/** A publisher for a task the caller has already read in its scope. */
export function openTaskPublisher(deps: TaskPublisherDeps, key: string, scope: TaskScope, stored: VersionedTask): TaskPublisher {
  return new TaskPublisher(new HandedOffSink(deps, key, scope, stored));
}
