/**
 * Requests of one kind gathered into one statement: at most one statement of the kind is in flight, and the requests made meanwhile go together in
 * the next.
 */
interface Pending<T, R> {
  readonly item: T;
  readonly resolve: (result: R) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Alone, a request is sent at once, as before; under load, many share a round trip (each costs the process a socket write and an answer to parse,
 * more than the rows in it).
 */
export class StatementBatch<T, R = void> {
  readonly #run: (items: readonly T[]) => Promise<readonly R[]>;
  #queue: Pending<T, R>[] = [];
  #running = false;

  /** `run` sends one statement for all `items` and answers each one's result, in their order. */
  constructor(run: (items: readonly T[]) => Promise<readonly R[]>) {
    this.#run = run;
  }

  /** `item`'s result, once the statement holding it has run. */
  add(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (!this.#running) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    while (this.#queue.length > 0) {
      const batch = this.#queue;
      this.#queue = [];
      try {
        const results = await this.#run(batch.map((pending) => pending.item));
        for (let i = 0; i < batch.length; i++) batch[i].resolve(results[i]);
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.#running = false;
  }
}
