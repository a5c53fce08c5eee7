/**
 * The bound on the bytes that all the SSE streams of a router have handed to their sockets and their clients have not taken yet: checked before each
 * write, cutting the streams furthest behind first.
 */

/** What the budget needs of a stream. */
export interface BudgetMember {
  /** Reads the bytes its socket holds now (they were counted as of the stream's last write). */
  recount(): number;
  /** Cuts the stream (it leaves the budget). */
  cutOverBudget(): void;
}

/**
 * A stream's count is refreshed at each of its writes (no timer, no per-chunk callback), so between writes it may count bytes its client has read
 * since: the total only overestimates, and every count is read again before anyone is cut.
 */
export class StreamBufferBudget {
  readonly maxBytes: number;
  #total = 0;
  /** Streams counted with bytes buffered. */
  readonly #members = new Set<BudgetMember>();

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes;
  }

  /** Bytes counted for all streams (0 when every client has read everything at its last write). */
  get total(): number {
    return this.#total;
  }

  /**
   * `member` is about to hand `pending` bytes to its socket. Past the bound, the streams furthest behind are cut until the rest fits, `member` too
   * when it is one of them (it then writes nothing). A stream with nothing buffered is written one event even when that event alone is past the
   * bound, as a client reading it is not behind.
   */
  admit(member: BudgetMember, pending: number): void {
    if (this.#total + pending > this.maxBytes) this.#relieve(member, pending);
  }

  /** A stream's buffer went from `previous` to `bytes` (after a write it was admitted for). */
  update(member: BudgetMember, previous: number, bytes: number): void {
    this.#total += bytes - previous;
    if (bytes > 0) this.#members.add(member);
  }

  /** A stream is gone, with the bytes it was counted for. */
  leave(member: BudgetMember, counted: number): void {
    if (!this.#members.delete(member)) return;
    this.#total -= counted;
  }

  #relieve(writer: BudgetMember, pending: number): void {
    // The writer may hold bytes it was not counted for yet (it last counted none).
    this.#members.add(writer);
    let total = 0;
    let writerBytes = 0;
    for (const member of this.#members) {
      const bytes = member.recount();
      if (bytes === 0) this.#members.delete(member);
      if (member === writer) writerBytes = bytes;
      total += bytes;
    }
    this.#total = total;
    // An event past the bound by itself, to a client with nothing buffered: written, nobody cut for it.
    if (writerBytes === 0 && pending > this.maxBytes) return;
    while (this.#total + pending > this.maxBytes) {
      // The writer stands as far behind as it would be after this write; one with nothing buffered is not behind.
      let furthest: BudgetMember | undefined = writerBytes > 0 ? writer : undefined;
      let most = writerBytes > 0 ? writerBytes + pending : 0;
      for (const member of this.#members) {
        if (member === writer) continue;
        const bytes = member.recount();
        if (bytes > most) [furthest, most] = [member, bytes];
      }
      if (!furthest) return;
      furthest.cutOverBudget();
      if (furthest === writer) return;
    }
  }
}
