/** a2a-express-kit/testing: contract suites for your own store, bus, leases and push store, and a latency wrapper. */
export { describeTaskStoreContract } from './task-store-contract.js';
export type { TaskStoreContractOptions } from './task-store-contract.js';
export type { ContractDescribe, ContractIt } from './contract-harness.js';
export { withLatency } from './latency-store.js';
export type { LatencyOptions } from './latency-store.js';

// What a store implementation needs, so a store and its tests can import from one place.
export { InMemoryTaskStore } from '../backends/memory/in-memory-task-store.js';
export {
  TaskStoreError,
  TaskExistsError,
  TaskVersionConflictError,
  TaskNotFoundInStoreError,
  InvalidPageTokenError,
} from '../engine/seams/task-store.js';
export type { TaskStore, TaskScope, VersionedTask, TaskChange, ListTasksQuery, TaskPage } from '../engine/seams/task-store.js';
export type { Task, TaskState, TaskArtifactUpdateEvent } from '../protocol/schemas.js';
export { describeTaskEventBusContract } from './task-event-bus-contract.js';
export type { TaskEventBusContractOptions } from './task-event-bus-contract.js';
export { describeTaskLeasesContract } from './task-leases-contract.js';
export type { TaskLeasesContractOptions } from './task-leases-contract.js';
export { describePushConfigStoreContract } from './push-config-store-contract.js';
export type { PushConfigStoreContractOptions } from './push-config-store-contract.js';
