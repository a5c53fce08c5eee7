/**
 * The observer of a blocking SendMessage: it resolves `outcome` when the turn ends (or, with
 * returnImmediately, at the first task), and stops waiting when the client leaves.
 */
import { A2AError } from '../errors.js';
import type { StreamResponse } from '../protocol/schemas.js';
import type { ExecutionObserver, Turn, TurnOutcome } from './execution/turn.js';
import type { CallContext } from './call-context.js';

export class BlockingAnswer implements ExecutionObserver {
  readonly outcome: Promise<TurnOutcome>;
  /** The turn answered, once submitted (the client leaving detaches it). */
  turn: Turn | undefined;
  #settle!: (outcome: TurnOutcome) => void;
  readonly #returnImmediately: boolean;
  readonly #call: CallContext;
  #watching = false;

  constructor(call: CallContext, returnImmediately: boolean) {
    this.#call = call;
    this.#returnImmediately = returnImmediately;
    this.outcome = new Promise<TurnOutcome>((resolve) => (this.#settle = resolve));
  }

  onEvent(event: StreamResponse): void {
    if (!('task' in event)) return;
    if (this.#returnImmediately) this.#settle({ kind: 'task', task: event.task });
    else if (!this.#watching) {
      // A task to wait for (a Message reply needs no watch): a client that leaves stops
      // waiting, and the turn goes on without an observer.
      this.#watching = true;
      const left = (): void => {
        this.turn?.detach();
        this.#settle({ kind: 'error', error: new A2AError('Internal', 'The client closed the request') });
      };
      // The connection's close when the binding offers it: the request's AbortSignal (made on first
      // use) costs an AbortController and an EventTarget listener per request.
      const call = this.#call;
      if (call.onClientClose) call.onClientClose(left);
      else call.signal?.addEventListener('abort', left, { once: true });
    }
  }

  onEnd(outcome: TurnOutcome): void {
    this.#settle(outcome);
  }
}
