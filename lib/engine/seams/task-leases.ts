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
 * The engine takes a task's lease before a turn runs (a follow-up finding it held elsewhere waits), holds it while the execution is live (the
 * implementation renews it) and releases it when idle. A dead replica's leases expire and claimExpired() hands its tasks to one replica.
 */
export interface TaskLeases {
  /** Takes `key`'s lease; while another process holds it, waits up to `waitMs`, then resolves with undefined. Rejects when the lease store fails. */
  acquire(key: string, task: LeasedTask, waitMs: number): Promise<TaskLease | undefined>;
  /** Tasks whose lease expired unreleased, each returned to exactly one caller across all processes, which must settle it. */
  claimExpired(): Promise<LeasedTask[]>;
  /** How often the engine should call claimExpired() (about the lease's time to live). */
  readonly sweepIntervalMs: number;
  /** Optional: whether any process holds `key`'s lease now (a cancel() hook's `running`). */
  isHeld?(key: string): Promise<boolean>;
  /** Optional: leases that ride on one task store's writes (see LeasesOnWrites). */
  readonly onWrites?: LeasesOnWrites;
}

/**
 * Optional, when task store and leases share one database: a create takes the lease in its own write, and a terminal write gives it back
 * (release() then costs nothing). Used only for writes through `store`.
 */
export interface LeasesOnWrites {
  readonly store: TaskStore;
  /**
   * The lease for a task about to be created through `store`: nobody sees the task before its create, whose write takes the lease (a create
   * finding it held elsewhere rejects); release() as for acquire()'s lease.
   */
  leaseOnCreate(key: string, task: LeasedTask): TaskLease;
}
