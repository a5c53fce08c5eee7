/**
 * What the Redis and PostgreSQL event buses share: a task's followers in this process, served in version order from the backend's event log; cancel
 * listeners; catching up after a reconnect.
 */
import type { Logger } from '../../options.js';
import type { CommittedEvent, CommittedEventListener, TaskEventBus } from '../../engine/seams/task-event-bus.js';

/** The followers of one task in this process, and how far they have been served. */
export class Group {
  readonly followers = new Set<CommittedEventListener>();
  /** The highest version delivered: nothing at or below it is delivered again. */
  last = 0;
  /** False until the starting point is known. */
  ready = false;
  /** The lowest version published here or noticed before ready: the starting point stays below it. */
  floor = Number.MAX_SAFE_INTEGER;
  reading = false;
  /** A notice came during a read (or before ready): read again after it. */
  again = false;
  /** The notice connection dropped: payloads may follow a gap, the log is read instead. */
  stale = false;
  /** Stops the backend's notices for this group (set by follow()). */
  stop = (): void => {};

  constructor(readonly key: string) {}
}

/** How many tasks' appended versions are remembered at most (a write never published is forgotten after). */
const MAX_REMEMBERED = 10_000;

/**
 * The versions a store linked to the bus logged itself, in its write (so a replica that dies right after a write loses no event): the bus's publish()
 * of them then does nothing.
 */
export class AppendedVersions {
  /** Per task key, the highest version a linked store logged and the bus has not published yet. */
  readonly #top = new Map<string, number>();

  /** A linked store's write logged `version` of `key`. */
  appended(key: string, version: number): void {
    // Re-inserted so the map's order is least recently written first, the one dropped when full.
    this.#top.delete(key);
    this.#top.set(key, version);
    if (this.#top.size > MAX_REMEMBERED) this.#top.delete(this.#top.keys().next().value!);
  }

  /** Whether `version` of `key` is logged already by a linked store (publish() then does nothing). */
  takeAppended(key: string, version: number): boolean {
    const top = this.#top.get(key);
    if (top === undefined || version > top) return false;
    if (version === top) this.#top.delete(key);
    return true;
  }
}

/** How long after a failed start a task is followed again. */
const RETRY_MS = 500;

export abstract class LoggedEventBus implements TaskEventBus {
  protected readonly logger: Logger;
  protected closed = false;
  readonly #name: string;
  readonly #on: string;
  readonly #groups = new Map<string, Group>();
  /** Cancel listeners per cancelId(key), with what stops hearing them. */
  readonly #cancels = new Map<string, { listeners: Set<() => void>; stop: () => void }>();
  readonly #pending = new Set<Promise<unknown>>();
  /** The number of the latest cancel request heard; undefined until the backend's count is read. */
  #cancelSeen: number | undefined;
  #counting: Promise<void> | undefined;
  #subscribers = 0;

  protected constructor(name: string, on: string, logger: Logger) {
    this.#name = name;
    this.#on = on;
    this.logger = logger;
  }

  /** Appends the event to the log and notifies it, unless the log has that version already. */
  protected abstract append(key: string, committed: CommittedEvent): Promise<void>;
  /** The task's logged events after `after`, oldest first; with `whole`, undefined when some of them may be gone. */
  protected abstract read(key: string, after: number, whole: boolean): Promise<CommittedEvent[] | undefined>;
  /** Starts notices for `group` (through noticed(), stopped by `group.stop`); resolves where the log stood, and whether to read from there anyway. */
  protected abstract follow(group: Group): Promise<{ top: number; read: boolean }>;
  protected abstract sendCancel(key: string): Promise<void>;
  /** Starts hearing the cancels of `key` (each through heardCancel()). */
  protected abstract listenCancels(key: string): { ready: Promise<void>; stop: () => void };
  /** Cancel requests are numbered and logged: the latest number, and [number, cancel id] of those after `after`. */
  protected abstract cancelCount(): Promise<number>;
  protected abstract cancelsAfter(after: number): Promise<Array<[number, string]>>;
  protected abstract closeTransport(): Promise<void>;

  /** How a cancel names its task. */
  protected cancelId(key: string): string {
    return key;
  }

  get subscriberCount(): number {
    return this.#subscribers;
  }

  /** Tasks this process follows now (a gauge: 0 once every subscriber has left). */
  get followedTasks(): number {
    return this.#groups.size;
  }

  async publish(key: string, committed: CommittedEvent): Promise<void> {
    const { version } = committed;
    if (!Number.isSafeInteger(version) || version < 1) throw new RangeError(`${this.#name}: version must be a positive integer, got ${version}`);
    const group = this.#groups.get(key);
    if (group && !group.ready) group.floor = Math.min(group.floor, version);
    await this.append(key, committed);
  }

  subscribe(key: string, listener: CommittedEventListener): () => void {
    if (this.closed) throw new Error(`${this.#name} is closed`);
    const group = this.#groups.get(key) ?? this.#start(key);
    // A wrapper per call, so the same function subscribed twice is two subscriptions.
    const follower: CommittedEventListener = (committed) => listener(committed);
    group.followers.add(follower);
    this.#subscribers++;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      group.followers.delete(follower);
      this.#subscribers--;
      if (group.followers.size > 0 || this.#groups.get(key) !== group) return;
      this.#groups.delete(key);
      group.stop();
    };
  }

  requestCancel(key: string): void {
    this.sendCancel(key).catch((error: unknown) => this.logger.error({ err: error }, `could not send a cancel request ${this.#on}`));
  }

  onCancelRequest(key: string, listener: () => void): () => void {
    if (this.closed) throw new Error(`${this.#name} is closed`);
    const id = this.cancelId(key);
    let entry = this.#cancels.get(id);
    if (!entry) {
      const { ready, stop } = this.listenCancels(key);
      this.#cancels.set(id, (entry = { listeners: new Set(), stop }));
      this.track(
        ready.then(() => this.countCancels()),
        `could not listen for cancel requests ${this.#on}`,
      );
    }
    const wrapper = () => listener();
    entry.listeners.add(wrapper);
    const held = entry;
    return () => {
      if (!held.listeners.delete(wrapper) || held.listeners.size > 0 || this.#cancels.get(id) !== held) return;
      this.#cancels.delete(id);
      held.stop();
    };
  }

  async history(key: string, afterVersion: number): Promise<CommittedEvent[] | undefined> {
    if (!Number.isSafeInteger(afterVersion) || afterVersion < 0)
      throw new RangeError(`${this.#name}: afterVersion must be a whole number, got ${afterVersion}`);
    return this.read(key, afterVersion, true);
  }

  /** Resolves once every subscription made so far is live and its starting point read (tests and tools). */
  async subscribed(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Stops following every task and closes the notice connection (not the backend's client or pool). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.#groups.clear();
    this.#cancels.clear();
    await this.closeTransport();
  }

  /** A notice of `version` of the group's task, with the event when the backend sends it whole. */
  protected noticed(group: Group, version: number, committed?: CommittedEvent): void {
    if (!group.ready) group.floor = Math.min(group.floor, version);
    if (committed && group.ready && !group.reading && !group.stale) this.#deliver(group, committed);
    else if (version > group.last) this.#read(group);
  }

  /** Reads the cancel count once listening (once per bus): a reconnect replays the requests after it. */
  protected countCancels(): Promise<void> {
    if (this.#cancelSeen !== undefined) return Promise.resolve();
    this.#counting ??= this.cancelCount().then(
      (count) => void (this.#cancelSeen = Math.max(this.#cancelSeen ?? 0, count)),
      (error: unknown) => {
        this.#counting = undefined;
        throw error;
      },
    );
    return this.#counting;
  }

  /** Cancel request number `n` (0: unnumbered) for cancel id `id`; one heard already (replayed) is ignored. */
  protected heardCancel(n: number, id: string): void {
    if (n > 0) {
      if (this.#cancelSeen !== undefined && n <= this.#cancelSeen) return;
      this.#cancelSeen = n;
    }
    for (const listener of [...(this.#cancels.get(id)?.listeners ?? [])]) {
      try {
        listener();
      } catch (error) {
        this.logger.error({ err: error }, 'a cancel listener threw');
      }
    }
  }

  /** The notice connection dropped: what comes next may follow a gap. */
  protected connectionLost(): void {
    for (const group of this.#groups.values()) group.stale = true;
  }

  /** The notice connection is back: every followed task is read from where it was served, and the cancels sent meanwhile replayed. */
  protected connectionBack(): void {
    for (const group of this.#groups.values()) {
      group.stale = false;
      this.#read(group);
    }
    const seen = this.#cancelSeen;
    if (seen === undefined) return;
    const replayed = this.cancelsAfter(seen).then((requests) => {
      for (const [n, id] of requests) this.heardCancel(n, id);
    });
    this.track(replayed, `could not replay the cancel requests sent while the connection ${this.#on} was down`);
  }

  /** Keeps `promise` for subscribed(), logging a failure as `failure`. */
  protected track(promise: Promise<unknown>, failure: string): void {
    const settled = promise.then(
      () => undefined,
      (error: unknown) => {
        if (!this.closed) this.logger.error({ err: error }, failure);
      },
    );
    this.#pending.add(settled);
    void settled.then(() => this.#pending.delete(settled));
  }

  #start(key: string): Group {
    const group = new Group(key);
    this.#groups.set(key, group);
    this.#begin(group, false);
    return group;
  }

  /** Follows the group's task; a failed start is tried again while it has followers, then read from where it was served. */
  #begin(group: Group, retry: boolean): void {
    const started = this.follow(group).then(
      ({ top, read }) => {
        if (!retry) group.last = Math.max(group.last, Math.min(top, group.floor - 1));
        group.ready = true;
        if (retry || read || group.again || group.floor <= top) this.#read(group);
      },
      (error: unknown) => {
        group.ready = true;
        group.stop();
        if (this.closed || this.#groups.get(group.key) !== group) return;
        this.logger.error({ err: error }, `could not follow a task ${this.#on}; its subscribers may miss events`);
        setTimeout(() => {
          if (this.closed || this.#groups.get(group.key) !== group) return;
          group.ready = false;
          this.#begin(group, true);
        }, RETRY_MS).unref();
      },
    );
    this.track(started, `could not follow a task ${this.#on}`);
  }

  /** Reads and delivers the group's logged events after its last version; one read at a time per group. */
  #read(group: Group): void {
    if (!group.ready || group.reading) {
      group.again = true;
      return;
    }
    group.reading = true;
    group.again = false;
    const done = (async () => {
      try {
        for (const committed of (await this.read(group.key, group.last, false)) ?? []) this.#deliver(group, committed);
      } finally {
        group.reading = false;
        if (group.again && !this.closed && group.followers.size > 0) this.#read(group);
      }
    })();
    this.track(done, `could not read task events ${this.#on}; its subscribers may miss events`);
  }

  #deliver(group: Group, committed: CommittedEvent): void {
    if (!(committed.version > group.last)) return;
    group.last = committed.version;
    for (const follower of [...group.followers]) {
      try {
        follower(committed);
      } catch (error) {
        this.logger.error({ err: error }, 'a task event subscriber threw');
      }
    }
  }
}
