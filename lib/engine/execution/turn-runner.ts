/** Runs one turn's agent code under its deadline, and checks what it publishes (LiveSink) in front of the task channel. */
import { A2AError, acceptsNoMoreMessages, busyElsewhere } from '../../errors.js';
import type { Logger } from '../../options.js';
import type { Message, StreamResponse, Task } from '../../protocol/schemas.js';
import { runWithA2AContext } from '../../context/carrier.js';
import { InvalidAgentEventError } from '../task-events.js';
import type { EngineEvents } from '../engine-events.js';
import type { AgentExecutor, ResumeContext, ResumeReason } from '../executor.js';
import type { TaskScope } from '../seams/task-store.js';
import { TaskEvents, type EventSink, type HandOff } from '../task-events.js';
import type { TaskEvent } from '../task-reducer.js';
import { CANCELED_TEXT, GENERIC_FAILURE_TEXT, isInterrupted, isTerminal, now } from '../task-state.js';
import type { Commit } from '../task-writer.js';
import type { ReplicaGuard } from './replica-guard.js';
import type { TaskChannel } from './task-channel.js';
import { TurnExecutionContext, copyOf, finalWrite, type AgentEnd, type CancelState, type Publisher, type Turn, type TurnOutcome } from './turn.js';

export interface TurnRunnerDeps {
  readonly executor: AgentExecutor;
  readonly logger: Logger;
  readonly events?: EngineEvents;
  /** A turn not ended after this long is failed; 0: no deadline. */
  readonly turnTimeoutMs: number;
}

/** The execution as its runner, sinks and cancel see it (built once, never written from outside). */
export interface TurnHost extends LiveTask {
  readonly channel: TaskChannel<Turn | undefined>;
  readonly deps: TurnRunnerDeps;
  readonly guard: ReplicaGuard;
  /** An input of finalWrite. */
  cancelState(turn: Turn): CancelState;
}

const noop = (): void => {};

/** The task's lease (several replicas), the follow-up's history write, then execute(). */
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
      // The message joins the history (a versioned write) before the agent sees the task.
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
  // A class, not a literal with a signal getter (a dictionary-mode object per turn).
  const context = new TurnExecutionContext(turn, before ? copyOf(before) : undefined);
  const executor = host.deps.executor;
  return runAgent(host, turn, () => executor.execute(context, new TaskEvents(new LiveSink(host, turn))), 'execute()', GENERIC_FAILURE_TEXT);
}

/** executor.resume() with the task as stored; unfinished: FAILED with `text`. */
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
  await runWithA2AContext(call, () => runAgent(host, turn, () => executor.resume!(context, events), 'resume()', text));
}

function startDeadline(host: TurnHost, turn: Turn): void {
  const timeoutMs = host.deps.turnTimeoutMs;
  if (timeoutMs > 0) turn.setDeadline(timeoutMs, () => timedOut(host, turn, timeoutMs));
}

/** Runs the agent's code, then ends what it left unfinished: FAILED with `failureText`, or CANCELED. */
async function runAgent(host: TurnHost, turn: Turn, run: () => Promise<void> | void, hook: string, failureText: string): Promise<void> {
  const channel = host.channel;
  try {
    await run();
  } catch (error) {
    return agentFailed(host, turn, error, hook, failureText);
  }
  turn.settle();
  const tail = channel.tail;
  if (!turn.closed && tail) await tail.catch(noop);
  // Handed off: the turn ends when the task parks or finishes, whoever writes that.
  if (!turn.closed && !turn.handedOff) await channel.enqueue(() => endUnfinished(host, turn, hook, failureText));
}

async function agentFailed(host: TurnHost, turn: Turn, error: unknown, hook: string, failureText: string): Promise<void> {
  if (!turn.closed && !turn.canceled) {
    // The outage is logged once elsewhere.
    if (error instanceof A2AError && error.kind === 'Unavailable')
      host.logger.debug({ err: error, taskId: host.taskId }, `${hook} threw a store failure; the task is failed`);
    else host.logger.error({ err: error, taskId: host.taskId }, `${hook} threw; the task is failed`);
  }
  turn.settle();
  if (!turn.closed) await host.channel.enqueue(() => endUnfinished(host, turn, undefined, failureText));
}

function timedOut(host: TurnHost, turn: Turn, timeoutMs: number): void {
  if (turn.closed || finalWrite('timed-out', host.cancelState(turn)).by === 'cancel') return;
  host.logger.warn({ taskId: host.taskId, turnTimeoutMs: timeoutMs }, 'a turn did not end within turnTimeoutMs; the task is failed');
  host.guard.abort(turn);
  const text = `The agent did not finish within ${timeoutMs} ms.`;
  const channel = host.channel;
  void channel.enqueue(() => (turn.closed ? undefined : channel.commitEngineStatus('TASK_STATE_FAILED', text))).catch(noop);
}

/** `returned`: the hook that returned; undefined: it threw. */
async function endUnfinished(host: TurnHost, turn: Turn, returned: string | undefined, failureText: string): Promise<void> {
  if (turn.closed) return;
  const end: AgentEnd = returned ? 'returned' : 'threw';
  const write = finalWrite(end, host.cancelState(turn));
  if (write.by === 'cancel') return; // the CancelTask writes CANCELED in its own request's context
  if (write.state === 'TASK_STATE_CANCELED') {
    await host.channel.commitEngineStatus(write.state, CANCELED_TEXT).catch(noop);
    return;
  }
  if (returned) {
    host.logger.error(
      { taskId: host.taskId },
      `${returned} returned before publishing a reply, an interrupted or a terminal state; the task is failed`,
    );
  }
  await host.channel.commitEngineStatus(write.state, failureText).catch(noop);
}

interface LiveTask {
  readonly taskId: string;
  readonly contextId: string;
  readonly scope: TaskScope;
  readonly logger: Logger;
  readonly channel: TaskChannel<Turn | undefined>;
  runningTurn(): Turn | undefined;
  endTurn(turn: Turn, outcome: TurnOutcome): void;
  follow(turn: Turn): void;
}

/** Resolves with the task before it, or undefined when the turn was refused. */
async function joinHistory(live: LiveTask, turn: Turn): Promise<Task | undefined> {
  let result: Commit;
  try {
    // After a conflict the task was changed elsewhere: run only if it is still waiting for input.
    result = await live.channel.commit({ userMessage: turn.request.message }, (fresh) =>
      isInterrupted(fresh.status.state) || isTerminal(fresh.status.state) ? undefined : busyElsewhere(live.taskId),
    );
  } catch (error) {
    live.endTurn(turn, { kind: 'error', error: live.channel.asClientError(error) });
    return undefined;
  }
  if (result.kind !== 'committed') {
    const state = result.kind === 'ended' ? result.task.status.state : 'its current state';
    live.endTurn(turn, { kind: 'error', error: acceptsNoMoreMessages(live.taskId, state) });
    return undefined;
  }
  // The turn's own stream opens with the Task; subscribers and webhooks hear the return to WORKING.
  turn.notify({ task: result.task }, result.version);
  live.channel.announce(result);
  return result.previous;
}

export class LiveSink implements EventSink {
  readonly #live: LiveTask;
  readonly #publisher: Publisher;

  constructor(live: LiveTask, publisher: Publisher) {
    this.#live = live;
    this.#publisher = publisher;
  }

  get taskId(): string {
    return this.#live.taskId;
  }

  get contextId(): string {
    return this.#live.contextId;
  }

  accept(event: StreamResponse): Promise<void> {
    const applied: Promise<void> = this.#live.channel.enqueue(() => {
      // An agent that does not await publish() must not crash the process with an unhandled
      // rejection; awaiting callers still see the error. Attached only when the step may fail.
      let result: void | Promise<void>;
      try {
        result = this.#apply(event);
      } catch (error) {
        applied.catch(noop);
        throw error;
      }
      if (result) applied.catch(noop);
      return result;
    });
    return applied;
  }

  handOff(): Promise<HandOff> {
    const handed = this.#live.channel.enqueue(() => this.#handOff());
    handed.catch(noop);
    return handed;
  }

  /** A Message reply needs no store: synchronous. */
  #apply(event: StreamResponse): void | Promise<void> {
    const live = this.#live;
    if (this.#publisher.closed) {
      const state = live.channel.task?.status.state;
      live.logger.warn({ taskId: live.taskId }, 'an event published after the end of its turn was refused');
      throw new InvalidAgentEventError(
        `task ${live.taskId} is ${state ? `in ${state}` : 'answered'}; this turn is over and its later events are refused`,
      );
    }
    if ('message' in event) {
      try {
        return this.#applyMessage(event.message);
      } catch (error) {
        return live.channel.refuse(error);
      }
    }
    return live.channel.publish(event as TaskEvent);
  }

  #applyMessage(message: Message): void {
    const live = this.#live;
    if (live.channel.task) throw new InvalidAgentEventError('a Message cannot be published once the task exists; use a status message instead');
    const turn = live.runningTurn();
    if (this.#publisher !== turn) throw new InvalidAgentEventError('only execute() may answer with a Message');
    if (message.taskId) throw new InvalidAgentEventError('a direct Message reply has no task; leave taskId empty');
    const reply: Message = { ...message, role: 'ROLE_AGENT', contextId: live.contextId };
    turn.notify({ message: reply });
    live.endTurn(turn, { kind: 'message', message: reply });
  }

  /**
   * The turn stays open after execute() returns; its observer follows the bus, where a publisher in
   * any process announces what it writes. An uncreated task is created in WORKING first.
   */
  async #handOff(): Promise<HandOff> {
    const live = this.#live;
    const turn = live.runningTurn();
    const over = `the turn of task ${live.taskId} is over; there is nothing to hand off`;
    if (this.#publisher !== turn || turn.closed)
      throw new InvalidAgentEventError(this.#publisher.closed ? over : 'only execute() can hand its turn off');
    if (!turn.handedOff) {
      if (!live.channel.task) {
        const status = { state: 'TASK_STATE_WORKING' as const, timestamp: now() };
        await live.channel.publish({ statusUpdate: { taskId: live.taskId, contextId: live.contextId, status } });
        if (turn.closed) throw new InvalidAgentEventError(over);
      }
      turn.handOff();
      live.follow(turn);
    }
    return { taskId: live.taskId, contextId: live.contextId, scope: { tenant: live.scope.tenant, owner: live.scope.owner } };
  }
}
