/** What keeps one task's execution right when processes share the store: its lease, orphans, hand-offs, cross-process cancels. */
import { A2AError, busyElsewhere } from '../../errors.js';
import type { Logger } from '../../options.js';
import type { Task } from '../../protocol/schemas.js';
import type { CommittedEvent, TaskEventBus } from '../seams/task-event-bus.js';
import type { TaskLease, TaskLeases } from '../seams/task-leases.js';
import type { TaskScope } from '../seams/task-store.js';
import { endsTurn, isInterrupted, isTerminal } from '../task-state.js';
import type { TaskChannel } from './task-channel.js';
import type { Turn } from './turn.js';

export interface ReplicaGuardDeps {
  readonly bus: TaskEventBus;
  readonly logger: Logger;
  readonly leases?: TaskLeases;
  readonly leaseWaitMs: number;
  /** Before this process ends a turn canceled elsewhere (default 5 s). */
  readonly cancelGraceMs?: number;
}

export class ReplicaGuard {
  readonly #deps: ReplicaGuardDeps;
  readonly #key: string;
  readonly #scope: TaskScope;
  readonly #taskId: string;
  readonly #onCancelRequest: () => void;
  #lease: TaskLease | undefined;
  #stopCancelListener: (() => void) | undefined;
  #stopFollowing: (() => void) | undefined;
  #stopWatching: (() => void) | undefined;

  constructor(deps: ReplicaGuardDeps, key: string, scope: TaskScope, taskId: string, onCancelRequest: () => void) {
    this.#deps = deps;
    this.#key = key;
    this.#scope = scope;
    this.#taskId = taskId;
    this.#onCancelRequest = onCancelRequest;
  }

  get needsLease(): boolean {
    return this.#deps.leases !== undefined && this.#lease === undefined;
  }

  /** True when the lease is taken now or held already; true without leases. */
  async leaseNow(): Promise<boolean> {
    const leases = this.#deps.leases;
    if (!leases || this.#lease) return true;
    this.#lease = await leases.acquire(this.#key, { scope: this.#scope, taskId: this.#taskId }, 0);
    return this.#lease !== undefined;
  }

  get leased(): boolean {
    return this.#lease !== undefined;
  }

  /** Waits out another replica's turn, then re-reads a follow-up's task; resolves with a refusal or undefined. */
  async takeLease(channel: TaskChannel<unknown>): Promise<A2AError | undefined> {
    const { leases, leaseWaitMs, logger } = this.#deps;
    const onWrites = leases!.onWrites;
    // Its create takes the lease in the same write.
    if (onWrites && !channel.task) {
      this.#lease = onWrites.leaseOnCreate(this.#key, { scope: this.#scope, taskId: this.#taskId });
      return undefined;
    }
    let lease: TaskLease | undefined;
    try {
      // A task not created yet has no holder to wait for: its client waits one store deadline at most.
      lease = await leases!.acquire(this.#key, { scope: this.#scope, taskId: this.#taskId }, channel.task ? leaseWaitMs : 0);
    } catch (error) {
      logger.debug({ err: error, taskId: this.#taskId }, 'the task lease store failed'); // the outage is logged once
      return new A2AError('Unavailable');
    }
    if (!lease) return busyElsewhere(this.#taskId);
    this.#lease = lease;
    if (!channel.task) return undefined;
    try {
      await channel.reload();
    } catch (error) {
      return error as A2AError; // reload() rejects with what the client hears
    }
    const state = channel.task.status.state;
    // Still mid-turn although the lease is free: its replica died; the sweep settles it.
    return !isInterrupted(state) && !isTerminal(state) ? busyElsewhere(this.#taskId) : undefined;
  }

  /** Not when parked or finished by now; with leases only while holding its lease, taken at once or not at all. */
  async claimOrphan(channel: TaskChannel<unknown>): Promise<boolean> {
    const leases = this.#deps.leases;
    if (leases) {
      this.#lease = await leases.acquire(this.#key, { scope: this.#scope, taskId: this.#taskId }, 0);
      if (!this.#lease) return false;
    }
    await channel.reload();
    const state = channel.task!.status.state;
    if (isTerminal(state) || isInterrupted(state)) return false;
    this.#deps.logger.warn({ taskId: this.#taskId }, 'a task was left mid-turn by a process that stopped; it is resumed or failed');
    return true;
  }

  /** Until release(). */
  listenForCancel(): void {
    this.#stopCancelListener ??= this.#deps.bus.onCancelRequest(this.#key, this.#onCancelRequest);
  }

  /** Handed-off work is told through the bus (its publisher may be elsewhere). */
  abort(turn: Turn): void {
    turn.cancel();
    if (turn.handedOff) this.routeCancel();
  }

  routeCancel(): void {
    this.#deps.bus.requestCancel(this.#key);
  }

  /** One that parks or finishes the task ends it through `end`. */
  follow(turn: Turn, seen: number, end: (turn: Turn, task: Task) => void): void {
    this.#stopFollowing = this.#deps.bus.subscribe(this.#key, (committed) => {
      if (turn.closed || committed.version <= seen) return;
      seen = committed.version;
      turn.notify(committed.event, committed.version);
      if (endsTurn(committed.task.status.state)) end(turn, committed.task);
    });
  }

  stopFollowing(): void {
    this.#stopFollowing?.();
    this.#stopFollowing = undefined;
  }

  /** Until release(); `graceOver` runs after the grace period. */
  watchForEnd(ended: (committed: CommittedEvent) => void, graceOver: () => void): void {
    // A watch left by an earlier turn's cancel (that turn parked meanwhile) gives way to this one.
    this.#stopWatching?.();
    const stop = this.#deps.bus.subscribe(this.#key, (committed) => {
      if (isTerminal(committed.task.status.state)) ended(committed);
    });
    const timer = setTimeout(graceOver, this.#deps.cancelGraceMs ?? 5_000);
    timer.unref();
    this.#stopWatching = () => {
      clearTimeout(timer);
      stop();
    };
  }

  release(): void {
    this.#stopCancelListener?.();
    this.#stopCancelListener = undefined;
    this.#stopWatching?.();
    this.#stopWatching = undefined;
    const lease = this.#lease;
    if (!lease) return;
    this.#lease = undefined;
    lease
      .release()
      .catch((error: unknown) => this.#deps.logger.debug({ err: error, taskId: this.#taskId }, 'could not release the task lease; it expires'));
  }
}
