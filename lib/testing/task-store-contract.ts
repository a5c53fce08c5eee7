/** The TaskStore contract as a test suite a user runs on their own store. */
import type { TaskStore } from '../engine/seams/task-store.js';
import { contractHarness, onFreshInstance, type ContractHarnessOptions } from './contract-harness.js';
import { defineCompareAndSet, defineConcurrency, defineFailures, defineScoping, defineVersions } from './task-store-rules-core.js';
import { defineCloneIsolation, defineLargeTasks, defineListing } from './task-store-rules-data.js';
import { defineAppendCompareAndSet, defineAppendConcurrency, defineArtifactAppends, defineChangeHint } from './task-store-rules-artifacts.js';
import { defineRetention } from './task-store-rules-retention.js';
import { defineTraceContexts } from './task-store-trace-contract.js';

/**
 * Options of describeTaskStoreContract: `cleanup` runs after each test with the store it used
 * (close a connection, drop a schema); `timeoutMs` (per test, store creation and cleanup included)
 * defaults to 10000.
 */
export type TaskStoreContractOptions<S extends TaskStore = TaskStore> = ContractHarnessOptions<S>;

/** Registers the contract suite for the store `makeStore` builds; it is called once per test. */
export function describeTaskStoreContract<S extends TaskStore>(
  name: string,
  makeStore: () => S | Promise<S>,
  options: TaskStoreContractOptions<S> = {},
): void {
  const harness = contractHarness('describeTaskStoreContract', options, { timeoutMs: 10_000 });
  const { describe } = harness;
  const test = onFreshInstance(harness.test, makeStore);

  describe(`TaskStore contract: ${name}`, () => {
    describe('scoping', () => defineScoping(test));
    describe('versions', () => defineVersions(test));
    describe('compare-and-set', () => {
      defineCompareAndSet(test);
      defineAppendCompareAndSet(test);
    });
    describe('concurrency', () => {
      defineConcurrency(test);
      defineAppendConcurrency(test);
    });
    describe('clone isolation', () => defineCloneIsolation(test));
    describe('large tasks', () => defineLargeTasks(test));
    describe('listing', () => defineListing(test));
    describe('change hint', () => defineChangeHint(test));
    describe('artifact appends', () => defineArtifactAppends(test));
    describe('failure propagation', () => defineFailures(test));
    // Optional in the seam: each test passes at once on a store without removeFinished().
    describe('retention (removeFinished, when the store has it)', () => defineRetention(test));
    describe('trace context (saveTraceContext, when the store has it)', () => defineTraceContexts(test));
  });
}
