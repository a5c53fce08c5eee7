/**
 * The publisher of handed-off work: a queue worker's way to publish a task's later events through a
 * task channel. It holds a cancel listener (on the bus) until the task parks or ends, or it closes.
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

const abortReason = (why: string): Error => new Error(why);

const WORDING: ChannelWording = {
  refused: 'a task publisher published an invalid event; the task is failed',
  storeFailed: 'the task store failed a task publisher write',
  endedBy: 'elsewhere',
};

interface PublisherSink extends EventSink {
  readonly signal: AbortSignal;
  readonly closed: boolean;
  close(): void;
}

/** The sink behind a TaskPublisher: its own task channel, in the publishing code's async context. */
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
    const applied = this.#channel.enqueue(() => this.#apply(event));
    applied.catch(noop); // not awaiting callers must not crash the process; awaiting ones still see it
    return applied;
  }

  close(): void {
    this.#release();
  }

  /** `reason`: the signal fires with it. */
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
 * TaskEvents for handed-off work, plus the cancel signal and close(). Writes are refused once the
 * task parks or ends, a CancelTask arrives, or it is closed.
 */
export class TaskPublisher extends TaskEvents {
  readonly #sink: PublisherSink;

  constructor(sink: PublisherSink) {
    super(sink);
    this.#sink = sink;
  }

  /** Fires when the task is canceled (or ended by someone else, or the turn timed out): stop the work. */
  get signal(): AbortSignal {
    return this.#sink.signal;
  }

  /** True once writes are refused. */
  get closed(): boolean {
    return this.#sink.closed;
  }

  /** Stops publishing (idempotent); call it when the work ends without a final event. */
  close(): void {
    this.#sink.close();
  }
}

/** A publisher for a task the caller has already read in its scope. */
export function openTaskPublisher(deps: TaskPublisherDeps, key: string, scope: TaskScope, stored: VersionedTask): TaskPublisher {
  return new TaskPublisher(new HandedOffSink(deps, key, scope, stored));
}
