/** The registry seam: which tasks have a live execution in this process, by task key; an entry lives only while a turn or cancel runs. */
export interface ExecutionRegistry<E> {
  get(key: string): E | undefined;
  add(key: string, execution: E): void;
  /** Forgets `execution` (and only it: a newer execution under the same key stays). */
  remove(key: string, execution: E): void;
  readonly size: number;
  values(): Iterable<E>;
}

export class LocalExecutionRegistry<E> implements ExecutionRegistry<E> {
  readonly #byKey = new Map<string, E>();

  get size(): number {
    return this.#byKey.size;
  }

  get(key: string): E | undefined {
    return this.#byKey.get(key);
  }

  add(key: string, execution: E): void {
    this.#byKey.set(key, execution);
  }

  remove(key: string, execution: E): void {
    if (this.#byKey.get(key) === execution) this.#byKey.delete(key);
  }

  values(): Iterable<E> {
    return this.#byKey.values();
  }
}
