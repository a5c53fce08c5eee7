/**
 * The task leases a PostgresTaskStore's writes carry for its linked PostgresTaskLeases: a create takes the lease leaseOnCreate() gave, in its own
 * statement; a terminal write gives back the lease held here.
 */
import type { LeasedTask, LeasesOnWrites, TaskLease } from '../../engine/seams/task-leases.js';
import type { TaskScope, TaskStore } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/seams/task-store.js';
import type { HeldLease, LeaseRef } from '../shared/expiring-leases.js';

/** What the linked leases do for this bridge (PostgresTaskLeases supplies it). */
interface LeaseStatements {
  /** The leases table. */
  readonly table: string;
  /** The channel a release is notified on (its payload: the key's wire form). */
  readonly releasedChannel: string;
  readonly ttlMs: number;
  /** A fresh holder for `key`. */
  newRef(key: string, task: LeasedTask): LeaseRef;
  /** Holds `ref`, taken by a store write, and renews it from now (undefined once closed: given back). */
  adopt(ref: LeaseRef): TaskLease | undefined;
  /** Deletes `ref`'s row if it still names its holder (the leases' own release statement). */
  release(ref: LeaseRef): Promise<void>;
}

const RESOLVED: Promise<void> = Promise.resolve();

/** A turn that creates and finishes a task then runs two statements instead of four (each a socket write and an answer to parse). */
export class WriteLeases {
  readonly #statements: LeaseStatements;
  /** The store whose writes carry the leases, once linked. */
  #store: TaskStore | undefined;
  #onWrites: LeasesOnWrites | undefined;
  /** Leases for tasks not created yet, by key. */
  readonly #pending = new Map<string, LeaseOnCreate>();
  /** Leases held here now, by key (what a terminal write may give back). */
  readonly #held = new Map<string, HeldLease>();

  constructor(statements: LeaseStatements) {
    this.#statements = statements;
  }

  /** The seam's capability, once a store is linked. */
  get onWrites(): LeasesOnWrites | undefined {
    return this.#onWrites;
  }

  /** `store`'s writes carry these leases from now (one store per leases). */
  link(store: TaskStore): void {
    if (this.#store && this.#store !== store) throw new Error('these PostgresTaskLeases are linked to another PostgresTaskStore already');
    this.#store = store;
    this.#onWrites = { store, leaseOnCreate: (key, task) => this.#leaseOnCreate(key, task) };
  }

  held(lease: HeldLease): void {
    this.#held.set(lease.ref.key, lease);
  }

  dropped(lease: HeldLease): void {
    if (this.#held.get(lease.ref.key) === lease) this.#held.delete(lease.ref.key);
  }

  #leaseOnCreate(key: string, task: LeasedTask): TaskLease {
    const lease = new LeaseOnCreate(this.#statements, this.#statements.newRef(key, task), () => {
      if (this.#pending.get(key) === lease) this.#pending.delete(key);
    });
    this.#pending.set(key, lease);
    return lease;
  }

  /**
   * The create of the task takes its pending lease: its key and holder, and what to tell the lease once the statement ended (taken, not taken, or
   * unknown: the statement failed). Undefined when none is pending, or when the task is created finished (nothing runs its turns: no lease to take).
   */
  claimOnCreate(
    scope: TaskScope,
    taskId: string,
    finished: boolean,
  ): { key: string; holder: string; ended: (taken: boolean | undefined) => void } | undefined {
    if (this.#pending.size === 0) return undefined;
    const key = taskKey(scope, taskId);
    const lease = this.#pending.get(key);
    if (!lease) return undefined;
    this.#pending.delete(key);
    if (finished) {
      lease.settle(false);
      return undefined;
    }
    lease.writing();
    return { key, holder: lease.ref.holder, ended: (taken) => lease.settle(taken) };
  }

  /**
   * The WITH clause `lease`: takes the lease of each row of `source` (columns key, tenant, owner, id, holder) that has a holder, when free or
   * expired, and only for a task that does not exist (its create then fails: never over an existing task's lease); returns the keys taken.
   */
  takeSql(source: string, tasksTable: string): string {
    const { table, ttlMs } = this.#statements;
    return `lease AS (
        INSERT INTO ${table} AS l (key, tenant, owner, task_id, holder, expires_at)
        SELECT src.key, src.tenant, src.owner, src.id, src.holder, clock_timestamp() + ${ttlMs} * interval '1 millisecond' FROM ${source} src
        WHERE src.holder IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${tasksTable} WHERE id = src.id)
        ON CONFLICT (key) DO UPDATE SET tenant = EXCLUDED.tenant, owner = EXCLUDED.owner, task_id = EXCLUDED.task_id,
          holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
        WHERE l.expires_at <= clock_timestamp()
        RETURNING l.key
      )`;
  }

  get table(): string {
    return this.#statements.table;
  }

  get releasedChannel(): string {
    return this.#statements.releasedChannel;
  }

  /**
   * The lease held here for the task, for its terminal write to give back (see postgres-row-writes.ts): its key and holder, and what to tell it once
   * the write ended. Undefined when none is held.
   */
  giveBackFor(scope: TaskScope, taskId: string): { key: string; holder: string; ended: (given: boolean) => void } | undefined {
    if (this.#held.size === 0) return undefined;
    const key = taskKey(scope, taskId);
    const held = this.#held.get(key);
    if (!held) return undefined;
    held.givingBack();
    return { key, holder: held.ref.holder, ended: (given) => held.gaveBack(given) };
  }
}

/**
 * A lease a create is to take: nothing until then; held (renewed) once the create took it; given back by its own statement only when the create's
 * outcome is unknown (the statement failed).
 */
class LeaseOnCreate implements TaskLease {
  readonly ref: LeaseRef;
  readonly #statements: LeaseStatements;
  readonly #forget: () => void;
  /** The create's statement is under way: release() waits for it. */
  #written: Promise<void> | undefined;
  #settled: (() => void) | undefined;
  #held: TaskLease | undefined;
  /** The create failed without telling whether the lease was taken. */
  #unknown = false;
  #released: Promise<void> | undefined;

  constructor(statements: LeaseStatements, ref: LeaseRef, forget: () => void) {
    this.#statements = statements;
    this.ref = ref;
    this.#forget = forget;
  }

  get lost(): boolean {
    return this.#held?.lost ?? false;
  }

  writing(): void {
    this.#written = new Promise((resolve) => (this.#settled = resolve));
  }

  /** The create's statement ended: the lease taken (true), not taken (false), or unknown (undefined). */
  settle(taken: boolean | undefined): void {
    if (taken === true) this.#held = this.#statements.adopt(this.ref);
    else if (taken === undefined) this.#unknown = true;
    this.#settled?.();
  }

  release(): Promise<void> {
    this.#forget();
    if (!this.#released) {
      const released = (this.#released = this.#written ? this.#written.then(() => this.#giveBack()) : RESOLVED);
      // A later release() tries again; meanwhile the lease just expires.
      released.catch(() => {
        if (this.#released === released) this.#released = undefined;
      });
    }
    return this.#released;
  }

  #giveBack(): Promise<void> {
    if (this.#held) return this.#held.release();
    return this.#unknown ? this.#statements.release(this.ref) : RESOLVED;
  }
}
