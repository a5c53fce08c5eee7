/**
 * One task's live execution: the turns (one per incoming message, run in order), the event chain
 * that checks, stores and fans out what the agent publishes, and cancellation.
 * It exists only while a turn runs; when the task is parked or finished it tells its registry it is
 * idle and keeps nothing else alive (no timer, listener or queue).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '../logger.js';
import { A2AError } from '../errors.js';
import type {
  Message,
  StreamResponse,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatus,
  TaskStatusUpdateEvent,
} from '../protocol/schemas.js';
import type { AgentExecutor, CancelContext, ExecutionContext } from './executor.js';
import type { TaskScope, TaskStore } from './stores/task-store.js';
import { TaskEvents, type EventSink } from './task-events.js';
import { InvalidAgentEventError } from './agent-event-error.js';
import {
  CANCELED_TEXT,
  GENERIC_FAILURE_TEXT,
  canTransition,
  endsTurn,
  engineStatus,
  isTerminal,
  now,
} from './task-state.js';

/** How a turn ended, as seen by whoever waits on it. */
export type TurnOutcome =
  | { readonly kind: 'message'; readonly message: Message }
  | { readonly kind: 'task'; readonly task: Task }
  | { readonly kind: 'error'; readonly error: A2AError };

/** Follows a task's committed events (a blocking send, an SSE stream, a subscriber). */
export interface ExecutionObserver {
  /** An event, after it was stored; in generation order. */
  onEvent(event: StreamResponse): void;
  /** The turn is over: parked, finished, replied to, or refused. Called once. */
  onEnd(outcome: TurnOutcome): void;
}

/** What a message brings to its turn. */
export interface TurnRequest {
  /** The incoming message with taskId/contextId filled in. */
  readonly message: Message;
  readonly context: Omit<ExecutionContext, 'task' | 'signal' | 'userMessage'>;
  readonly observer?: ExecutionObserver;
}

/** One message's turn. Its AbortSignal and its `done` promise are made only when someone asks. */
class Turn {
  ended = false;
  /** Set by a cancel; the signal (made now or later) is aborted. */
  canceled = false;
  #abort: AbortController | undefined;
  #done: Promise<void> | undefined;
  #markDone: (() => void) | undefined;

  /** `request` is undefined for the synthetic turn of a cancel on a parked task. */
  constructor(readonly request: TurnRequest | undefined) {}

  get signal(): AbortSignal {
    if (!this.#abort) {
      this.#abort = new AbortController();
      if (this.canceled) this.#abort.abort(new Error('task canceled'));
    }
    return this.#abort.signal;
  }

  cancel(): void {
    this.canceled = true;
    this.#abort?.abort(new Error('task canceled'));
  }

  /** Resolves when the turn ends. */
  get done(): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.#done ??= new Promise<void>((resolve) => (this.#markDone = resolve));
    return this.#done;
  }

  end(): void {
    this.ended = true;
    this.#markDone?.();
  }
}

interface QueuedTurn {
  readonly turn: Turn;
  /** The carrying request's AsyncLocalStorage snapshot, taken when the message was queued. */
  readonly runInRequestContext: <R>(fn: () => R) => R;
}

export interface ExecutionDeps {
  readonly store: TaskStore;
  readonly executor: AgentExecutor;
  readonly logger: Logger;
  /** Called once the execution holds nothing live: the registry forgets it. */
  readonly onIdle: (execution: Execution) => void;
}

const noop = (): void => {};
const RESOLVED: Promise<void> = Promise.resolve();

/**
 * The agent's own copy of the task (it may mutate it freely). A JSON round trip: tasks are JSON data,
 * it is what stores keep and clients see, and V8 does it faster than structuredClone.
 */
const copyOf = (task: Task): Task => JSON.parse(JSON.stringify(task)) as Task;

/** Already in the stored form (what now() and the TaskEvents helpers produce): nothing to convert. */
const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** An RFC 3339 timestamp as `YYYY-MM-DDTHH:mm:ss.sssZ`; now when absent. */
const utc = (timestamp: string | undefined): string =>
  !timestamp ? now() : CANONICAL_UTC.test(timestamp) ? timestamp : new Date(timestamp).toISOString();

export class Execution {
  readonly taskId: string;
  readonly contextId: string;
  readonly scope: TaskScope;
  readonly #deps: ExecutionDeps;
  /** Latest committed task (undefined until the agent creates it). Never mutated, only replaced. */
  #task: Task | undefined;
  #current: Turn | undefined;
  #pending: QueuedTurn[] = [];
  readonly #observers = new Set<ExecutionObserver>();
  /** Serialises event handling so that store writes and fan-out keep generation order (undefined until the first step). */
  #tail: Promise<void> | undefined;
  #cancel: Promise<Task | undefined> | undefined;

  constructor(deps: ExecutionDeps, scope: TaskScope, taskId: string, contextId: string, task?: Task) {
    this.#deps = deps;
    this.scope = scope;
    this.taskId = taskId;
    this.contextId = contextId;
    this.#task = task;
  }

  get task(): Task | undefined {
    return this.#task;
  }

  /** Whether a message's turn (not only a cancel) is under way. */
  get running(): boolean {
    return this.#current?.request !== undefined;
  }

  /** Observers attached now, plus those of queued turns waiting to start. */
  get observerCount(): number {
    let queued = 0;
    for (const { turn } of this.#pending) if (turn.request?.observer) queued++;
    return this.#observers.size + queued;
  }

  /** Runs `request` now, or after the turns already queued (in its own request context). */
  submit(request: TurnRequest): void {
    const turn = new Turn(request);
    if (this.#current === undefined && this.#pending.length === 0) {
      void this.#runTurn(turn);
      return;
    }
    this.#pending.push({ turn, runInRequestContext: AsyncLocalStorage.snapshot() });
  }

  /** Attaches a subscriber: it first sees the current task, then every later event of this turn. */
  subscribe(observer: ExecutionObserver): () => void {
    if (this.#task) observer.onEvent({ task: this.#task });
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** Stops following (client went away); the task goes on. */
  unsubscribe(observer: ExecutionObserver): void {
    this.#observers.delete(observer);
  }

  /**
   * Cancels the task: executor.cancel() (bounded by the grace period), then the AbortSignal, then,
   * if the task is still not terminal when the grace period ends, CANCELED written by the engine.
   * Runs in the caller's async context (the CancelTask request). Concurrent calls share one run.
   */
  cancel(context: Omit<CancelContext, 'task' | 'running'>, graceMs: number): Promise<Task | undefined> {
    this.#cancel ??= this.#runCancel(context, graceMs);
    return this.#cancel;
  }

  async #runCancel(context: Omit<CancelContext, 'task' | 'running'>, graceMs: number): Promise<Task | undefined> {
    const running = this.running;
    const turn = this.#current ?? (this.#current = new Turn(undefined));
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace-over'>((resolve) => {
      timer = setTimeout(resolve, graceMs, 'grace-over');
      timer.unref(); // a pending cancel must not keep the process alive
    });
    try {
      const { executor, logger } = this.#deps;
      if (executor.cancel && this.#task) {
        const events = new TaskEvents(this.#sinkFor(turn));
        try {
          const hook = Promise.resolve(executor.cancel({ ...context, task: copyOf(this.#task), running }, events));
          if ((await Promise.race([hook, graceOver])) === 'grace-over') {
            hook.catch(noop);
            logger.warn({ taskId: this.taskId, graceMs }, 'executor.cancel() did not finish within the grace period');
          }
        } catch (error) {
          logger.error({ err: error, taskId: this.taskId }, 'executor.cancel() threw; the task is canceled anyway');
        }
      }
      turn.cancel();
      // Only a running execute() can still end its turn; a parked task has nothing to wait for.
      if (running && !turn.ended) await Promise.race([turn.done, graceOver]);
      if (!this.#task || !isTerminal(this.#task.status.state)) {
        const target = this.#current ?? (this.#current = new Turn(undefined));
        await this.#enqueue(() => this.#commitEngineStatus(target, 'TASK_STATE_CANCELED', CANCELED_TEXT));
      }
    } finally {
      clearTimeout(timer);
    }
    return this.#task;
  }

  async #runTurn(turn: Turn): Promise<void> {
    const request = turn.request!;
    this.#current = turn;
    if (request.observer) this.#observers.add(request.observer);
    const previous = this.#task;
    try {
      if (previous) {
        // A follow-up: its message joins the history before the agent sees it, and the new
        // observer starts from the task as it now stands.
        await this.#enqueue(async () => {
          const next: Task = { ...previous, history: [...(previous.history ?? []), request.message] };
          await this.#deps.store.update(this.scope, next);
          this.#task = next;
          request.observer?.onEvent({ task: next });
        });
      }
      const context: ExecutionContext = {
        ...request.context,
        userMessage: request.message,
        task: previous ? copyOf(previous) : undefined,
        get signal() {
          return turn.signal;
        },
      };
      await this.#deps.executor.execute(context, new TaskEvents(this.#sinkFor(turn)));
    } catch (error) {
      if (!turn.ended) {
        const canceled = turn.canceled;
        if (!canceled) this.#deps.logger.error({ err: error, taskId: this.taskId }, 'execute() threw; the task is failed');
        await this.#enqueue(() => this.#endWithEngineStatus(turn, canceled));
      }
      return;
    }
    // Drain what execute() published without awaiting (nothing to wait for once the turn is over).
    if (!turn.ended && this.#tail) await this.#tail.catch(noop);
    if (!turn.ended) {
      const canceled = turn.canceled;
      if (!canceled) {
        this.#deps.logger.error(
          { taskId: this.taskId },
          'execute() returned before publishing a reply, an interrupted or a terminal state; the task is failed',
        );
      }
      await this.#enqueue(() => this.#endWithEngineStatus(turn, canceled));
    }
  }

  #endWithEngineStatus(turn: Turn, canceled: boolean): Promise<void> {
    return canceled
      ? this.#commitEngineStatus(turn, 'TASK_STATE_CANCELED', CANCELED_TEXT)
      : this.#commitEngineStatus(turn, 'TASK_STATE_FAILED', GENERIC_FAILURE_TEXT);
  }

  #sinkFor(turn: Turn): EventSink {
    return {
      taskId: this.taskId,
      contextId: this.contextId,
      accept: (event) => {
        if (this.#tail === undefined && 'message' in event) return this.#applyNow(turn, event);
        const applied = this.#enqueue(() => this.#apply(turn, event));
        // An agent that does not await publish() must not crash the process with an unhandled
        // rejection; awaiting callers still see the error. Refusals are logged in #apply.
        applied.catch(noop);
        return applied;
      },
    };
  }

  /**
   * A direct Message reply published before anything else was queued (the hot path): checked and
   * delivered now, in the publisher's call, without a promise. Steps queued meanwhile go after it.
   */
  #applyNow(turn: Turn, event: StreamResponse): Promise<void> {
    this.#tail = RESOLVED;
    let applied: void | Promise<void>;
    try {
      applied = this.#apply(turn, event);
    } catch (error) {
      const refused = Promise.reject(error);
      refused.catch(noop); // awaiting publishers still see it
      return refused;
    }
    if (applied === undefined) return RESOLVED;
    // Refused: the task is being failed; later steps wait for that.
    const settled = applied.then(noop, noop);
    const tail = this.#tail;
    this.#tail = tail === RESOLVED ? settled : tail.then(() => settled);
    return applied;
  }

  /** Runs `step` after every step queued before it (failed ones too), in the caller's async context. */
  #enqueue(step: () => void | Promise<void>): Promise<void> {
    const result = (this.#tail ?? RESOLVED).then(step, step);
    this.#tail = result;
    return result;
  }

  /** Checks, stores and fans out one event. Synchronous for a Message reply (the hot path). */
  #apply(turn: Turn, event: StreamResponse): void | Promise<void> {
    if (turn.ended) {
      const state = this.#task?.status.state;
      this.#deps.logger.warn({ taskId: this.taskId }, 'an event published after the end of its turn was refused');
      throw new InvalidAgentEventError(
        `task ${this.taskId} is ${state ? `in ${state}` : 'answered'}; this turn is over and its later events are refused`,
      );
    }
    if ('message' in event) {
      try {
        return this.#applyMessage(turn, event.message);
      } catch (error) {
        return this.#refuse(turn, error);
      }
    }
    const applying =
      'task' in event
        ? this.#applyTask(turn, event.task)
        : 'statusUpdate' in event
          ? this.#applyStatus(turn, event.statusUpdate)
          : this.#applyArtifact(turn, event.artifactUpdate);
    return applying.catch((error: unknown) => this.#refuse(turn, error));
  }

  /** An invalid event fails the task cleanly; the error goes back to the publisher either way. */
  async #refuse(turn: Turn, error: unknown): Promise<never> {
    if (error instanceof InvalidAgentEventError) {
      this.#deps.logger.error({ err: error, taskId: this.taskId }, 'the agent published an invalid event; the task is failed');
      await this.#commitEngineStatus(turn, 'TASK_STATE_FAILED', GENERIC_FAILURE_TEXT);
    }
    throw error;
  }

  #checkIds(taskId: string, contextId: string): void {
    if (taskId !== this.taskId) throw new InvalidAgentEventError(`event for task ${taskId} published on task ${this.taskId}`);
    if (contextId !== this.contextId) {
      throw new InvalidAgentEventError(`event with contextId ${contextId} published on a task of context ${this.contextId}`);
    }
  }

  #applyMessage(turn: Turn, message: Message): void {
    if (this.#task) {
      throw new InvalidAgentEventError('a Message cannot be published once the task exists; use a status message instead');
    }
    if (message.taskId) throw new InvalidAgentEventError('a direct Message reply has no task; leave taskId empty');
    const reply: Message = { ...message, role: 'ROLE_AGENT', contextId: this.contextId };
    this.#notify({ message: reply });
    this.#endTurn(turn, { kind: 'message', message: reply });
  }

  async #applyTask(turn: Turn, task: Task): Promise<void> {
    if (this.#task) throw new InvalidAgentEventError('a Task event may only create the task; publish status or artifact updates');
    this.#checkIds(task.id, task.contextId ?? '');
    const userMessage = turn.request?.message;
    const history = task.history ?? [];
    const created: Task = {
      ...task,
      status: { ...task.status, timestamp: utc(task.status.timestamp) },
      history: userMessage && !history.some((m) => m.messageId === userMessage.messageId) ? [userMessage, ...history] : history,
    };
    await this.#create(created);
    if (endsTurn(created.status.state)) this.#endTurn(turn, { kind: 'task', task: created });
  }

  async #applyStatus(turn: Turn, update: TaskStatusUpdateEvent): Promise<void> {
    const status = update.status;
    this.#checkIds(update.taskId, update.contextId);
    // Timestamps are stored as UTC with milliseconds, so that listing can compare them as text.
    const timestamp = utc(status.timestamp);
    const stamped: TaskStatus = timestamp === status.timestamp ? status : { ...status, timestamp };
    const current = this.#task;
    if (!current) {
      await this.#create({ id: this.taskId, contextId: this.contextId, status: stamped, history: this.#initialHistory(turn, stamped) });
    } else {
      if (!canTransition(current.status.state, stamped.state)) {
        throw new InvalidAgentEventError(`illegal transition ${current.status.state} -> ${stamped.state}`);
      }
      const next: Task = {
        ...current,
        status: stamped,
        history: stamped.message ? [...(current.history ?? []), stamped.message] : current.history,
      };
      await this.#deps.store.update(this.scope, next);
      this.#task = next;
      this.#notify({ statusUpdate: stamped === status ? update : { ...update, status: stamped } });
    }
    if (endsTurn(stamped.state)) this.#endTurn(turn, { kind: 'task', task: this.#task! });
  }

  async #applyArtifact(turn: Turn, update: TaskArtifactUpdateEvent): Promise<void> {
    this.#checkIds(update.taskId, update.contextId);
    if (update.artifact.parts.length === 0) throw new InvalidAgentEventError('an artifact needs at least one part');
    if (!this.#task) {
      const working: TaskStatus = { state: 'TASK_STATE_WORKING', timestamp: now() };
      await this.#create({ id: this.taskId, contextId: this.contextId, status: working, history: this.#initialHistory(turn, working) });
    }
    const current = this.#task!;
    const artifacts = [...(current.artifacts ?? [])];
    const index = artifacts.findIndex((a) => a.artifactId === update.artifact.artifactId);
    if (index < 0) artifacts.push(update.artifact);
    else if (update.append) {
      const existing = artifacts[index];
      artifacts[index] = { ...existing, ...update.artifact, parts: [...existing.parts, ...update.artifact.parts] };
    } else artifacts[index] = update.artifact;
    const next: Task = { ...current, artifacts };
    await this.#deps.store.update(this.scope, next);
    this.#task = next;
    this.#notify({ artifactUpdate: update });
  }

  #initialHistory(turn: Turn, status: TaskStatus): Message[] {
    const history: Message[] = turn.request ? [turn.request.message] : [];
    if (status.message) history.push(status.message);
    return history;
  }

  async #create(task: Task): Promise<void> {
    await this.#deps.store.create(this.scope, task);
    this.#task = task;
    this.#notify({ task });
  }

  /** FAILED or CANCELED written by the engine itself; ends the turn whatever happens. */
  async #commitEngineStatus(turn: Turn, state: 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED', text: string): Promise<void> {
    if (turn.ended && (!this.#task || isTerminal(this.#task.status.state))) return;
    try {
      const current = this.#task;
      const status = engineStatus(state, { id: this.taskId, contextId: this.contextId }, text);
      if (!current) {
        await this.#create({ id: this.taskId, contextId: this.contextId, status, history: this.#initialHistory(turn, status) });
      } else if (!isTerminal(current.status.state)) {
        const next: Task = { ...current, status, history: [...(current.history ?? []), status.message!] };
        await this.#deps.store.update(this.scope, next);
        this.#task = next;
        this.#notify({ statusUpdate: { taskId: this.taskId, contextId: this.contextId, status } });
      }
      if (!turn.ended) this.#endTurn(turn, { kind: 'task', task: this.#task! });
      else this.#afterTurn();
    } catch (error) {
      this.#deps.logger.error({ err: error, taskId: this.taskId }, `could not store ${state}`);
      if (!turn.ended) this.#endTurn(turn, { kind: 'error', error: new A2AError('Internal') });
      else this.#afterTurn();
    }
  }

  #notify(event: StreamResponse): void {
    for (const observer of this.#observers) observer.onEvent(event);
  }

  #endTurn(turn: Turn, outcome: TurnOutcome): void {
    turn.end();
    this.#current = undefined;
    for (const observer of this.#observers) observer.onEnd(outcome);
    this.#observers.clear();
    // A cancel in progress decides what follows (it may still have to write CANCELED).
    if (this.#cancel && outcome.kind === 'task' && !isTerminal(outcome.task.status.state)) return;
    this.#afterTurn();
  }

  /** Starts the next queued turn, or refuses the queue when the task is finished, then goes idle. */
  #afterTurn(): void {
    if (this.#current) return;
    const finished = !this.#task || isTerminal(this.#task.status.state);
    if (!finished && this.#pending.length > 0) {
      const next = this.#pending.shift()!;
      next.runInRequestContext(() => void this.#runTurn(next.turn));
      return;
    }
    const refused = this.#pending;
    this.#pending = [];
    for (const { turn } of refused) {
      const error = new A2AError('UnsupportedOperation', `Task ${this.taskId} is in a terminal state and accepts no more messages`);
      turn.request?.observer?.onEnd({ kind: 'error', error });
    }
    this.#deps.onIdle(this);
  }
}
