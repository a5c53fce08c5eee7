/** TaskStore contract rules: scoping, versions, compare-and-set, concurrency and failure propagation. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  InvalidPageTokenError,
  TaskExistsError,
  TaskNotFoundInStoreError,
  TaskStoreError,
  TaskVersionConflictError,
  type TaskStore,
} from '../engine/seams/task-store.js';
import { type Define, at, newScope, newId, makeTask, nextTask, EVERY, mustGet, rejectsWith, ids, TERMINAL } from './task-store-fixtures.js';

export const defineScoping: Define<TaskStore> = (test) => {
  test('get() from another tenant or another owner returns undefined', async (store) => {
    const scope = newScope('alice');
    const id = newId();
    await store.create(scope, makeTask(id));
    assert.equal(await store.get({ tenant: `${scope.tenant}-other`, owner: 'alice' }, id), undefined);
    assert.equal(await store.get({ tenant: scope.tenant, owner: 'bob' }, id), undefined);
    assert.ok(await store.get(scope, id));
  });

  test('update() from another scope rejects with TaskNotFoundInStoreError and changes nothing', async (store) => {
    const scope = newScope('alice');
    const task = makeTask(newId());
    await store.create(scope, task);
    const intruder = nextTask(task, 'overwrite', { state: 'TASK_STATE_COMPLETED' });
    await rejectsWith(store.update({ tenant: scope.tenant, owner: 'bob' }, intruder, 1), TaskNotFoundInStoreError, 'other owner');
    await rejectsWith(store.update({ tenant: `${scope.tenant}-other`, owner: 'alice' }, intruder, 1), TaskNotFoundInStoreError, 'other tenant');
    assert.deepEqual(await store.get(scope, task.id), { task, version: 1 });
  });

  test('list() never returns tasks of another tenant or owner', async (store) => {
    const alice = newScope('alice');
    const bob = { tenant: alice.tenant, owner: 'bob' };
    const otherTenant = { tenant: `${alice.tenant}-other`, owner: 'alice' };
    const mine = makeTask(newId());
    await store.create(alice, mine);
    await store.create(bob, makeTask(newId()));
    await store.create(otherTenant, makeTask(newId()));
    const page = await store.list(alice, EVERY);
    assert.deepEqual(ids(page.tasks), [mine.id]);
    assert.equal(page.totalSize, 1);
  });

  test('create() of an id taken in another scope rejects with TaskExistsError and changes nothing', async (store) => {
    const alice = newScope('alice');
    const task = makeTask(newId());
    await store.create(alice, task);
    const bob = { tenant: alice.tenant, owner: 'bob' };
    const otherTenant = { tenant: `${alice.tenant}-other`, owner: 'alice' };
    await rejectsWith(store.create(bob, makeTask(task.id, { text: 'bob' })), TaskExistsError, 'other owner');
    await rejectsWith(store.create(otherTenant, makeTask(task.id, { text: 'other' })), TaskExistsError, 'other tenant');
    assert.equal(await store.get(bob, task.id), undefined);
    assert.equal(await store.get(otherTenant, task.id), undefined);
    assert.deepEqual(await store.get(alice, task.id), { task, version: 1 });
  });

  test('scopes whose tenant and owner join to the same text stay apart', async (store) => {
    const prefix = `tenant-${randomUUID()}`;
    const one = { tenant: `${prefix}ab`, owner: 'c' };
    const two = { tenant: `${prefix}a`, owner: 'bc' };
    const id = newId();
    await store.create(one, makeTask(id));
    assert.equal(await store.get(two, id), undefined);
    assert.equal((await store.list(two, EVERY)).totalSize, 0);
  });

  test('get() of an unknown id returns undefined; update() of one rejects with TaskNotFoundInStoreError', async (store) => {
    const scope = newScope();
    const id = newId();
    assert.equal(await store.get(scope, id), undefined);
    await rejectsWith(store.update(scope, makeTask(id), 1), TaskNotFoundInStoreError, 'unknown id');
    assert.equal(await store.get(scope, id), undefined);
  });
};

export const defineVersions: Define<TaskStore> = (test) => {
  test('create() resolves with version 1 and get() returns the task at version 1', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    assert.equal(await store.create(scope, task), 1);
    assert.deepEqual(await store.get(scope, task.id), { task, version: 1 });
  });

  test('each update() resolves with the previous version + 1 and get() returns the current task and version', async (store) => {
    const scope = newScope();
    let task = makeTask(newId());
    await store.create(scope, task);
    for (let version = 1; version < 5; version++) {
      task = nextTask(task, `turn ${version}`, { timestamp: at(version) });
      assert.equal(await store.update(scope, task, version), version + 1);
      assert.deepEqual(await store.get(scope, task.id), { task, version: version + 1 });
    }
  });

  test('create() of an id already in the same scope rejects with TaskExistsError and changes nothing', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, task);
    const second = nextTask(task, 'updated');
    await store.update(scope, second, 1);
    await rejectsWith(store.create(scope, makeTask(task.id, { text: 'again' })), TaskExistsError, 'same scope');
    assert.deepEqual(await store.get(scope, task.id), { task: second, version: 2 });
  });
};

export const defineCompareAndSet: Define<TaskStore> = (test) => {
  test('update() at a stale expectedVersion rejects with TaskVersionConflictError and changes nothing', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, task);
    const current = nextTask(task, 'second', { timestamp: at(1) });
    await store.update(scope, current, 1);
    await rejectsWith(
      store.update(scope, nextTask(task, 'stale writer', { state: 'TASK_STATE_COMPLETED' }), 1),
      TaskVersionConflictError,
      'stale version',
    );
    assert.deepEqual(await store.get(scope, task.id), { task: current, version: 2 });
  });

  test('update() at a version the task has not reached rejects with TaskVersionConflictError', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, task);
    await rejectsWith(store.update(scope, nextTask(task, 'ahead'), 2), TaskVersionConflictError, 'future version');
    assert.deepEqual(await store.get(scope, task.id), { task, version: 1 });
  });

  test('a terminal task refuses every update with TaskVersionConflictError, even at its current version', async (store) => {
    const scope = newScope();
    for (const state of TERMINAL) {
      const task = makeTask(newId());
      await store.create(scope, task);
      const finished = nextTask(task, 'done', { state, timestamp: at(1) });
      assert.equal(await store.update(scope, finished, 1), 2, `moving into ${state} is an ordinary update`);
      const revived = nextTask(finished, 'revive', { state: 'TASK_STATE_WORKING', timestamp: at(2) });
      await rejectsWith(store.update(scope, revived, 2), TaskVersionConflictError, `stored ${state}`);
      await rejectsWith(store.update(scope, finished, 2), TaskVersionConflictError, `stored ${state}, same content`);
      assert.deepEqual(await store.get(scope, task.id), { task: finished, version: 2 });
    }
  });

  test('a task created in a terminal state refuses updates too', async (store) => {
    const scope = newScope();
    const task = makeTask(newId(), { state: 'TASK_STATE_REJECTED' });
    await store.create(scope, task);
    await rejectsWith(store.update(scope, nextTask(task, 'retry', { state: 'TASK_STATE_WORKING' }), 1), TaskVersionConflictError, 'created terminal');
    assert.deepEqual(await store.get(scope, task.id), { task, version: 1 });
  });

  test('an interrupted task (input-required, auth-required) still accepts updates', async (store) => {
    const scope = newScope();
    for (const state of ['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED'] as const) {
      const task = makeTask(newId());
      await store.create(scope, task);
      const parked = nextTask(task, 'need more', { state });
      await store.update(scope, parked, 1);
      const resumed = nextTask(parked, 'more', { state: 'TASK_STATE_WORKING', timestamp: at(1) });
      assert.equal(await store.update(scope, resumed, 2), 3, `a task in ${state} is not terminal`);
    }
  });
};

export const defineConcurrency: Define<TaskStore> = (test) => {
  test('of 50 concurrent updates naming the same version, exactly one succeeds and the stored task is its', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, task);
    const attempts = Array.from({ length: 50 }, (_, i) => nextTask(task, `writer ${i}`, { timestamp: at(i + 1) }));
    const results = await Promise.allSettled(attempts.map((attempt) => store.update(scope, attempt, 1)));
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    assert.equal(winners.length, 1, `exactly one writer wins, got ${winners.length}`);
    assert.deepEqual(results[winners[0]], { status: 'fulfilled', value: 2 });
    for (const r of results) {
      if (r.status === 'rejected') assert.ok(r.reason instanceof TaskVersionConflictError, `losers get a conflict, got ${String(r.reason)}`);
    }
    assert.deepEqual(await store.get(scope, task.id), { task: attempts[winners[0]], version: 2 });
  });

  test('concurrent read-modify-write writers that retry on conflict lose no update', async (store) => {
    const scope = newScope();
    const task = { ...makeTask(newId()), metadata: { count: 0 } };
    await store.create(scope, task);
    const writers = 16;
    const write = async (writer: number) => {
      for (let attempt = 0; attempt < 1000; attempt++) {
        const current = await mustGet(store, scope, task.id);
        const next = { ...nextTask(current.task, `writer ${writer}`), metadata: { count: Number(current.task.metadata?.count) + 1 } };
        try {
          await store.update(scope, next, current.version);
          return;
        } catch (error) {
          if (!(error instanceof TaskVersionConflictError)) throw error;
        }
      }
      assert.fail(`writer ${writer} never got its update in`);
    };
    await Promise.all(Array.from({ length: writers }, (_, i) => write(i)));
    const final = await mustGet(store, scope, task.id);
    assert.equal(final.task.metadata?.count, writers, 'every increment is applied');
    assert.equal(final.version, writers + 1);
    const texts = (final.task.history ?? [])
      .slice(1)
      .map((m) => ('text' in m.parts[0] ? m.parts[0].text : ''))
      .sort();
    assert.deepEqual(texts, Array.from({ length: writers }, (_, i) => `writer ${i}`).sort(), 'each writer appears once');
  });

  test('of concurrent creates of one id, exactly one succeeds and the others reject with TaskExistsError', async (store) => {
    const scopes = Array.from({ length: 20 }, (_, i) => (i % 2 ? newScope('alice') : newScope('bob')));
    const id = newId();
    const tasks = scopes.map((_, i) => makeTask(id, { text: `creator ${i}` }));
    const results = await Promise.allSettled(tasks.map((task, i) => store.create(scopes[i], task)));
    const winners = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    assert.equal(winners.length, 1, `exactly one create wins, got ${winners.length}`);
    for (const r of results) {
      if (r.status === 'rejected') assert.ok(r.reason instanceof TaskExistsError, `losers get TaskExistsError, got ${String(r.reason)}`);
    }
    assert.deepEqual(await store.get(scopes[winners[0]], id), { task: tasks[winners[0]], version: 1 });
  });

  test('concurrent updates to different tasks do not conflict with each other', async (store) => {
    const scope = newScope();
    const tasks = Array.from({ length: 20 }, () => makeTask(newId()));
    await Promise.all(tasks.map((task) => store.create(scope, task)));
    const updated = tasks.map((task) => nextTask(task, 'second'));
    const versions = await Promise.all(updated.map((task) => store.update(scope, task, 1)));
    assert.deepEqual(
      versions,
      updated.map(() => 2),
    );
    for (const task of updated) assert.deepEqual(await store.get(scope, task.id), { task, version: 2 });
  });
};

export const defineFailures: Define<TaskStore> = (test) => {
  test('store errors are instances of the exported classes, so the engine can tell them apart', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, task);
    const caught = async (promise: Promise<unknown>) => {
      try {
        await promise;
      } catch (error) {
        return error;
      }
      return assert.fail('expected a rejection');
    };
    const exists = await caught(store.create(scope, task));
    const conflict = await caught(store.update(scope, nextTask(task, 'x'), 7));
    const missing = await caught(store.update(scope, makeTask(newId()), 1));
    const token = await caught(store.list(scope, { pageSize: 1, pageToken: 'not a page token' }));
    const classes = [TaskExistsError, TaskVersionConflictError, TaskNotFoundInStoreError, InvalidPageTokenError];
    [exists, conflict, missing, token].forEach((error, i) => {
      classes.forEach((cls, j) => assert.equal(error instanceof cls, i === j, `${String(error)} instanceof ${cls.name}`));
    });
    for (const error of [exists, conflict, missing]) assert.ok(error instanceof TaskStoreError, `${String(error)} is a TaskStoreError`);
    assert.equal((exists as TaskExistsError).taskId, task.id);
    assert.equal((conflict as TaskVersionConflictError).taskId, task.id);
    assert.equal((conflict as TaskVersionConflictError).expectedVersion, 7);
  });

  test('errors arrive as rejected promises, never as synchronous throws', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, task);
    const calls: Array<() => Promise<unknown>> = [
      () => store.create(scope, task),
      () => store.update(scope, nextTask(task, 'x'), 9),
      () => store.update(scope, makeTask(newId()), 1),
      () => store.list(scope, { pageSize: 1, pageToken: 'not a page token' }),
    ];
    for (const call of calls) {
      let pending: Promise<unknown> | undefined;
      assert.doesNotThrow(() => {
        pending = call();
      });
      await assert.rejects(pending!);
    }
  });
};
