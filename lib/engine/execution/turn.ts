/**
 * One message's turn (its observer, AbortSignal and end), the queue of a task's turns, and the pure
 * decision of who writes the end of a turn its agent left unfinished, and which.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { A2AError } from '../../errors.js';
import type { A2ACaller } from '../../context/carrier.js';
import { ownerCall, type CallContext } from '../../context/request-state.js';
import type { SendMessageConfiguration, SendMessageRequest } from '../../protocol/requests.js';
import type { Message, StreamResponse, Task } from '../../protocol/schemas.js';
import type { ExecutionContext } from '../executor.js';
import type { TaskScope } from '../seams/task-store.js';

/** The agent's own copy of the task: a JSON round trip (tasks are JSON data; faster than structuredClone in V8). */
export const copyOf = (task: Task): Task => JSON.parse(JSON.stringify(task)) as Task;

/** How a turn ended, as seen by whoever waits on it. */
export type TurnOutcome =
  | { readonly kind: 'message'; readonly message: Message }
  | { readonly kind: 'task'; readonly task: Task }
  | { readonly kind: 'error'; readonly error: A2AError };

/** A turn's span, when tracing is on: it ends with the turn. */
interface TurnTrace {
  end(outcome: TurnOutcome): void;
}

/** Follows a turn's committed events (a blocking send, an SSE stream). */
export interface ExecutionObserver {
  /** An event, after it was stored (`version`: the store version its write made); in generation order. */
  onEvent(event: StreamResponse, version?: number): void;
  /** The turn is over: parked, finished, replied to, or refused. Called once. */
  onEnd(outcome: TurnOutcome): void;
}

/** What a message brings to its turn. */
export interface TurnRequest {
  /** The incoming message with taskId/contextId filled in, and the call that brought it (a resumed turn's: the task's owner). */
  readonly message: Message;
  readonly call: CallContext;
  /** SendMessage's configuration and metadata (none for a resumed turn). */
  readonly params?: Pick<SendMessageRequest, 'configuration' | 'metadata'>;
  readonly observer?: ExecutionObserver;
}

/** The text parts of a message joined with newlines. */
function textOf(message: Message): string {
  let text = '';
  for (const part of message.parts) {
    if ('text' in part && part.text !== undefined) text = text ? `${text}\n${part.text}` : part.text;
  }
  return text;
}

/** Something that publishes events into a task; once closed, what it publishes is refused. */
export interface Publisher {
  readonly closed: boolean;
}

/** The publisher of a cancel() hook: open while its CancelTask runs. */
export class CancelPublisher implements Publisher {
  closed = false;
}

const CANCELED = (): Error => new Error('task canceled');

export class Turn implements Publisher {
  #ended = false;
  #canceled = false;
  #handedOff = false;
  /** performance.now() when execute() was called, kept only when something measures turns. */
  startedAt: number | undefined;
  trace: TurnTrace | undefined;
  #observer: ExecutionObserver | undefined;
  #abort: AbortController | undefined;
  #settled = false;
  #deadline: NodeJS.Timeout | undefined;
  #whenSettled: Promise<void> | undefined;
  #markSettled: (() => void) | undefined;

  constructor(readonly request: TurnRequest) {
    this.#observer = request.observer;
  }

  get closed(): boolean {
    return this.#ended;
  }

  get observer(): ExecutionObserver | undefined {
    return this.#observer;
  }

  /** The task's AbortSignal, made on first use (most turns never ask for it). */
  get signal(): AbortSignal {
    if (!this.#abort) {
      this.#abort = new AbortController();
      if (this.#canceled) this.#abort.abort(CANCELED());
    }
    return this.#abort.signal;
  }

  /** A cancel asked for this turn to stop (its signal fires, now or when first read). */
  get canceled(): boolean {
    return this.#canceled;
  }

  cancel(): void {
    if (this.#canceled) return;
    this.#canceled = true;
    this.#abort?.abort(CANCELED());
  }

  /** execute() handed the work off (events.handOff()): its return does not end the turn; its observer follows the bus. */
  get handedOff(): boolean {
    return this.#handedOff;
  }

  handOff(): void {
    this.#handedOff = true;
  }

  /** Calls `onExpiry` if the turn has not ended after `ms` (the timer never keeps the process alive). */
  setDeadline(ms: number, onExpiry: () => void): void {
    this.#deadline = setTimeout(onExpiry, ms);
    this.#deadline.unref();
  }

  /** The client stopped following; the turn goes on. */
  detach(): void {
    this.#observer = undefined;
  }

  notify(event: StreamResponse, version?: number): void {
    this.#observer?.onEvent(event, version);
  }

  /** Ends the turn once; the observer hears the outcome. */
  end(outcome: TurnOutcome): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#deadline) clearTimeout(this.#deadline);
    const observer = this.#observer;
    this.#observer = undefined;
    observer?.onEnd(outcome);
    this.trace?.end(outcome);
    this.settle();
  }

  settle(): void {
    this.#settled = true;
    this.#markSettled?.();
  }

  /** Resolves when execute() has returned or thrown, or the turn ended. */
  whenSettled(): Promise<void> {
    if (this.#settled) return Promise.resolve();
    this.#whenSettled ??= new Promise<void>((resolve) => (this.#markSettled = resolve));
    return this.#whenSettled;
  }
}

/** What execute() gets for `turn`, built from its message and call; a class: a literal with a getter is a dictionary per turn. */
export class TurnExecutionContext implements ExecutionContext {
  readonly userMessage: Message;
  readonly userText: string;
  readonly task: Task | undefined;
  readonly taskId: string;
  readonly contextId: string;
  readonly caller: A2ACaller;
  readonly tenant: string;
  readonly configuration: SendMessageConfiguration | undefined;
  readonly metadata: Readonly<Record<string, unknown>> | undefined;
  readonly extensions: readonly string[];
  readonly requestContext: CallContext;
  readonly #turn: Turn;

  constructor(turn: Turn, task: Task | undefined) {
    const { message, call, params } = turn.request;
    this.userMessage = message;
    this.userText = textOf(message);
    this.task = task;
    this.taskId = message.taskId!;
    this.contextId = message.contextId!;
    this.caller = call.caller;
    this.tenant = call.tenant;
    this.configuration = params?.configuration;
    this.metadata = params?.metadata;
    this.extensions = call.extensions;
    this.requestContext = call;
    this.#turn = turn;
  }

  get signal(): AbortSignal {
    return this.#turn.signal;
  }
}

interface QueuedTurn {
  readonly turn: Turn;
  readonly runInRequestContext: <R>(fn: () => R) => R;
}

/** A task's turns in arrival order: one runs; the others wait and start in their request's AsyncLocalStorage snapshot. */
export class TurnQueue {
  #current: Turn | undefined;
  #pending: QueuedTurn[] = [];
  readonly #start: (turn: Turn) => void;

  /** `start` runs a turn (in the async context it is called in); it is called once per turn. */
  constructor(start: (turn: Turn) => void) {
    this.#start = start;
  }

  get current(): Turn | undefined {
    return this.#current;
  }

  get waiting(): number {
    return this.#pending.length;
  }

  get observerCount(): number {
    let count = this.#current?.observer ? 1 : 0;
    for (const { turn } of this.#pending) if (turn.observer) count++;
    return count;
  }

  /** A turn for `request`: started now when nothing runs and `mayStart`, else queued in its request's context. */
  submit(request: TurnRequest, mayStart: boolean): Turn {
    const turn = new Turn(request);
    if (mayStart && this.#current === undefined && this.#pending.length === 0) {
      this.#current = turn;
      this.#start(turn);
    } else {
      this.#pending.push({ turn, runInRequestContext: AsyncLocalStorage.snapshot() });
    }
    return turn;
  }

  /** A turn for `request` started now with `run` instead of the usual start, ahead of any queued (nothing may run). */
  startOwn(request: TurnRequest, run: (turn: Turn) => void): Turn {
    const turn = new Turn(request);
    this.#current = turn;
    run(turn);
    return turn;
  }

  /** Starts the oldest queued turn in its request's context; false when none waits. */
  startNext(): boolean {
    const next = this.#pending.shift();
    if (!next) return false;
    this.#current = next.turn;
    next.runInRequestContext(() => this.#start(next.turn));
    return true;
  }

  end(turn: Turn, outcome: TurnOutcome): void {
    if (this.#current === turn) this.#current = undefined;
    turn.end(outcome);
  }

  refuseWaiting(refusal: () => A2AError): void {
    const refused = this.#pending;
    this.#pending = [];
    for (const { turn } of refused) turn.end({ kind: 'error', error: refusal() });
  }
}

/** A resumed turn's request: its call is the task's owner and tenant, its last message stands in for one. */
export function resumeRequest(scope: TaskScope, task: Task, taskId: string, contextId: string): TurnRequest {
  const message = task.history?.at(-1) ?? { role: 'ROLE_USER' as const, parts: [], messageId: `resume-${taskId}`, taskId, contextId };
  return { message, call: ownerCall(scope.owner, scope.tenant) };
}

/** How the agent's code left a turn that had not ended: it returned, it threw, or the turn's deadline passed. */
export type AgentEnd = 'returned' | 'threw' | 'timed-out';

/** A CancelTask runs here before (`running`) or after (`aborted-here`) aborting the turn, or a cancel from elsewhere aborted it (`asked`). */
export type CancelState = 'none' | 'running' | 'aborted-here' | 'asked';

/** Who writes the end of an unfinished turn: the turn (FAILED or CANCELED), or the cancel running here (CANCELED). */
export type FinalWrite =
  | { readonly by: 'turn'; readonly state: 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED' }
  | { readonly by: 'cancel'; readonly state: 'TASK_STATE_CANCELED' };

const TURN_FAILS: FinalWrite = { by: 'turn', state: 'TASK_STATE_FAILED' };
const TURN_CANCELS: FinalWrite = { by: 'turn', state: 'TASK_STATE_CANCELED' };
const CANCEL_CANCELS: FinalWrite = { by: 'cancel', state: 'TASK_STATE_CANCELED' };

/**
 * Who writes the final state of an unfinished turn, and which: the CancelTask running here (CANCELED,
 * in its own request's context) once it aborted the turn or when the deadline passes meanwhile; the
 * turn CANCELED when a cancel from elsewhere aborted it; else the turn FAILED.
 */
export function finalWrite(end: AgentEnd, cancel: CancelState): FinalWrite {
  if (cancel === 'aborted-here') return CANCEL_CANCELS;
  if (end === 'timed-out') return cancel === 'running' ? CANCEL_CANCELS : TURN_FAILS;
  return cancel === 'asked' ? TURN_CANCELS : TURN_FAILS;
}
