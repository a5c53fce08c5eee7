/** One message's turn, the queue of a task's turns, and the pure decision of who ends a turn its agent left unfinished. */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { A2AError } from '../../errors.js';
import type { A2ACaller } from '../../context/carrier.js';
import { ownerCall, type CallContext } from '../../context/request-state.js';
import type { SendMessageConfiguration, SendMessageRequest } from '../../protocol/requests.js';
import type { Message, StreamResponse, Task } from '../../protocol/schemas.js';
import type { ExecutionContext } from '../executor.js';
import type { TaskScope } from '../seams/task-store.js';

/** The agent's own copy: a JSON round trip is faster than structuredClone in V8. */
export const copyOf = (task: Task): Task => JSON.parse(JSON.stringify(task)) as Task;

export type TurnOutcome =
  | { readonly kind: 'message'; readonly message: Message }
  | { readonly kind: 'task'; readonly task: Task }
  | { readonly kind: 'error'; readonly error: A2AError };

interface TurnTrace {
  end(outcome: TurnOutcome): void;
}

/** Follows a turn's committed events (a blocking send, an SSE stream). */
export interface ExecutionObserver {
  /** In generation order, after the store write (`version`: the version it made). */
  onEvent(event: StreamResponse, version?: number): void;
  /** Called once: parked, finished, replied to, or refused. */
  onEnd(outcome: TurnOutcome): void;
}

export interface TurnRequest {
  /** A resumed turn's call is the task's owner. */
  readonly message: Message;
  readonly call: CallContext;
  readonly params?: Pick<SendMessageRequest, 'configuration' | 'metadata'>;
  readonly observer?: ExecutionObserver;
}

function textOf(message: Message): string {
  let text = '';
  for (const part of message.parts) {
    if ('text' in part && part.text !== undefined) text = text ? `${text}\n${part.text}` : part.text;
  }
  return text;
}

/** Once closed, what it publishes is refused. */
export interface Publisher {
  readonly closed: boolean;
}

export class CancelPublisher implements Publisher {
  closed = false;
}

const CANCELED = (): Error => new Error('task canceled');

export class Turn implements Publisher {
  #ended = false;
  #canceled = false;
  #handedOff = false;
  /** Kept only when something measures turns. */
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

  /** Made on first use: most turns never ask for it. */
  get signal(): AbortSignal {
    if (!this.#abort) {
      this.#abort = new AbortController();
      if (this.#canceled) this.#abort.abort(CANCELED());
    }
    return this.#abort.signal;
  }

  get canceled(): boolean {
    return this.#canceled;
  }

  cancel(): void {
    if (this.#canceled) return;
    this.#canceled = true;
    this.#abort?.abort(CANCELED());
  }

  /** Its return does not end the turn; its observer follows the bus. */
  get handedOff(): boolean {
    return this.#handedOff;
  }

  handOff(): void {
    this.#handedOff = true;
  }

  /** The timer never keeps the process alive. */
  setDeadline(ms: number, onExpiry: () => void): void {
    this.#deadline = setTimeout(onExpiry, ms);
    this.#deadline.unref();
  }

  detach(): void {
    this.#observer = undefined;
  }

  notify(event: StreamResponse, version?: number): void {
    this.#observer?.onEvent(event, version);
  }

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

  whenSettled(): Promise<void> {
    if (this.#settled) return Promise.resolve();
    this.#whenSettled ??= new Promise<void>((resolve) => (this.#markSettled = resolve));
    return this.#whenSettled;
  }
}

/** A class: a literal with a getter is a dictionary-mode object per turn. */
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

/** A task's turns in arrival order: one runs; the others start later in their request's AsyncLocalStorage snapshot. */
export class TurnQueue {
  #current: Turn | undefined;
  #pending: QueuedTurn[] = [];
  readonly #start: (turn: Turn) => void;

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

  /** Started now when nothing runs and `mayStart`, else queued in its request's context. */
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

  /** Started now with `run` instead of the usual start (nothing may run). */
  startOwn(request: TurnRequest, run: (turn: Turn) => void): Turn {
    const turn = new Turn(request);
    this.#current = turn;
    run(turn);
    return turn;
  }

  /** False when none waits. */
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

export function resumeRequest(scope: TaskScope, task: Task, taskId: string, contextId: string): TurnRequest {
  const message = task.history?.at(-1) ?? { role: 'ROLE_USER' as const, parts: [], messageId: `resume-${taskId}`, taskId, contextId };
  return { message, call: ownerCall(scope.owner, scope.tenant) };
}

export type AgentEnd = 'returned' | 'threw' | 'timed-out';

/** A CancelTask here before (`running`) or after (`aborted-here`) aborting the turn, or one from elsewhere (`asked`). */
export type CancelState = 'none' | 'running' | 'aborted-here' | 'asked';

export type FinalWrite =
  | { readonly by: 'turn'; readonly state: 'TASK_STATE_FAILED' | 'TASK_STATE_CANCELED' }
  | { readonly by: 'cancel'; readonly state: 'TASK_STATE_CANCELED' };

const TURN_FAILS: FinalWrite = { by: 'turn', state: 'TASK_STATE_FAILED' };
const TURN_CANCELS: FinalWrite = { by: 'turn', state: 'TASK_STATE_CANCELED' };
const CANCEL_CANCELS: FinalWrite = { by: 'cancel', state: 'TASK_STATE_CANCELED' };

/**
 * The CancelTask running here writes CANCELED (in its own request's context) once it aborted the turn
 * or when the deadline passes meanwhile; a cancel from elsewhere makes the turn write CANCELED; else FAILED.
 */
export function finalWrite(end: AgentEnd, cancel: CancelState): FinalWrite {
  if (cancel === 'aborted-here') return CANCEL_CANCELS;
  if (end === 'timed-out') return cancel === 'running' ? CANCEL_CANCELS : TURN_FAILS;
  return cancel === 'asked' ? TURN_CANCELS : TURN_FAILS;
}
