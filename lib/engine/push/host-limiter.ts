/** At most N webhook requests in flight per origin: a slow or dead receiver never delays other hosts. */
interface Slots {
  active: number;
  readonly waiting: Array<() => void>;
}

export class HostLimiter {
  readonly #limit: number;
  readonly #hosts = new Map<string, Slots>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Origins with a request in flight or waiting (0 when idle). */
  get size(): number {
    return this.#hosts.size;
  }

  async acquire(origin: string): Promise<() => void> {
    let slots = this.#hosts.get(origin);
    if (!slots) this.#hosts.set(origin, (slots = { active: 0, waiting: [] }));
    if (slots.active >= this.#limit) {
      await new Promise<void>((resolve) => slots!.waiting.push(resolve));
    } else {
      slots.active++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = slots!.waiting.shift();
      if (next) next();
      else if (--slots!.active === 0) this.#hosts.delete(origin);
    };
  }
}
