/**
 * One message's turn: who waits on it (its observer), its AbortSignal and its end. A turn ends
 * once, with a Message reply, a task in an interrupted or terminal state, or an error.
 */
import type { A2AError } from '../../errors.js';
import type { A2ACaller } from '../../context/carrier.js';
import type { CallContext } from '../../context/request-state.js';
import type { SendMessageConfiguration, SendMessageRequest } from '../../protocol/requests.js';
import type { Message, StreamResponse, Task } from '../../protocol/schemas.js';
import type { ExecutionContext } from '../executor.js';

/** How a turn ended, as seen by whoever waits on it. */
export type TurnOutcome =
  | { readonly kind: 'message'; readonly message: Message }
  | { readonly kind: 'task'; readonly task: Task }
  | { readonly kind: 'error'; readonly error: A2AError };

/** A turn's span, when tracing is on (lib/engine/engine-tracing.ts): it ends with the turn. */
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
  /** The incoming message with taskId/contextId filled in. */
  readonly message: Message;
  /** The call that brought it: its request's record (a resumed turn's: the task's owner). */
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
  /** A cancel asked for this turn to stop (its signal fires, now or when first read). */
  canceled = false;
  /**
   * execute() handed the work off (events.handOff()): its return does not end the turn, and the
   * observer follows the task's committed events on the bus, whoever writes them.
   */
  handedOff = false;
  /** performance.now() when execute() was called, kept only when something measures turns. */
  startedAt: number | undefined;
  /** The turn's span, when tracing is on; it ends with the turn. */
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
      if (this.canceled) this.#abort.abort(CANCELED());
    }
    return this.#abort.signal;
  }

  cancel(): void {
    if (this.canceled) return;
    this.canceled = true;
    this.#abort?.abort(CANCELED());
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

  /** execute() returned or threw. */
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

/**
 * What execute() gets for `turn`, built from its message and call (`task`: its copy of the task
 * before the turn, undefined for a new one). A class, not a spread literal with a `signal` getter:
 * V8 builds such a literal in dictionary mode, a map of its own per turn.
 */
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

  /** The turn's AbortSignal, made on first read. */
  get signal(): AbortSignal {
    return this.#turn.signal;
  }
}
