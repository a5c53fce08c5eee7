/**
 * Runs one turn's agent code: execute() for a message (after the lease and the follow-up's history
 * write) or resume() for a task left mid-turn, under the turn's deadline, then ends what the agent
 * left unfinished (FAILED with the reason, or CANCELED after a cancel asked elsewhere).
 */
import { A2AError } from '../../errors.js';
import type { Logger } from '../../options.js';
import type { Task } from '../../protocol/schemas.js';
import { runWithA2AContext } from '../../context/carrier.js';
import type { EngineEvents } from '../engine-events.js';
import type { AgentExecutor, ResumeContext, ResumeReason } from '../executor.js';
import { TaskEvents } from '../task-events.js';
import { CANCELED_TEXT, GENERIC_FAILURE_TEXT } from '../task-state.js';
import { copyOf, type CancelTarget } from './cancel.js';
import { LiveSink, joinHistory, type LiveTask } from './live-sink.js';
import type { ReplicaGuard } from './replica-guard.js';
import type { TaskChannel } from './task-channel.js';
import { TurnExecutionContext, type Turn } from './turn.js';

/** What running a turn needs of the agent and the engine. */
export interface TurnRunnerDeps {
  readonly executor: AgentExecutor;
  readonly logger: Logger;
  /** Metrics and lifecycle hooks (turnStarted here; turnEnded where the turn ends). */
  readonly events?: EngineEvents;
  /** A turn not ended after this long is failed; 0: no deadline. */
  readonly turnTimeoutMs: number;
}

/** The execution a turn runs in: the one object its sinks, its cancel and its turns see (built once per execution). */
export interface TurnHost extends LiveTask, CancelTarget {
  readonly channel: TaskChannel<Turn | undefined>;
  readonly deps: TurnRunnerDeps;
  readonly guard: ReplicaGuard;
  /** A cancel or an orphan settlement runs (set by the execution): it decides what an unfinished turn ends with. */
  busy: boolean;
}

const noop = (): void => {};

/** A message's turn: the task's lease (several replicas), the follow-up's message joining the history, then execute(). */
export async function runTurn(host: TurnHost, turn: Turn): Promise<void> {
  const channel = host.channel;
  let before: Task | undefined;
  try {
    if (host.guard.needsLease) {
      const refusal = await host.guard.takeLease(channel);
      if (refusal) return host.endTurn(turn, { kind: 'error', error: refusal });
    }
    if (channel.task) {
      host.guard.listenForCancel();
      // A follow-up: its message joins the history (a versioned write) before the agent sees the task.
      const joined = await channel.enqueue(() => joinHistory(host, turn));
      if (!joined) return;
      before = joined;
    }
    startDeadline(host, turn);
    const events = host.deps.events;
    if (events) {
      turn.startedAt = performance.now();
      events.turnStarted?.({ taskId: host.taskId, tenant: host.scope.tenant, followUp: before !== undefined });
    }
  } catch (error) {
    return agentFailed(host, turn, error, 'execute()', GENERIC_FAILURE_TEXT);
  }
  // A class, not a spread literal with a signal getter (a dictionary-mode object per turn).
  const context = new TurnExecutionContext(turn, before ? copyOf(before) : undefined);
  const executor = host.deps.executor;
  return runAgent(host, turn, () => executor.execute(context, new TaskEvents(new LiveSink(host, turn))), 'execute()', GENERIC_FAILURE_TEXT);
}

/** A resumed turn: executor.resume() with the task as stored, ended like execute()'s (unfinished: FAILED with `text`). */
export async function runResume(host: TurnHost, turn: Turn, text: string, reason: ResumeReason): Promise<void> {
  host.guard.listenForCancel();
  startDeadline(host, turn);
  const call = turn.request.call;
  const context: ResumeContext = {
    resumed: true,
    reason,
    task: copyOf(host.channel.task!),
    taskId: host.taskId,
    contextId: host.contextId,
    caller: call.caller,
    tenant: call.tenant,
    requestContext: call,
    get signal() {
      return turn.signal;
    },
  };
  const events = new TaskEvents(new LiveSink(host, turn));
  const executor = host.deps.executor;
  host.logger.warn({ taskId: host.taskId, reason }, 'a task left mid-turn is resumed by executor.resume()');
  // Its writes run in the context it is called in (the channel's steps keep it).
  await runWithA2AContext(call, () => runAgent(host, turn, () => executor.resume!(context, events), 'resume()', text));
}

function startDeadline(host: TurnHost, turn: Turn): void {
  const timeoutMs = host.deps.turnTimeoutMs;
  if (timeoutMs > 0) turn.setDeadline(timeoutMs, () => timedOut(host, turn, timeoutMs));
}

/** Runs the agent's code for `turn` (`hook` names it in logs), then ends what it left unfinished: FAILED with `failureText`, or CANCELED. */
async function runAgent(host: TurnHost, turn: Turn, run: () => Promise<void> | void, hook: string, failureText: string): Promise<void> {
  const channel = host.channel;
  try {
    await run();
  } catch (error) {
    return agentFailed(host, turn, error, hook, failureText);
  }
  turn.settle();
  // Drain what the agent published without awaiting (nothing to wait for once the turn is over).
  const tail = channel.tail;
  if (!turn.closed && tail) await tail.catch(noop);
  // Handed off: the turn ends when the task parks or finishes, whoever writes that.
  if (!turn.closed && !turn.handedOff) await channel.enqueue(() => endUnfinished(host, turn, hook, failureText));
}

async function agentFailed(host: TurnHost, turn: Turn, error: unknown, hook: string, failureText: string): Promise<void> {
  if (!turn.closed && !turn.canceled) {
    // The store's failure, passed through publish(): the outage is logged once elsewhere.
    if (error instanceof A2AError && error.kind === 'Unavailable')
      host.logger.debug({ err: error, taskId: host.taskId }, `${hook} threw a store failure; the task is failed`);
    else host.logger.error({ err: error, taskId: host.taskId }, `${hook} threw; the task is failed`);
  }
  turn.settle();
  if (!turn.closed) await host.channel.enqueue(() => endUnfinished(host, turn, undefined, failureText));
}

/** The turn's deadline passed: its signal fires and the task is FAILED with the reason. */
function timedOut(host: TurnHost, turn: Turn, timeoutMs: number): void {
  if (turn.closed || host.busy) return;
  host.logger.warn({ taskId: host.taskId, turnTimeoutMs: timeoutMs }, 'a turn did not end within turnTimeoutMs; the task is failed');
  host.abortTurn(turn);
  const text = `The agent did not finish within ${timeoutMs} ms.`;
  const channel = host.channel;
  void channel.enqueue(() => (turn.closed ? undefined : channel.commitEngineStatus('TASK_STATE_FAILED', text))).catch(noop);
}

/** The agent's code settled without ending its turn (`returned`: the hook that returned; undefined: it threw). */
async function endUnfinished(host: TurnHost, turn: Turn, returned: string | undefined, failureText: string): Promise<void> {
  if (turn.closed) return;
  if (turn.canceled) {
    // The CancelTask in progress writes CANCELED in its own request's context; a cancel asked by
    // another process is settled here.
    if (!host.busy) await host.channel.commitEngineStatus('TASK_STATE_CANCELED', CANCELED_TEXT).catch(noop);
    return;
  }
  if (returned) {
    host.logger.error(
      { taskId: host.taskId },
      `${returned} returned before publishing a reply, an interrupted or a terminal state; the task is failed`,
    );
  }
  await host.channel.commitEngineStatus('TASK_STATE_FAILED', failureText).catch(noop);
}
