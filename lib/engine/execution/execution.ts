/** One task's live execution in this process, as one state machine (Phase): all its transitions are here. */
import { A2AError, acceptsNoMoreMessages, shuttingDown } from '../../errors.js';
import type { Task } from '../../protocol/schemas.js';
import type { ResumeReason } from '../executor.js';
import type { EngineTracing, TracedTask } from '../engine-events.js';
import type { TaskScope, VersionedTask } from '../seams/task-store.js';
import { endsTurn, isTerminal } from '../task-state.js';
import { cancelRoutedHere, reportCancelAnswer, runCancel, type CancelDeps, type CancelRequest } from './cancel.js';
import { ReplicaGuard, type ReplicaGuardDeps } from './replica-guard.js';
import { TaskChannel, type ChannelDeps, type ChannelListener, type ChannelWording } from './task-channel.js';
import { runResume, runTurn, type TurnHost, type TurnRunnerDeps } from './turn-runner.js';
import { TurnQueue, resumeRequest, type CancelState, type Turn, type TurnOutcome } from './turn.js';

export interface ExecutionDeps extends ChannelDeps, ReplicaGuardDeps, TurnRunnerDeps, CancelDeps {
  readonly onIdle: (execution: Execution) => void;
}

const WORDING: ChannelWording = { refused: 'the agent published an invalid event; the task is failed', endedBy: 'by another request' };
const SHUTDOWN_TEXT = 'The server shut down before the agent finished this task.';
const noop = (): void => {};

/**
 * idle: nothing runs. turn: a turn runs (others queue). cancelling: a CancelTask runs here and decides
 * what follows. settling: an orphan or an owed write is settled. closed: the registry forgot it.
 *
 *   idle -> turn | cancelling | settling | closed     turn -> idle | cancelling
 *   cancelling -> turn (its turn still runs) | idle    settling -> turn (resumed) | idle
 */
type Phase = 'idle' | 'turn' | 'cancelling' | 'settling' | 'closed';

export class Execution {
  readonly key: string;
  readonly scope: TaskScope;
  readonly taskId: string;
  readonly contextId: string;
  readonly #deps: ExecutionDeps;
  readonly #channel: TaskChannel<Turn | undefined>;
  readonly #queue: TurnQueue;
  readonly #guard: ReplicaGuard;
  readonly #host: TurnHost;
  #phase: Phase = 'idle';
  #cancel: Promise<Task> | undefined;

  constructor(deps: ExecutionDeps, key: string, scope: TaskScope, taskId: string, contextId: string, stored?: VersionedTask) {
    this.#deps = deps;
    this.key = key;
    this.scope = scope;
    this.taskId = taskId;
    this.contextId = contextId;
    this.#channel = new TaskChannel(deps, key, scope, this, stored, this.#listener(), WORDING);
    this.#queue = new TurnQueue(tracedTurns(deps.events?.tracing, this, (turn) => void runTurn(this.#host, turn)));
    this.#guard = new ReplicaGuard(deps, key, scope, taskId, () => cancelRoutedHere(this.#host));
    this.#host = this.#hostPort();
  }

  get phase(): Phase {
    return this.#phase;
  }

  get observerCount(): number {
    return this.#queue.observerCount;
  }

  /** Runs `request` now, or after what is under way, in its own request context. */
  submit(request: Turn['request']): Turn {
    // closed: a follow-up routed here just before the last turn ended still runs (as it always did).
    const start = this.#phase === 'idle' || this.#phase === 'closed';
    if (start) this.#phase = 'turn';
    return this.#queue.submit(request, start);
  }

  /** Concurrent calls share one run; a failed one (store unavailable) may be tried again. */
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
    this.#phase = 'cancelling';
    try {
      return await runCancel(this.#host, this.#deps, request, graceMs);
    } finally {
      this.#toIdle();
    }
  }

  /** Resumed by executor.resume() if any, else FAILED with `text`. */
  async settleOrphan(text: string, reason: ResumeReason): Promise<void> {
    if (!this.#maySettle()) return;
    let resume = false;
    try {
      if (await this.#guard.claimOrphan(this.#channel)) {
        if (this.#deps.executor.resume) resume = true;
        else await this.#channel.enqueue(() => this.#channel.commitEngineStatus('TASK_STATE_FAILED', text));
      }
    } finally {
      // The resumed turn runs ahead of any message that arrived meanwhile.
      if (resume) {
        this.#phase = 'turn';
        const request = resumeRequest(this.scope, this.#channel.task!, this.taskId, this.contextId);
        this.#queue.startOwn(
          request,
          tracedTurns(this.#host.deps.events?.tracing, this, (turn) => void runResume(this.#host, turn, text, reason), reason),
        );
      } else this.#toIdle();
    }
  }

  /** Made now unless the task ended meanwhile (with leases, only holding its lease); rejects while the store fails. */
  async settleOwed(state: 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED', text: string): Promise<void> {
    if (!this.#maySettle()) return;
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
      this.#toIdle();
    }
  }

  /** For a fresh execution only. */
  #maySettle(): boolean {
    if (this.#phase !== 'idle' || this.#guard.leased || this.#queue.waiting > 0) return false;
    this.#phase = 'settling';
    return true;
  }

  /** Shutdown: queued turns refused, the running one aborted and FAILED (nothing else would finish it). */
  async shutdown(): Promise<void> {
    this.#queue.refuseWaiting(shuttingDown);
    const turn = this.#queue.current;
    if (!turn) return;
    this.#guard.abort(turn);
    const channel = this.#channel;
    await channel.enqueue(() => (turn.closed ? undefined : channel.commitEngineStatus('TASK_STATE_FAILED', SHUTDOWN_TEXT))).catch(noop);
  }

  #endTurn(turn: Turn, outcome: TurnOutcome): void {
    if (turn.handedOff) this.#guard.stopFollowing();
    this.#queue.end(turn, outcome);
    if (this.#phase === 'turn') this.#phase = 'idle';
    const ended = this.#deps.events?.turnEnded;
    if (ended && turn.startedAt !== undefined) {
      const state = outcome.kind === 'task' ? outcome.task.status.state : outcome.kind;
      ended({ taskId: this.taskId, tenant: this.scope.tenant, outcome: state, durationMs: performance.now() - turn.startedAt });
    }
    this.#afterTurn();
  }

  #toIdle(): void {
    this.#phase = this.#queue.current ? 'turn' : 'idle';
    this.#afterTurn();
  }

  /** idle: starts the next queued turn, or refuses the queue when the task is finished. */
  #afterTurn(): void {
    if (this.#phase !== 'idle') return; // a running cancel decides what follows (it may still write CANCELED)
    const task = this.#channel.task;
    if (task && !isTerminal(task.status.state) && this.#queue.startNext()) {
      this.#phase = 'turn';
      return;
    }
    const taskId = this.taskId;
    if (this.#queue.waiting > 0) this.#queue.refuseWaiting(() => acceptsNoMoreMessages(taskId));
    this.#guard.release();
    this.#phase = 'closed';
    this.#deps.onIdle(this);
  }

  #cancelState(turn: Turn): CancelState {
    if (this.#phase === 'cancelling') return turn.canceled ? 'aborted-here' : 'running';
    return turn.canceled ? 'asked' : 'none';
  }

  #listener(): ChannelListener<Turn | undefined> {
    return {
      openingMessage: () => this.#queue.current?.request.message,
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

  #hostPort(): TurnHost {
    return {
      taskId: this.taskId,
      contextId: this.contextId,
      scope: this.scope,
      logger: this.#deps.logger,
      deps: this.#deps,
      guard: this.#guard,
      channel: this.#channel,
      cancelState: (turn) => this.#cancelState(turn),
      runningTurn: () => this.#queue.current,
      endTurn: (turn, outcome) => this.#endTurn(turn, outcome),
      // What the observer was told directly before the hand-off is not told again.
      follow: (turn) => this.#guard.follow(turn, this.#channel.version ?? 0, (ended, task) => this.#endTurn(ended, { kind: 'task', task })),
    };
  }
}

/** Without tracing, `start` itself (nothing added per turn); else each turn in its own span. */
function tracedTurns(tracing: EngineTracing | undefined, task: TracedTask, start: (turn: Turn) => void, resumed?: string): (turn: Turn) => void {
  return tracing ? (turn) => tracing.startTurn(task, turn, resumed, start) : start;
}
