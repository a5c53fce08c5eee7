/** The PushConfigStore contract as a test suite every push config store runs (ours and users'). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { TaskScope } from '../engine/seams/task-store.js';
import { PushConfigLimitError, type PushConfigStore, type StoredPushConfig } from '../engine/seams/push-config-store.js';
import { contractHarness, onFreshInstance, type ContractHarnessOptions } from './contract-harness.js';

/**
 * Options of describePushConfigStoreContract: `cleanup` runs after each test with the store it used
 * (close a connection); `timeoutMs` is per test (default 10000).
 */
export type PushConfigStoreContractOptions<S extends PushConfigStore = PushConfigStore> = ContractHarnessOptions<S>;

const newScope = (owner = 'alice'): TaskScope => ({ tenant: `tenant-${randomUUID()}`, owner });
const newTask = (): string => `task-${randomUUID()}`;

function config(taskId: string, id: string, extra: Partial<StoredPushConfig> = {}): StoredPushConfig {
  return {
    id,
    taskId,
    url: `https://hooks.example.com/${id}`,
    token: `token-${id}`,
    authentication: { scheme: 'Bearer', credentials: `secret-${id}` },
    protocol: '1.0',
    ...extra,
  };
}

/** Registers the contract suite for the store `makeStore` builds; it is called once per test. */
export function describePushConfigStoreContract<S extends PushConfigStore>(
  name: string,
  makeStore: () => S | Promise<S>,
  options: PushConfigStoreContractOptions<S> = {},
): void {
  const harness = contractHarness('describePushConfigStoreContract', options, { timeoutMs: 10_000 });
  const { describe } = harness;
  const test = onFreshInstance(harness.test, makeStore);

  describe(`PushConfigStore contract: ${name}`, () => {
    test('get returns what put stored, and undefined for an unknown id or task', async (store) => {
      const scope = newScope();
      const taskId = newTask();
      const stored = config(taskId, 'c-1', { protocol: '0.3' });
      await store.put(scope, stored, 10);
      assert.deepEqual(await store.get(scope, taskId, 'c-1'), stored);
      assert.equal(await store.get(scope, taskId, 'c-2'), undefined);
      assert.equal(await store.get(scope, newTask(), 'c-1'), undefined);
    });

    test('a config of another owner or tenant looks missing, and is not touched by their writes', async (store) => {
      const scope = newScope('alice');
      const taskId = newTask();
      await store.put(scope, config(taskId, 'c-1'), 10);
      for (const other of [
        { tenant: scope.tenant, owner: 'mallory' },
        { tenant: `${scope.tenant}-other`, owner: 'alice' },
      ]) {
        assert.equal(await store.get(other, taskId, 'c-1'), undefined);
        assert.deepEqual(await store.list(other, taskId), []);
        await store.delete(other, taskId, 'c-1');
        await store.deleteAll(other, taskId);
        await store.setFailing(other, taskId, 'c-1', true);
      }
      assert.deepEqual(await store.get(scope, taskId, 'c-1'), config(taskId, 'c-1'));
    });

    test('list is oldest first; a put with an existing id replaces it in place', async (store) => {
      const scope = newScope();
      const taskId = newTask();
      for (const id of ['c-1', 'c-2', 'c-3']) await store.put(scope, config(taskId, id), 10);
      await store.put(scope, config(taskId, 'c-2', { url: 'https://hooks.example.com/changed' }), 10);
      const listed = await store.list(scope, taskId);
      assert.deepEqual(
        listed.map((c) => c.id),
        ['c-1', 'c-2', 'c-3'],
      );
      assert.equal(listed[1].url, 'https://hooks.example.com/changed');
      assert.deepEqual(await store.list(scope, newTask()), []);
    });

    test('put refuses a config beyond maxPerTask with PushConfigLimitError, but replacing one is allowed', async (store) => {
      const scope = newScope();
      const taskId = newTask();
      await store.put(scope, config(taskId, 'c-1'), 2);
      await store.put(scope, config(taskId, 'c-2'), 2);
      await assert.rejects(store.put(scope, config(taskId, 'c-3'), 2), PushConfigLimitError);
      await store.put(scope, config(taskId, 'c-2', { token: 'new' }), 2);
      assert.deepEqual(
        (await store.list(scope, taskId)).map((c) => c.id),
        ['c-1', 'c-2'],
      );
      // The bound is per task.
      await store.put(scope, config(newTask(), 'c-3'), 2);
    });

    test('delete is idempotent and removes only that config', async (store) => {
      const scope = newScope();
      const taskId = newTask();
      await store.put(scope, config(taskId, 'c-1'), 10);
      await store.put(scope, config(taskId, 'c-2'), 10);
      await store.delete(scope, taskId, 'c-1');
      await store.delete(scope, taskId, 'c-1');
      await store.delete(scope, taskId, 'never');
      assert.deepEqual(
        (await store.list(scope, taskId)).map((c) => c.id),
        ['c-2'],
      );
    });

    test('deleteAll removes every config of the task and nothing else', async (store) => {
      const scope = newScope();
      const taskId = newTask();
      const otherTask = newTask();
      await store.put(scope, config(taskId, 'c-1'), 10);
      await store.put(scope, config(taskId, 'c-2'), 10);
      await store.put(scope, config(otherTask, 'c-1'), 10);
      await store.deleteAll(scope, taskId);
      await store.deleteAll(scope, taskId);
      assert.deepEqual(await store.list(scope, taskId), []);
      assert.equal((await store.list(scope, otherTask)).length, 1);
    });

    test('setFailing marks and clears; a missing config is ignored', async (store) => {
      const scope = newScope();
      const taskId = newTask();
      await store.put(scope, config(taskId, 'c-1'), 10);
      await store.setFailing(scope, taskId, 'c-1', true);
      assert.equal((await store.get(scope, taskId, 'c-1'))?.failing, true);
      await store.setFailing(scope, taskId, 'c-1', false);
      assert.notEqual((await store.get(scope, taskId, 'c-1'))?.failing, true);
      await store.setFailing(scope, taskId, 'missing', true);
      assert.equal(await store.get(scope, taskId, 'missing'), undefined);
    });

    test('credentials and token are kept in full (the service masks them, not the store)', async (store) => {
      const scope = newScope();
      const taskId = newTask();
      await store.put(scope, config(taskId, 'c-1'), 10);
      const got = await store.get(scope, taskId, 'c-1');
      assert.equal(got?.authentication?.credentials, 'secret-c-1');
      assert.equal(got?.token, 'token-c-1');
    });

    test('objects are copied in and out', async (store) => {
      const scope = newScope();
      const taskId = newTask();
      const input = { ...config(taskId, 'c-1'), authentication: { scheme: 'Bearer', credentials: 'one' } };
      await store.put(scope, input, 10);
      input.authentication.credentials = 'changed';
      const out = await store.get(scope, taskId, 'c-1');
      assert.equal(out?.authentication?.credentials, 'one');
      (out!.authentication as { credentials?: string }).credentials = 'mutated';
      assert.equal((await store.get(scope, taskId, 'c-1'))?.authentication?.credentials, 'one');
    });

    test('concurrent puts of different ids all land, up to the bound', async (store) => {
      const scope = newScope();
      const taskId = newTask();
      const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => store.put(scope, config(taskId, `c-${i}`), 4)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 4);
      for (const result of results) if (result.status === 'rejected') assert.ok(result.reason instanceof PushConfigLimitError);
      assert.equal((await store.list(scope, taskId)).length, 4);
    });
  });
}
