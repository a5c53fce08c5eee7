/**
 * A task's turns in the order their messages arrived: one runs at a time; the others wait, each with
 * the AsyncLocalStorage snapshot of the request that brought it, and start in that context.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { A2AError } from '../../errors.js';
import { Turn, type TurnOutcome, type TurnRequest } from './turn.js';

interface QueuedTurn {
  readonly turn: Turn;
  /** The carrying request's AsyncLocalStorage snapshot, taken when the message was queued. */
  readonly runInRequestContext: <R>(fn: () => R) => R;
}

export class TurnQueue {
  /** The turn running now. */
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

  /** Turns waiting behind the running one. */
  get waiting(): number {
    return this.#pending.length;
  }

  /** Observers of the running turn and of queued ones. */
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

  /** Starts the oldest queued turn in its request's context; false when none waits. */
  startNext(): boolean {
    const next = this.#pending.shift();
    if (!next) return false;
    this.#current = next.turn;
    next.runInRequestContext(() => this.#start(next.turn));
    return true;
  }

  /** Ends `turn` (no longer the running one); its observer hears `outcome`. */
  end(turn: Turn, outcome: TurnOutcome): void {
    if (this.#current === turn) this.#current = undefined;
    turn.end(outcome);
  }

  /** Ends every queued turn with `refusal()` (one error each). */
  refuseWaiting(refusal: () => A2AError): void {
    const refused = this.#pending;
    this.#pending = [];
    for (const { turn } of refused) turn.end({ kind: 'error', error: refusal() });
  }
}
