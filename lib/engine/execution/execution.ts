/**
 * One task's live execution in this process: it ties its turn queue, its task channel (the only
 * writer of the task here), its cancel and its replica guard. It exists only while a turn, a cancel
 * or an orphan settlement (failed, or resumed as a turn by executor.resume()) runs, then tells its
 * registry it is idle.
 */
import { A2AError, acceptsNoMoreMessages, shuttingDown } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { StreamResponse, Task } from '../../protocol/schemas.js';
import { tracedTurns, type EngineEvents } from '../engine-events.js';
import { runWithA2AContext } from '../../context/carrier.js';
import type { AgentExecutor, ExecutionContext, ResumeContext, ResumeReason } from '../executor.js';
import type { TaskScope, VersionedTask } from '../seams/task-store.js';
import { TaskEvents } from '../task-events.js';
import { CANCELED_TEXT, GENERIC_FAILURE_TEXT, endsTurn, isTerminal } from '../task-state.js';
import { copyOf, reportCancelAnswer, runCancel, type CancelDeps, type CancelRequest, type CancelTarget } from './cancel.js';
import { ReplicaGuard, type ReplicaGuardDeps } from './replica-guard.js';
import { TaskChannel, type ChannelDeps, type ChannelListener, type ChannelWording } from './task-channel.js';
import { TurnQueue } from './turn-queue.js';
import { LiveSink, joinHistory, type LiveTask } from './live-sink.js';
import { resumeRequest } from './resume-request.js';
import type { Turn, TurnOutcome } from './turn.js';

export type { CancelRequest } from './cancel.js';

export interface ExecutionDeps extends ChannelDeps, ReplicaGuardDeps, CancelDeps {
  readonly executor: AgentExecutor;
  readonly logger: Logger;
  /** Metrics and lifecycle hooks (guarded by combineEngineEvents). */
  readonly events?: EngineEvents;
  /** A turn not ended after this long is failed; 0: no deadline. */
  readonly turnTimeoutMs: number;
  /** Called once the execution holds nothing live: the registry forgets it. */
  readonly onIdle: (execution: Execution) => void;
}

const WORDING: ChannelWording = { refused: 'the agent published an invalid event; the task is failed', endedBy: 'by another request' };
const SHUTDOWN_TEXT = 'The server shut down before the agent finished this task.';
const noop = (): void => {};
const RESOLVED: Promise<void> = Promise.resolve();

export class Execution {
  readonly key: string;
  readonly scope: TaskScope;
  readonly taskId: string;
  readonly contextId: string;
  readonly #deps: ExecutionDeps;
  readonly #channel: TaskChannel<Turn | undefined>;
  readonly #queue: TurnQueue;
  readonly #guard: ReplicaGuard;
  readonly #live: LiveTask & CancelTarget;
  #cancel: Promise<Task> | undefined;
  /** A cancel or an orphan settlement runs: no turn starts meanwhile, and it decides what follows. */
  #busy = false;

  constructor(deps: ExecutionDeps, key: string, scope: TaskScope, taskId: string, contextId: string, stored?: VersionedTask) {
    this.#deps = deps;
    this.key = key;
    this.scope = scope;
    this.taskId = taskId;
    this.contextId = contextId;
    this.#channel = new TaskChannel(deps, key, scope, this, stored, this.#listener(), WORDING);
    this.#queue = new TurnQueue(tracedTurns(deps.events?.tracing, this, (turn) => void this.#runTurn(turn)));
    this.#guard = new ReplicaGuard(deps, key, scope, taskId, () => this.#canceledElsewhere());
    this.#live = this.#livePort();
  }

  /** Observers of the running turn and of queued ones. */
  get observerCount(): number {
    return this.#queue.observerCount;
  }

  /** Runs `request` now, or after the turns and cancel already under way (in its own request context). */
  submit(request: Turn['request']): Turn {
    return this.#queue.submit(request, !this.#busy);
  }

  /** See runCancel; concurrent calls share one run, a failed one (store unavailable) may be tried again. */
  cancel(request: CancelRequest, graceMs: number): Promise<Task> {
    if (!this.#cancel) {
      const run = this.#runCancel(request, graceMs);
      this.#cancel = run;
      reportCancelAnswer(this.#deps.events, { taskId: this.taskId, tenant: this.scope.tenant }, run);
      run.catch(() => {
        if (this.#cancel === run) this.#cancel = undefined;
      });
    }
    return this.#cancel;
  }

  async #runCancel(request: CancelRequest, graceMs: number): Promise<Task> {
    this.#busy = true;
    try {
      return await runCancel(this.#live, this.#deps, request, graceMs);
    } finally {
      this.#busy = false;
      this.#afterTurn();
    }
  }

  /**
   * The task's turn died with the process that ran it (see ReplicaGuard.claimOrphan): resumed by
   * executor.resume() when there is one (a turn of its own, holding the lease), else FAILED with `text`.
   */
  async settleOrphan(text: string, reason: ResumeReason): Promise<void> {
    // Only a fresh execution settles (the handler makes one when none is live here).
    if (this.#queue.current || this.#busy || this.#guard.leased || this.#queue.waiting > 0) return;
    this.#busy = true; // nothing else starts meanwhile
    let resume = false;
    try {
      if (await this.#guard.claimOrphan(this.#channel)) {
        if (this.#deps.executor.resume) resume = true;
        else await this.#channel.enqueue(() => this.#channel.commitEngineStatus('TASK_STATE_FAILED', text));
      }
    } finally {
      this.#busy = false;
      // The resumed turn runs ahead of any message that arrived meanwhile.
      if (resume) this.#queue.startOwn(resumeRequest(this.scope, this.#channel.task!, this.taskId, this.contextId), tracedTurns(this.#deps.events?.tracing, this, (turn) => void this.#runResume(turn, text, reason), reason));
      else this.#afterTurn();
    }
  }

  /** A resumed turn: executor.resume() with the task as stored, ended like execute()'s (unfinished: FAILED with `text`). */
  async #runResume(turn: Turn, text: string, reason: ResumeReason): Promise<void> {
    this.#guard.listenForCancel();
    const timeoutMs = this.#deps.turnTimeoutMs;
    if (timeoutMs > 0) turn.setDeadline(timeoutMs, () => this.#timedOut(turn, timeoutMs));
    const { requestContext, caller, tenant } = turn.request.context;
    const context: ResumeContext = {
      resumed: true,
      reason,
      task: copyOf(this.#channel.task!),
      taskId: this.taskId,
      contextId: this.contextId,
      caller,
      tenant,
      requestContext,
      get signal() {
        return turn.signal;
      },
    };
    const events = new TaskEvents(new LiveSink(this.#live, turn));
    const executor = this.#deps.executor;
    this.#deps.logger.warn({ taskId: this.taskId, reason }, 'a task left mid-turn is resumed by executor.resume()');
    // Its writes run in the context it is called in (the channel's steps keep it).
    await runWithA2AContext(requestContext, () => this.#runAgent(turn, () => executor.resume!(context, events), 'resume()', text));
  }

  /**
   * A final write the store refused (see OwedWrites), made now on the task as stored unless it
   * ended meanwhile. With leases, only while holding the task's lease (a replica that holds it
   * runs the task now). A store failure rejects (and the write is owed again).
   */
  async settleOwed(state: 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED', text: string): Promise<void> {
    // Only a fresh execution settles (the lifecycle makes one when none is live here).
    if (this.#queue.current || this.#busy || this.#guard.leased || this.#queue.waiting > 0) return;
    this.#busy = true; // nothing else starts meanwhile
    try {
      if (!(await this.#guard.leaseNow())) return;
      const channel = this.#channel;
      try {
        await channel.reload();
      } catch (error) {
        if (error instanceof A2AError && error.kind === 'TaskNotFound') return; // gone: nothing owed
        throw error;
      }
      if (isTerminal(channel.task!.status.state)) return;
      await channel.enqueue(() => channel.commitEngineStatus(state, text));
    } finally {
      this.#busy = false;
      this.#afterTurn();
    }
  }

  /**
   * Server shutdown: queued turns are refused, the running turn is aborted and its task FAILED with
   * the reason (one process owns its turns; nothing else would ever finish them). Resolves once written.
   */
  shutdown(): Promise<void> {
    this.#queue.refuseWaiting(shuttingDown);
    const turn = this.#queue.current;
    if (!turn) return RESOLVED;
    this.#abortTurn(turn);
    const channel = this.#channel;
    return channel.enqueue(() => (turn.closed ? undefined : channel.commitEngineStatus('TASK_STATE_FAILED', SHUTDOWN_TEXT))).then(noop, noop);
  }

  async #runTurn(turn: Turn): Promise<void> {
    const request = turn.request;
    const channel = this.#channel;
    let before: Task | undefined;
    try {
      if (this.#guard.needsLease) {
        const refusal = await this.#guard.takeLease(channel);
        if (refusal) return this.#endTurn(turn, { kind: 'error', error: refusal });
      }
      if (channel.task) {
        this.#guard.listenForCancel();
        // A follow-up: its message joins the history (a versioned write) before the agent sees the task.
        const joined = await channel.enqueue(() => joinHistory(this.#live, turn));
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
    } catch (error) {
      return this.#agentFailed(turn, error, 'execute()', GENERIC_FAILURE_TEXT);
    }
    const context: ExecutionContext = {
      ...request.context,
      userMessage: request.message,
      task: before ? copyOf(before) : undefined,
      get signal() {
        return turn.signal;
      },
    };
    const executor = this.#deps.executor;
    return this.#runAgent(turn, () => executor.execute(context, new TaskEvents(new LiveSink(this.#live, turn))), 'execute()', GENERIC_FAILURE_TEXT);
  }

  /** Runs the agent's code for `turn` (`hook` names it in logs), then ends what it left unfinished: FAILED with `failureText`, or CANCELED. */
  async #runAgent(turn: Turn, run: () => Promise<void> | void, hook: string, failureText: string): Promise<void> {
    const channel = this.#channel;
    try {
      await run();
    } catch (error) {
      return this.#agentFailed(turn, error, hook, failureText);
    }
    turn.settle();
    // Drain what the agent published without awaiting (nothing to wait for once the turn is over).
    const tail = channel.tail;
    if (!turn.closed && tail) await tail.catch(noop);
    // Handed off: the turn ends when the task parks or finishes, whoever writes that.
    if (!turn.closed && !turn.handedOff) await channel.enqueue(() => this.#endUnfinished(turn, hook, failureText));
  }

  async #agentFailed(turn: Turn, error: unknown, hook: string, failureText: string): Promise<void> {
    if (!turn.closed && !turn.canceled) {
      // The store's failure, passed through publish(): the outage is logged once elsewhere.
      if (error instanceof A2AError && error.kind === 'Unavailable') this.#deps.logger.debug({ err: error, taskId: this.taskId }, `${hook} threw a store failure; the task is failed`);
      else this.#deps.logger.error({ err: error, taskId: this.taskId }, `${hook} threw; the task is failed`);
    }
    turn.settle();
    if (!turn.closed) await this.#channel.enqueue(() => this.#endUnfinished(turn, undefined, failureText));
  }

  /** The turn's deadline passed: its signal fires and the task is FAILED with the reason. */
  #timedOut(turn: Turn, timeoutMs: number): void {
    if (turn.closed || this.#busy) return;
    this.#deps.logger.warn({ taskId: this.taskId, turnTimeoutMs: timeoutMs }, 'a turn did not end within turnTimeoutMs; the task is failed');
    this.#abortTurn(turn);
    const text = `The agent did not finish within ${timeoutMs} ms.`;
    const channel = this.#channel;
    void channel.enqueue(() => (turn.closed ? undefined : channel.commitEngineStatus('TASK_STATE_FAILED', text))).catch(noop);
  }

  /** The agent's code settled without ending its turn (`returned`: the hook that returned; undefined: it threw). */
  async #endUnfinished(turn: Turn, returned: string | undefined, failureText: string): Promise<void> {
    if (turn.closed) return;
    if (turn.canceled) {
      // The CancelTask in progress writes CANCELED in its own request's context; a cancel asked by
      // another process is settled here.
      if (!this.#busy) await this.#channel.commitEngineStatus('TASK_STATE_CANCELED', CANCELED_TEXT).catch(noop);
      return;
    }
    if (returned) {
      this.#deps.logger.error(
        { taskId: this.taskId },
        `${returned} returned before publishing a reply, an interrupted or a terminal state; the task is failed`,
      );
    }
    await this.#channel.commitEngineStatus('TASK_STATE_FAILED', failureText).catch(noop);
  }

  /**
   * Another process asked for a cancel (a CancelTask served there writes CANCELED there): the turn
   * here is aborted and ends with the end committed, as soon as the bus brings it (or it is found
   * stored already), or with the engine's CANCELED once the grace period is over, like a local
   * cancel. Its later events are refused (its publisher is closed). A handed-off turn follows the
   * bus already; a turn this process aborted itself is decided by whoever aborted it.
   */
  #canceledElsewhere(): void {
    const turn = this.#queue.current;
    if (!turn || turn.canceled || turn.closed) return;
    turn.cancel();
    if (turn.handedOff) return;
    const channel = this.#channel;
    const endWith = (task: Task, event: StreamResponse, version?: number): void => {
      if (turn.closed) return;
      turn.notify(event, version);
      this.#endTurn(turn, { kind: 'task', task });
    };
    this.#guard.watchForEnd(
      // In the channel's order: an event of the turn's own already on its way lands (or is refused) first.
      ({ task, event, version }) => void channel.enqueue(() => endWith(task, event, version)),
      // Nothing committed within the grace period: CANCELED is written here (or the end found stored ends the turn).
      () => void channel.enqueue(() => (turn.closed ? undefined : channel.commitEngineStatus('TASK_STATE_CANCELED', CANCELED_TEXT))).catch(noop),
    );
    // The end may have been committed before the bus was followed: read the task once.
    void channel
      .enqueue(async () => {
        if (turn.closed) return;
        await channel.reload();
        const task = channel.task;
        if (task && isTerminal(task.status.state)) {
          endWith(task, { statusUpdate: { taskId: this.taskId, contextId: this.contextId, status: task.status } }, channel.version);
        }
      })
      .catch(noop);
  }

  /** Aborts the turn; handed-off work is told through the bus (its publisher may be in another process). */
  #abortTurn(turn: Turn): void {
    turn.cancel();
    if (turn.handedOff) this.#guard.routeCancel();
  }

  #endTurn(turn: Turn, outcome: TurnOutcome): void {
    if (turn.handedOff) this.#guard.stopFollowing();
    this.#queue.end(turn, outcome);
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
    if (this.#queue.current || this.#busy) return;
    const task = this.#channel.task;
    if (task && !isTerminal(task.status.state) && this.#queue.startNext()) return;
    const taskId = this.taskId;
    if (this.#queue.waiting > 0) this.#queue.refuseWaiting(() => acceptsNoMoreMessages(taskId));
    this.#guard.release();
    this.#deps.onIdle(this);
  }

  /** What the channel tells this execution: the running turn hears its events first and may end with them. */
  #listener(): ChannelListener<Turn | undefined> {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the getters below read this execution's private state
    const execution = this;
    return {
      get openingMessage() {
        return execution.#queue.current?.request.message;
      },
      created: () => this.#guard.listenForCancel(),
      committed: (commit) => {
        const turn = this.#queue.current;
        // A handed-off turn hears it from the bus like every other writer's events.
        if (turn && !turn.handedOff) turn.notify(commit.event, commit.version);
        return turn;
      },
      announced: (commit, published, turn) => {
        if (!turn || !endsTurn(commit.task.status.state)) return;
        const task = commit.task;
        if (!turn.handedOff) this.#endTurn(turn, { kind: 'task', task });
        // The bus lost this process's own final event: the handed-off turn ends anyway.
        else if (published) published.catch(() => (turn.closed ? undefined : this.#endTurn(turn, { kind: 'task', task })));
      },
      endedElsewhere: (task) => {
        const turn = this.#queue.current;
        if (!turn) return;
        turn.notify({ statusUpdate: { taskId: this.taskId, contextId: this.contextId, status: task.status } });
        turn.cancel();
        this.#endTurn(turn, { kind: 'task', task });
      },
      engineWriteFailed: (error) => {
        const turn = this.#queue.current;
        if (turn) this.#endTurn(turn, { kind: 'error', error });
      },
    };
  }

  /** The execution as its sinks and its cancel see it (one object, built once). */
  #livePort(): LiveTask & CancelTarget {
    return {
      taskId: this.taskId,
      contextId: this.contextId,
      scope: this.scope,
      logger: this.#deps.logger,
      channel: this.#channel,
      runningTurn: () => this.#queue.current,
      endTurn: (turn, outcome) => this.#endTurn(turn, outcome),
      // What the observer was told directly before the hand-off is not told again.
      follow: (turn) => this.#guard.follow(turn, this.#channel.version ?? 0, (ended, task) => this.#endTurn(ended, { kind: 'task', task })),
      abortTurn: (turn) => this.#abortTurn(turn),
      routeCancel: () => this.#guard.routeCancel(),
      eventsFor: (publisher) => new TaskEvents(new LiveSink(this.#live, publisher)),
    };
  }
}
