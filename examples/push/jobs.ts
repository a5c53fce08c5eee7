/**
 * A minimal in-process job queue, standing in for BullMQ, SQS or a database table. The agent
 * pushes a job and returns; a worker takes jobs one at a time. Jobs carry plain JSON only (the
 * HandOff), so swapping in a real queue read by another process changes nothing else.
 */
export class JobQueue<T extends { readonly id: string }> {
  readonly #queued: T[] = [];
  #wake: ((job: T | undefined) => void) | undefined;
  #closed = false;

  push(job: T): void {
    if (this.#closed) throw new Error('the job queue is closed');
    const wake = this.#wake;
    this.#wake = undefined;
    if (wake) wake(job);
    else this.#queued.push(job);
  }

  /** Removes a job nobody has taken yet (a cancel before the worker got to it). */
  remove(id: string): boolean {
    const index = this.#queued.findIndex((job) => job.id === id);
    if (index === -1) return false;
    this.#queued.splice(index, 1);
    return true;
  }

  /** The next job; undefined once the queue is closed. One taker at a time. */
  take(): Promise<T | undefined> {
    const job = this.#queued.shift();
    if (job || this.#closed) return Promise.resolve(job);
    return new Promise((resolve) => (this.#wake = resolve));
  }

  /** Stops the queue: a waiting take() resolves with undefined. */
  close(): void {
    this.#closed = true;
    this.#wake?.(undefined);
    this.#wake = undefined;
  }
}
