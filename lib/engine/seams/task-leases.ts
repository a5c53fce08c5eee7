/** The lease seam: with several replicas on one store, exactly one process runs a task's turns at a time. */
import type { TaskScope, TaskStore } from './task-store.js';

/** Which task a lease is for (the engine's task key is `taskKey(scope, taskId)`). */
export interface LeasedTask {
  readonly scope: TaskScope;
  readonly taskId: string;
}

export interface TaskLease {
  /** Gives the lease up (idempotent); renewals stop. */
  release(): Promise<void>;
  /** True once a renewal found the lease taken or expired: another replica may run the task now. */
  readonly lost: boolean;
}

/**
 * The engine takes a task's lease before a turn runs (a follow-up that finds it held by another replica waits here, then runs in its own request's
 * context), holds it while the task's execution is live (the implementation renews it), and releases it when the execution goes idle. A replica that
 * dies stops renewing: once its lease expires, one replica claims the task through claimExpired() and the engine settles it. One process alone needs
 * no leases (the router's default).
 */
export interface TaskLeases {
  /**
   * Takes `key`'s lease for this process. While another process holds it, waits until it is released or expires, at most `waitMs`; then resolves with
   * undefined (the caller refuses the message). Rejects when the lease store fails.
   */
  acquire(key: string, task: LeasedTask, waitMs: number): Promise<TaskLease | undefined>;
  /**
   * Tasks whose lease expired without being released (their process died), each returned to exactly one caller across all processes, which must
   * settle it. [] when there are none.
   */
  claimExpired(): Promise<LeasedTask[]>;
  /** How often the engine should call claimExpired() (about the lease's time to live). */
  readonly sweepIntervalMs: number;
  /**
   * Optional: whether any process holds `key`'s lease now (taken, not released, not expired): a turn of the task runs somewhere. A cancel() hook's
   * `running` reads it.
   */
  isHeld?(key: string): Promise<boolean>;
  /** Optional: leases that ride on one task store's writes (see LeasesOnWrites). */
  readonly onWrites?: LeasesOnWrites;
}

/**
 * Optional, for a backend whose task store and leases share one database: the create of a task takes the lease given by leaseOnCreate() in its own
 * write, and a terminal write of a task through `store` gives back the lease this process holds for it (its release() then costs nothing). The engine
 * uses it only when it writes through `store` itself; everything else acquires and releases.
 */
export interface LeasesOnWrites {
  /** The store whose writes take and give back these leases. */
  readonly store: TaskStore;
  /**
   * `key`'s lease for a task this process is about to create through `store`. Nobody can see the task before its create, so nobody else can run its
   * turns: the create's write takes the lease (renewed from then on; a create that finds it held elsewhere rejects). A task never created leaves
   * nothing to give back; release() as for acquire()'s lease.
   */
  leaseOnCreate(key: string, task: LeasedTask): TaskLease;
}
