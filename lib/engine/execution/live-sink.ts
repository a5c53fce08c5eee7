/**
 * What a turn writes while its execution is live: the follow-up's message joining the history, and
 * what execute() or a cancel() hook publishes, checked as a turn requires (a closed publisher, the
 * rules of a Message reply, the hand-off) in front of the task channel that writes and fans out.
 */
import { acceptsNoMoreMessages, busyElsewhere } from '../../errors.js';
import type { Logger } from '../../options.js';
import type { Message, StreamResponse, Task } from '../../protocol/schemas.js';
import { InvalidAgentEventError } from '../agent-event-error.js';
import type { TaskScope } from '../seams/task-store.js';
import type { EventSink, HandOff } from '../task-events.js';
import type { TaskEvent } from '../task-reducer.js';
import { isInterrupted, isTerminal, now } from '../task-state.js';
import type { Commit } from '../task-writer.js';
import type { TaskChannel } from './task-channel.js';
import type { Publisher, Turn, TurnOutcome } from './turn.js';

/** The live execution, as its sinks see it. */
export interface LiveTask {
  readonly taskId: string;
  readonly contextId: string;
  readonly scope: TaskScope;
  readonly logger: Logger;
  readonly channel: TaskChannel<Turn | undefined>;
  runningTurn(): Turn | undefined;
  endTurn(turn: Turn, outcome: TurnOutcome): void;
  /** The turn was handed off: from now on its observer follows the bus. */
  follow(turn: Turn): void;
}

const noop = (): void => {};

/** Appends a follow-up's message (a versioned write); resolves with the task before it, or undefined when the turn was refused. */
export async function joinHistory(live: LiveTask, turn: Turn): Promise<Task | undefined> {
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
      // rejection; awaiting callers still see the error. Refusals are logged by the channel. The
      // handler is attached only when the step may fail (it threw, or still waits for the store),
      // before the step's promise settles: an event written at once costs no extra promise.
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

  /** Checks, stores and fans out one agent event (a Message reply needs no store: synchronous). */
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
   * execute() hands the rest of its turn off: the turn stays open after it returns, and its
   * observer follows the bus from now on, where a publisher in any process announces what it
   * writes. A task not created yet is created in WORKING first, so there is one to publish into.
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
      turn.handedOff = true;
      live.follow(turn);
    }
    return { taskId: live.taskId, contextId: live.contextId, scope: { tenant: live.scope.tenant, owner: live.scope.owner } };
  }
}
