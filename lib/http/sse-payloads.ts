/**
 * One event's JSON as a binding streams it, encoded once and shared by every stream of that binding the event is fanned out to (the same event object
 * reaches them all in one go). A large one is shared as bytes: each socket references them instead of holding a copy per stream.
 */

const NOTHING: unique symbol = Symbol('nothing yet');

/**
 * From this length a payload is shared as a Buffer, written as a chunk of its own (about 20 bytes of chunked framing more than one string, and two
 * more writes); below it, a copy per stream costs less than that.
 */
export const SHARED_BYTES_FROM = 16 * 1024;

/** The payload of the last event a binding encoded; a new event replaces it. */
export class SharedPayloads {
  readonly #encode: (event: unknown) => string;
  #event: unknown = NOTHING;
  #payload: string | Buffer = '';

  constructor(encode: (event: unknown) => string) {
    this.#encode = encode;
  }

  /** The payload of `event`: encoded at its first stream, the same string or Buffer for the others. */
  of(event: object): string | Buffer {
    if (event !== this.#event) {
      const json = this.#encode(event);
      this.#payload = json.length < SHARED_BYTES_FROM ? json : Buffer.from(json);
      this.#event = event;
    }
    return this.#payload;
  }
}

/** One memo per encoding (an encoding is made once per binding and route). */
const memos = new WeakMap<object, SharedPayloads>();

/** The shared payloads of `encoding`, whose `payload` encodes an event. */
export function sharedPayloadsOf(encoding: { payload(event: unknown): string }): SharedPayloads {
  let memo = memos.get(encoding);
  if (!memo) memos.set(encoding, (memo = new SharedPayloads((event) => encoding.payload(event))));
  return memo;
}
