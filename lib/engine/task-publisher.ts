/**
 * The publisher of handed-off work: what a queue worker (in this process or another one sharing
 * the store and bus) uses to publish a task's later events after execute() called `handOff()`.
 * It writes the way a live execution does (reducer, compare-and-set on the store, bus, engine
 * listeners), and hears a CancelTask through the bus. It holds a cancel listener until the task
 * parks or ends, a cancel arrives, or close() is called; nothing after.
 */
import type { Logger } from '../logger.js';
import type { StreamResponse } from '../protocol/schemas.js';
import { InvalidAgentEventError } from './agent-event-error.js';
import { announceCommit, type AnnounceDeps } from './announce.js';
import type { TaskScope, TaskStore, VersionedTask } from './seams/task-store.js';
import { TaskEvents, type EventSink } from './task-events.js';
import type { TaskEvent } from './task-reducer.js';
import { GENERIC_FAILURE_TEXT, endsTurn, engineStatus, isTerminal } from './task-state.js';
import { TaskWriter, writeFailure, type Commit } from './task-writer.js';

export interface TaskPublisherDeps extends AnnounceDeps {
  readonly store: TaskStore;
  readonly logger: Logger;
}

const noop = (): void => {};
const RESOLVED: Promise<void> = Promise.resolve();

/** Why a publisher's signal fired. */
const abortReason = (why: string): Error => new Error(why);

/** What a TaskPublisher publishes into. */
export interface PublisherSink extends EventSink {
  readonly signal: AbortSignal;
  readonly closed: boolean;
  close(): void;
}

/** The sink behind a TaskPublisher: its own writer and its own serial chain, in the publishing code's async context. */
class HandedOffSink implements PublisherSink {
  readonly taskId: string;
  readonly contextId: string;
  readonly #abort = new AbortController();
  #closed = false;
  readonly #deps: TaskPublisherDeps;
  readonly #key: string;
  readonly #scope: TaskScope;
  readonly #writer: TaskWriter;
  #tail: Promise<unknown> = RESOLVED;
  #stopCancelListener: (() => void) | undefined;

  constructor(deps: TaskPublisherDeps, key: string, scope: TaskScope, stored: VersionedTask) {
    this.#deps = deps;
    this.#key = key;
    this.#scope = scope;
    this.taskId = stored.task.id;
    this.contextId = stored.task.contextId ?? '';
    this.#writer = new TaskWriter(deps.store, scope, this.taskId, this.contextId, stored);
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
    // Chained with .then(): each step runs in the async context of the code that published.
    const applied = this.#tail.then(() => this.#apply(event));
    this.#tail = applied.catch(noop);
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
      const state = this.#writer.task?.status.state;
      throw new InvalidAgentEventError(`the publisher of task ${this.taskId} is closed (the task is in ${state}); its later events are refused`);
    }
    if ('message' in event) throw new InvalidAgentEventError('only execute() may answer with a Message; publish a status message instead');
    const result = await this.#commit(event as TaskEvent);
    if (result.kind === 'refused') {
      this.#deps.logger.error({ taskId: this.taskId, reason: result.reason }, 'a task publisher published an invalid event; the task is failed');
      const status = engineStatus('TASK_STATE_FAILED', { id: this.taskId, contextId: this.contextId }, GENERIC_FAILURE_TEXT);
      await this.#commit({ statusUpdate: { taskId: this.taskId, contextId: this.contextId, status } }).catch(noop);
      this.#release(abortReason('task failed'));
      throw new InvalidAgentEventError(result.reason);
    }
    if (result.kind === 'ended') {
      this.#release(abortReason(`task ${result.task.status.state}`));
      throw new InvalidAgentEventError(`task ${this.taskId} was ended (${result.task.status.state}) elsewhere; the event was refused`);
    }
    // Parked or finished: the handed-off work is over (a follow-up message starts a new turn).
    if (endsTurn(result.task.status.state)) this.#release();
  }

  /** Writes and announces `event`; store failures become what the publisher is told. */
  async #commit(event: TaskEvent): Promise<Commit> {
    let result: Commit;
    try {
      result = await this.#writer.commit(event, undefined);
    } catch (error) {
      throw writeFailure(error, this.taskId, this.#deps.logger, 'the task store failed a task publisher write');
    }
    if (result.kind === 'committed') {
      const { event: stored, task, version } = result;
      void announceCommit(this.#deps, { key: this.#key, scope: this.#scope, taskId: this.taskId, event: stored, task, version });
    }
    return result;
  }
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
