/**
 * One task's live execution in this process: its turns (one per incoming message, run in order),
 * the chain that folds, stores and fans out what they publish, and its cancel. It is the only
 * writer of its task here; every write is compare-and-set on the version it last read or wrote,
 * so a write by another request or process is detected (then re-read and decided again), never
 * overwritten. It exists only while a turn or a cancel runs, then tells its registry it is idle.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Logger } from '../logger.js';
import { A2AError, taskNotFound } from '../errors.js';
import type { Message, StreamResponse, Task } from '../protocol/schemas.js';
import type { AgentExecutor, CancelContext, ExecutionContext } from './executor.js';
import type { TaskScope, TaskStore, VersionedTask } from './seams/task-store.js';
import { TaskWriter, writeFailure, type Commit } from './task-writer.js';
import type { TaskEventBus } from './seams/task-event-bus.js';
import type { TaskLease, TaskLeases } from './seams/task-leases.js';
import { TaskEvents, type EventSink, type HandOff } from './task-events.js';
import { announceCommit } from './announce.js';
import { InvalidAgentEventError } from './agent-event-error.js';
import type { TaskEvent } from './task-reducer.js';
import type { EngineEvents } from './engine-events.js';
import { CancelPublisher, Turn, type Publisher, type TurnOutcome, type TurnRequest } from './turn.js';
import { CANCELED_TEXT, GENERIC_FAILURE_TEXT, endsTurn, engineStatus, isInterrupted, isTerminal, now } from './task-state.js';

export interface ExecutionDeps {
  readonly store: TaskStore;
  readonly bus: TaskEventBus;
  readonly executor: AgentExecutor;
  readonly logger: Logger;
  /** Metrics and lifecycle hooks (guarded by combineEngineEvents). */
  readonly events?: EngineEvents;
  /** A turn not ended after this long is failed; 0: no deadline. */
  readonly turnTimeoutMs: number;
  /** Per-task leases when several replicas share the store; undefined for one process. */
  readonly leases?: TaskLeases;
  /** How long a turn waits for a lease another replica holds. */
  readonly leaseWaitMs: number;
  /** Called once the execution holds nothing live: the registry forgets it. */
  readonly onIdle: (execution: Execution) => void;
}

/** What a cancel() hook is told, less what the execution fills in. */
export type CancelRequest = Omit<CancelContext, 'task' | 'running'>;

interface QueuedTurn {
  readonly turn: Turn;
  /** The carrying request's AsyncLocalStorage snapshot, taken when the message was queued. */
  readonly runInRequestContext: <R>(fn: () => R) => R;
}

const GRACE_OVER = Symbol('grace over');
const SHUTDOWN_TEXT = 'The server shut down before the agent finished this task.';
const BUSY_ELSEWHERE = (taskId: string): A2AError =>
  new A2AError('UnsupportedOperation', `Task ${taskId} is processing another message; send this one when it asks for input`);

/** What a message gets while the server shuts down. */
export const shuttingDown = (): A2AError => new A2AError('Unavailable', 'This agent is shutting down; send the message again later');
const noop = (): void => {};
const RESOLVED: Promise<void> = Promise.resolve();

/**
 * The agent's own copy of the task (it may mutate it freely). A JSON round trip: tasks are JSON data,
 * it is what stores keep and clients see, and V8 does it faster than structuredClone.
 */
const copyOf = (task: Task): Task => JSON.parse(JSON.stringify(task)) as Task;

export class Execution {
  readonly key: string;
  readonly scope: TaskScope;
  readonly taskId: string;
  readonly contextId: string;
  readonly #deps: ExecutionDeps;
  readonly #writer: TaskWriter;
  #current: Turn | undefined;
  #pending: QueuedTurn[] = [];
  /** Serialises folding and writing so that store writes and fan-out keep generation order. */
  #tail: Promise<unknown> | undefined;
  #cancel: Promise<Task> | undefined;
  #cancelling = false;
  #stopCancelListener: (() => void) | undefined;
  /** The task's lease while this execution is live (only with several replicas). */
  #lease: TaskLease | undefined;
  /** Ends the bus subscription through which a handed-off turn follows its task. */
  #stopFollowing: (() => void) | undefined;

  constructor(deps: ExecutionDeps, key: string, scope: TaskScope, taskId: string, contextId: string, stored?: VersionedTask) {
    this.#deps = deps;
    this.key = key;
    this.scope = scope;
    this.taskId = taskId;
    this.contextId = contextId;
    this.#writer = new TaskWriter(deps.store, scope, taskId, contextId, stored);
  }

  /** Observers of the running turn and of queued ones. */
  get observerCount(): number {
    let count = this.#current?.observer ? 1 : 0;
    for (const { turn } of this.#pending) if (turn.observer) count++;
    return count;
  }

  /** Runs `request` now, or after the turns and cancel already under way (in its own request context). */
  submit(request: TurnRequest): Turn {
    const turn = new Turn(request);
    if (this.#current === undefined && this.#pending.length === 0 && !this.#cancelling) {
      void this.#runTurn(turn);
    } else {
      this.#pending.push({ turn, runInRequestContext: AsyncLocalStorage.snapshot() });
    }
    return turn;
  }

  /**
   * Cancels the task, in the caller's async context (the CancelTask request): executor.cancel()
   * (bounded by the grace period), then the AbortSignal, then CANCELED written by the engine unless
   * the task reached a terminal state meanwhile. Resolves with the CANCELED task; rejects with
   * TaskNotCancelable when another terminal state won. Concurrent calls share one run.
   */
  cancel(request: CancelRequest, graceMs: number): Promise<Task> {
    if (!this.#cancel) {
      const run = this.#runCancel(request, graceMs);
      this.#cancel = run;
      const hook = this.#deps.events?.cancelAnswered;
      if (hook) {
        const report = (outcome: 'canceled' | 'not-cancelable' | 'error') => hook({ taskId: this.taskId, tenant: this.scope.tenant, outcome });
        run.then(
          () => report('canceled'),
          (error: unknown) => report(error instanceof A2AError && error.kind === 'TaskNotCancelable' ? 'not-cancelable' : 'error'),
        );
      }
      // A failed run (store unavailable) may be tried again by the next CancelTask.
      run.catch(() => {
        if (this.#cancel === run) this.#cancel = undefined;
      });
    }
    return this.#cancel;
  }

  async #runCancel(request: CancelRequest, graceMs: number): Promise<Task> {
    this.#cancelling = true;
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<typeof GRACE_OVER>((resolve) => {
      timer = setTimeout(resolve, graceMs, GRACE_OVER);
      timer.unref(); // a pending cancel must not keep the process alive
    });
    const publisher = new CancelPublisher();
    try {
      // Writes already under way land first: the decision is made on the task as it now stands.
      await this.#enqueue(noop);
      const turn = this.#current;
      // Nothing runs here, or the work was handed off (a worker writes on its own): decide on a
      // fresh copy, not on one read before this request's awaits.
      if (!turn || turn.handedOff) await this.#reload();
      const task = this.#writer.task;
      if (!task) throw taskNotFound(this.taskId);
      if (isTerminal(task.status.state)) return this.#cancelAnswer(task);
      const { executor, logger } = this.#deps;
      if (executor.cancel) {
        const events = new TaskEvents(this.#sinkFor(publisher));
        try {
          const hook = Promise.resolve(executor.cancel({ ...request, task: copyOf(task), running: turn !== undefined }, events));
          if ((await Promise.race([hook, graceOver])) === GRACE_OVER) {
            hook.catch(noop);
            logger.warn({ taskId: this.taskId, graceMs }, 'executor.cancel() did not finish within the grace period');
          }
        } catch (error) {
          logger.error({ err: error, taskId: this.taskId }, 'executor.cancel() threw; the task is canceled anyway');
        }
      }
      if (turn) {
        this.#abortTurn(turn);
        if (!turn.closed) await Promise.race([turn.whenSettled(), graceOver]);
      } else {
        // A turn of this task may run in another process: ask it to stop.
        this.#deps.bus.requestCancel(this.key);
      }
      await this.#enqueue(() => this.#commitCanceled());
      return this.#cancelAnswer(this.#writer.task!);
    } finally {
      publisher.closed = true;
      clearTimeout(timer);
      this.#cancelling = false;
      this.#afterTurn();
    }
  }

  /** CANCELED answers the CancelTask; any other end means something else won the race. */
  #cancelAnswer(task: Task): Task {
    const state = task.status.state;
    if (state === 'TASK_STATE_CANCELED') return task;
    if (isTerminal(state)) {
      throw new A2AError('TaskNotCancelable', `Task ${task.id} is in ${state} and cannot be canceled`, { metadata: { taskId: task.id } });
    }
    // Not terminal after the write: the store failed and the engine could not settle it.
    throw new A2AError('Unavailable', `Task ${task.id} could not be canceled now; try again`);
  }

  #commitCanceled(): Promise<void> {
    const task = this.#writer.task;
    if (task && isTerminal(task.status.state)) return RESOLVED;
    return this.#commitEngineStatus('TASK_STATE_CANCELED', CANCELED_TEXT);
  }

  async #runTurn(turn: Turn): Promise<void> {
    this.#current = turn;
    const request = turn.request;
    let before: Task | undefined;
    try {
      if (this.#deps.leases && !this.#lease && !(await this.#takeLease(turn))) return;
      if (this.#writer.task) {
        this.#listenForCancel();
        // A follow-up: its message joins the history (a versioned write) before the agent sees the task.
        const joined = await this.#enqueue(() => this.#joinHistory(turn));
        if (!joined) return;
        before = joined;
      }
      const timeoutMs = this.#deps.turnTimeoutMs;
      if (timeoutMs > 0) turn.setDeadline(timeoutMs, () => this.#timedOut(turn, timeoutMs));
      const events = this.#deps.events;
      if (events) {
        turn.startedAt = performance.now();
        events.turnStarted?.({ taskId: this.taskId, tenant: this.scope.tenant, followUp: before !== undefined });
      }
      const context: ExecutionContext = {
        ...request.context,
        userMessage: request.message,
        task: before ? copyOf(before) : undefined,
        get signal() {
          return turn.signal;
        },
      };
      await this.#deps.executor.execute(context, new TaskEvents(this.#sinkFor(turn)));
    } catch (error) {
      if (!turn.closed && !turn.canceled) this.#deps.logger.error({ err: error, taskId: this.taskId }, 'execute() threw; the task is failed');
      turn.settle();
      if (!turn.closed) await this.#enqueue(() => this.#endUnfinished(turn, false));
      return;
    }
    turn.settle();
    // Drain what execute() published without awaiting (nothing to wait for once the turn is over).
    if (!turn.closed && this.#tail) await this.#tail.catch(noop);
    // Handed off: the turn ends when the task parks or finishes, whoever writes that.
    if (!turn.closed && !turn.handedOff) await this.#enqueue(() => this.#endUnfinished(turn, true));
  }

  /**
   * Several replicas: takes the task's lease before its first turn here (waiting while a turn runs
   * on another replica), held until this execution goes idle. A follow-up then decides on the task
   * as stored now: the copy it was built from was read before the wait. False: the turn was ended.
   */
  async #takeLease(turn: Turn): Promise<boolean> {
    const { leases, leaseWaitMs } = this.#deps;
    let lease: TaskLease | undefined;
    try {
      lease = await leases!.acquire(this.key, { scope: this.scope, taskId: this.taskId }, leaseWaitMs);
    } catch (error) {
      this.#deps.logger.error({ err: error, taskId: this.taskId }, 'the task lease store failed');
      this.#endTurn(turn, { kind: 'error', error: new A2AError('Unavailable') });
      return false;
    }
    if (!lease) {
      this.#endTurn(turn, { kind: 'error', error: BUSY_ELSEWHERE(this.taskId) });
      return false;
    }
    this.#lease = lease;
    if (!this.#writer.task) return true;
    try {
      await this.#reload();
    } catch (error) {
      this.#endTurn(turn, { kind: 'error', error: this.#asClientError(error) });
      return false;
    }
    const state = this.#writer.task.status.state;
    // Still mid-turn although the lease is free: the replica running it died (its lease expired);
    // the sweep settles it. Parked or finished: #joinHistory decides.
    if (!isInterrupted(state) && !isTerminal(state)) {
      this.#endTurn(turn, { kind: 'error', error: BUSY_ELSEWHERE(this.taskId) });
      return false;
    }
    return true;
  }

  /**
   * The task's turn died with the process that ran it (restart, or an expired lease): FAILED with
   * `text`, unless it is parked or finished by now. With leases, only while holding the task's
   * lease, so a turn another replica has taken over since is never touched.
   */
  async settleOrphan(text: string): Promise<void> {
    // Only a fresh execution settles (the handler makes one when none is live here).
    if (this.#current || this.#cancelling || this.#lease || this.#pending.length > 0) return;
    this.#cancelling = true; // nothing else starts meanwhile
    try {
      if (this.#deps.leases) {
        this.#lease = await this.#deps.leases.acquire(this.key, { scope: this.scope, taskId: this.taskId }, 0);
        if (!this.#lease) return;
      }
      await this.#reload();
      const state = this.#writer.task!.status.state;
      if (isTerminal(state) || isInterrupted(state)) return;
      this.#deps.logger.warn({ taskId: this.taskId }, 'a task was left mid-turn by a process that stopped; it is failed');
      await this.#enqueue(() => this.#commitEngineStatus('TASK_STATE_FAILED', text));
    } finally {
      this.#cancelling = false;
      this.#afterTurn();
    }
  }

  /** The turn's deadline passed: its signal fires and the task is FAILED with the reason. */
  #timedOut(turn: Turn, timeoutMs: number): void {
    if (turn.closed || this.#cancelling) return;
    this.#deps.logger.warn({ taskId: this.taskId, turnTimeoutMs: timeoutMs }, 'a turn did not end within turnTimeoutMs; the task is failed');
    this.#abortTurn(turn);
    const text = `The agent did not finish within ${timeoutMs} ms.`;
    void this.#enqueue(() => (turn.closed ? undefined : this.#commitEngineStatus('TASK_STATE_FAILED', text))).catch(noop);
  }

  /**
   * Server shutdown: queued turns are refused, the running turn is aborted and its task FAILED with
   * the reason (one process owns its turns; nothing else would ever finish them). Resolves once written.
   */
  shutdown(): Promise<void> {
    const refused = this.#pending;
    this.#pending = [];
    for (const { turn } of refused) turn.end({ kind: 'error', error: shuttingDown() });
    const turn = this.#current;
    if (!turn) return RESOLVED;
    this.#abortTurn(turn);
    return this.#enqueue(() => (turn.closed ? undefined : this.#commitEngineStatus('TASK_STATE_FAILED', SHUTDOWN_TEXT))).then(noop, noop);
  }

  /** execute() settled without ending its turn. */
  async #endUnfinished(turn: Turn, returned: boolean): Promise<void> {
    if (turn.closed) return;
    if (turn.canceled) {
      // The CancelTask in progress writes CANCELED in its own request's context; a cancel asked by
      // another process is settled here.
      if (!this.#cancelling) await this.#commitEngineStatus('TASK_STATE_CANCELED', CANCELED_TEXT).catch(noop);
      return;
    }
    if (returned) {
      this.#deps.logger.error(
        { taskId: this.taskId },
        'execute() returned before publishing a reply, an interrupted or a terminal state; the task is failed',
      );
    }
    await this.#commitEngineStatus('TASK_STATE_FAILED', GENERIC_FAILURE_TEXT).catch(noop);
  }

  /** Appends the follow-up's message; resolves with the task before it, or undefined when the turn was refused. */
  async #joinHistory(turn: Turn): Promise<Task | undefined> {
    let result: Commit;
    try {
      // After a conflict the task was changed elsewhere: run only if it is still waiting for input.
      result = await this.#commit({ userMessage: turn.request.message }, (fresh) =>
        isInterrupted(fresh.status.state) || isTerminal(fresh.status.state)
          ? undefined
          : new A2AError('UnsupportedOperation', `Task ${this.taskId} is processing another message; send this one when it asks for input`),
      );
    } catch (error) {
      this.#endTurn(turn, { kind: 'error', error: this.#asClientError(error) });
      return undefined;
    }
    if (result.kind !== 'committed') {
      const state = result.kind === 'ended' ? result.task.status.state : 'its current state';
      const error = new A2AError('UnsupportedOperation', `Task ${this.taskId} is in ${state} and accepts no more messages`);
      this.#endTurn(turn, { kind: 'error', error });
      return undefined;
    }
    turn.notify(result.event, result.version);
    return result.previous;
  }

  #sinkFor(publisher: Publisher): EventSink {
    return {
      taskId: this.taskId,
      contextId: this.contextId,
      accept: (event) => {
        const applied = this.#enqueue(() => this.#apply(publisher, event));
        // An agent that does not await publish() must not crash the process with an unhandled
        // rejection; awaiting callers still see the error. Refusals are logged in #apply.
        applied.catch(noop);
        return applied;
      },
      handOff: () => {
        const handed = this.#enqueue(() => this.#handOff(publisher));
        handed.catch(noop);
        return handed;
      },
    };
  }

  /**
   * execute() hands the rest of its turn off: the turn stays open after it returns, and its
   * observer follows the bus from now on, where a publisher in any process announces what it
   * writes. A task not created yet is created in WORKING first, so there is one to publish into.
   */
  async #handOff(publisher: Publisher): Promise<HandOff> {
    const turn = this.#current;
    if (publisher !== turn || turn.closed) {
      throw new InvalidAgentEventError(publisher.closed ? `the turn of task ${this.taskId} is over; there is nothing to hand off` : 'only execute() can hand its turn off');
    }
    if (!turn.handedOff) {
      if (!this.#writer.task) {
        const status = { state: 'TASK_STATE_WORKING' as const, timestamp: now() };
        await this.#applyTaskEvent({ statusUpdate: { taskId: this.taskId, contextId: this.contextId, status } });
        if (turn.closed) throw new InvalidAgentEventError(`the turn of task ${this.taskId} is over; there is nothing to hand off`);
      }
      turn.handedOff = true;
      this.#follow(turn);
    }
    return { taskId: this.taskId, contextId: this.contextId, scope: { tenant: this.scope.tenant, owner: this.scope.owner } };
  }

  /**
   * The handed-off turn's observer hears the task's committed events from the bus (one ordered
   * source, whichever process wrote them); the event that parks or finishes the task ends the turn.
   */
  #follow(turn: Turn): void {
    let seen = this.#writer.version ?? 0; // what the observer was told directly before the hand-off
    this.#stopFollowing = this.#deps.bus.subscribe(this.key, (committed) => {
      if (turn.closed || committed.version <= seen) return;
      seen = committed.version;
      turn.notify(committed.event, committed.version);
      if (endsTurn(committed.task.status.state)) this.#endTurn(turn, { kind: 'task', task: committed.task });
    });
  }

  /** Aborts the turn; handed-off work is told through the bus (its publisher may be in another process). */
  #abortTurn(turn: Turn): void {
    turn.cancel();
    if (turn.handedOff) this.#deps.bus.requestCancel(this.key);
  }

  /** Runs `step` after every step queued before it (failed ones too), in the caller's async context. */
  #enqueue<T>(step: () => T | Promise<T>): Promise<T> {
    const result = (this.#tail ?? RESOLVED).then(step, step);
    this.#tail = result;
    return result;
  }

  /** Checks, stores and fans out one agent event (a Message reply needs no store: synchronous). */
  #apply(publisher: Publisher, event: StreamResponse): void | Promise<void> {
    if (publisher.closed) {
      const state = this.#writer.task?.status.state;
      this.#deps.logger.warn({ taskId: this.taskId }, 'an event published after the end of its turn was refused');
      throw new InvalidAgentEventError(
        `task ${this.taskId} is ${state ? `in ${state}` : 'answered'}; this turn is over and its later events are refused`,
      );
    }
    if ('message' in event) {
      try {
        return this.#applyMessage(publisher, event.message);
      } catch (error) {
        return this.#refuse(error);
      }
    }
    return this.#applyTaskEvent(event as TaskEvent);
  }

  #applyMessage(publisher: Publisher, message: Message): void {
    if (this.#writer.task) {
      throw new InvalidAgentEventError('a Message cannot be published once the task exists; use a status message instead');
    }
    if (publisher !== this.#current) throw new InvalidAgentEventError('only execute() may answer with a Message');
    if (message.taskId) throw new InvalidAgentEventError('a direct Message reply has no task; leave taskId empty');
    const reply: Message = { ...message, role: 'ROLE_AGENT', contextId: this.contextId };
    this.#current.notify({ message: reply });
    this.#endTurn(this.#current, { kind: 'message', message: reply });
  }

  async #applyTaskEvent(event: TaskEvent): Promise<void> {
    let result: Commit;
    try {
      result = await this.#commit(event);
    } catch (error) {
      // The store failed: the publisher hears it; the turn goes on (its end decides what follows).
      throw this.#asClientError(error);
    }
    if (result.kind === 'refused') return this.#refuse(new InvalidAgentEventError(result.reason));
    if (result.kind === 'ended') {
      this.#endedElsewhere(result.task);
      throw new InvalidAgentEventError(`task ${this.taskId} was ended (${result.task.status.state}) by another request; the event was refused`);
    }
    this.#fanOut(result);
  }

  /** An invalid event fails the task cleanly; the error goes back to the publisher either way. */
  async #refuse(error: unknown): Promise<never> {
    if (error instanceof InvalidAgentEventError) {
      this.#deps.logger.error({ err: error, taskId: this.taskId }, 'the agent published an invalid event; the task is failed');
      await this.#commitEngineStatus('TASK_STATE_FAILED', GENERIC_FAILURE_TEXT).catch(noop);
    }
    throw error;
  }

  /** Writes `event` (see TaskWriter); the first write of the task also starts listening for remote cancels. */
  async #commit(event: TaskEvent, recheck?: (fresh: Task) => A2AError | undefined): Promise<Commit> {
    const created = this.#writer.task === undefined;
    const result = await this.#writer.commit(event, this.#current?.request.message, recheck);
    if (created && result.kind === 'committed') this.#listenForCancel();
    return result;
  }

  /** Reads the task as stored now; store failures become what the client hears. */
  async #reload(): Promise<void> {
    try {
      await this.#writer.reload();
    } catch (error) {
      throw this.#asClientError(error);
    }
  }

  /** What a client hears of a store failure (logged, never sent as such). */
  #asClientError(error: unknown): A2AError {
    return writeFailure(error, this.taskId, this.#deps.logger);
  }

  /**
   * An event is stored: the turn's observer and the bus's subscribers see it; it may end the turn.
   * A handed-off turn hears it from the bus like every other writer's events.
   */
  #fanOut(commit: Extract<Commit, { kind: 'committed' }>): void {
    const turn = this.#current;
    const direct = turn !== undefined && !turn.handedOff;
    if (direct) turn.notify(commit.event, commit.version);
    const { event, task, version } = commit;
    const published = announceCommit(this.#deps, { key: this.key, scope: this.scope, taskId: this.taskId, event, task, version });
    if (turn && endsTurn(task.status.state)) {
      if (direct) this.#endTurn(turn, { kind: 'task', task });
      // The bus lost this process's own final event: the handed-off turn ends anyway.
      else if (published) published.catch(() => (turn.closed ? undefined : this.#endTurn(turn, { kind: 'task', task })));
    }
  }

  /** Another request or process ended the task: the running turn ends with the task as stored. */
  #endedElsewhere(task: Task): void {
    const turn = this.#current;
    if (!turn) return;
    turn.notify({ statusUpdate: { taskId: this.taskId, contextId: this.contextId, status: task.status } });
    turn.cancel();
    this.#endTurn(turn, { kind: 'task', task });
  }

  /** FAILED or CANCELED written by the engine itself; ends the running turn whatever happens. */
  async #commitEngineStatus(state: 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED', text: string): Promise<void> {
    const status = engineStatus(state, { id: this.taskId, contextId: this.contextId }, text);
    let result: Commit;
    try {
      result = await this.#commit({ statusUpdate: { taskId: this.taskId, contextId: this.contextId, status } });
    } catch (error) {
      const clientError = this.#asClientError(error);
      this.#deps.logger.error({ err: error, taskId: this.taskId }, `could not store ${state}`);
      if (this.#current) this.#endTurn(this.#current, { kind: 'error', error: clientError });
      throw clientError;
    }
    if (result.kind === 'committed') this.#fanOut(result);
    else if (result.kind === 'ended') this.#endedElsewhere(result.task);
  }

  /** A cancel asked of this process by another (through the bus) aborts the running turn. */
  #listenForCancel(): void {
    this.#stopCancelListener ??= this.#deps.bus.onCancelRequest(this.key, () => this.#current?.cancel());
  }

  #endTurn(turn: Turn, outcome: TurnOutcome): void {
    if (this.#current === turn) this.#current = undefined;
    if (turn.handedOff) {
      this.#stopFollowing?.();
      this.#stopFollowing = undefined;
    }
    turn.end(outcome);
    const ended = this.#deps.events?.turnEnded;
    if (ended && turn.startedAt !== undefined) {
      const state = outcome.kind === 'task' ? outcome.task.status.state : outcome.kind;
      ended({ taskId: this.taskId, tenant: this.scope.tenant, outcome: state, durationMs: performance.now() - turn.startedAt });
    }
    this.#afterTurn();
  }

  /** Starts the next queued turn, or refuses the queue when the task is finished, then goes idle. */
  #afterTurn(): void {
    // A cancel in progress decides what follows (it may still have to write CANCELED).
    if (this.#current || this.#cancelling) return;
    const task = this.#writer.task;
    if (task && !isTerminal(task.status.state) && this.#pending.length > 0) {
      const next = this.#pending.shift()!;
      next.runInRequestContext(() => void this.#runTurn(next.turn));
      return;
    }
    const refused = this.#pending;
    this.#pending = [];
    for (const { turn } of refused) {
      const error = new A2AError('UnsupportedOperation', `Task ${this.taskId} is in a terminal state and accepts no more messages`);
      turn.end({ kind: 'error', error });
    }
    this.#stopCancelListener?.();
    this.#stopCancelListener = undefined;
    const lease = this.#lease;
    if (lease) {
      this.#lease = undefined;
      lease.release().catch((error: unknown) => this.#deps.logger.warn({ err: error, taskId: this.taskId }, 'could not release the task lease; it expires'));
    }
    this.#deps.onIdle(this);
  }
}
