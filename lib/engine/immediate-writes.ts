/** Task writes and reads a store makes within the call (the in-memory store): no promise, deadline or await for them. */
import type { Task } from '../protocol/schemas.js';
import type { TaskChange, TaskScope, TaskStore, VersionedTask } from './seams/task-store.js';

/** Where a store offers its ImmediateWrites (a symbol: no public method, nothing for a wrapper to copy by accident). */
export const IMMEDIATE_WRITES: unique symbol = Symbol('a2a-express-kit.immediateWrites');

export interface ImmediateWrites {
  readonly create: TaskStore['create'];
  readonly update: TaskStore['update'];
  /** create() done now: the version, or the error create() would reject with, thrown. */
  createNow(scope: TaskScope, task: Task): number;
  /** update() done now: the version, or the error update() would reject with, thrown. */
  updateNow(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange): number;
  readonly get?: TaskStore['get'];
  /** get() done now: what get() would resolve with, or its error, thrown. */
  getNow?(scope: TaskScope, taskId: string): VersionedTask | undefined;
}

type Offering = TaskStore & { readonly [IMMEDIATE_WRITES]?: ImmediateWrites };

/** Only while create and update are the ones they stand for: a subclass or wrapper replacing either is called as it is. */
export function immediateWritesOf(store: TaskStore): ImmediateWrites | undefined {
  const writes = (store as Offering)[IMMEDIATE_WRITES];
  return writes && store.create === writes.create && store.update === writes.update ? writes : undefined;
}

/** The store's get() made within the call, while its get is still the one it stands for (as immediateWritesOf). */
export function immediateReadOf(store: TaskStore): ImmediateWrites['getNow'] {
  const writes = (store as Offering)[IMMEDIATE_WRITES];
  return writes?.getNow && writes.get === store.get ? writes.getNow : undefined;
}
