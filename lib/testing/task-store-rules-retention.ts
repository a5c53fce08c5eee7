/** TaskStore contract rules for retention: removeFinished(), when the store has it. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Task, TaskState } from '../protocol/schemas.js';
import type { TaskStore } from '../engine/seams/task-store.js';
import { type Define, newScope, newId, makeTask, nextTask, EVERY, mustGet, ids, InPlaceWriter, appendText, TERMINAL } from './task-store-fixtures.js';

/**
 * removeFinished() sweeps every scope, so each test works in a time window of its own, about 30
 * years back and later than every earlier test's (a store shared between tests, or with a run
 * before, then never mixes counts), and clears the finished tasks of its window when done. The
 * suite's other tests stamp their tasks in 2026: no window reaches them. Two processes running
 * this group on one database at once would sweep each other's windows: give each its own.
 */
let lastWindow = 0;
function retentionWindow(): (ms: number) => string {
  const start = Math.max(lastWindow + 1_000, Date.now() - 30 * 365 * 86_400_000);
  lastWindow = start;
  return (ms: number) => new Date(start + ms).toISOString();
}

type Sweepable = TaskStore & { removeFinished(finishedBefore: string, limit: number): Promise<number> };

/** Removes every finished task before `cutoff`; fails instead of looping forever. */
async function drain(store: Sweepable, cutoff: string): Promise<void> {
  for (let i = 0; (await store.removeFinished(cutoff, 1_000)) > 0; i++) assert.ok(i < 1_000, 'removeFinished() never runs out');
}

export const defineRetention: Define<TaskStore> = (test) => {
  /** A test on a store with removeFinished(), in a window of its own cleared before and after. */
  const sweepTest = (rule: string, body: (store: Sweepable, t: (ms: number) => string) => Promise<void>) =>
    test(rule, async (store) => {
      if (typeof store.removeFinished !== 'function') return;
      const sweepable = store as Sweepable;
      const t = retentionWindow();
      await drain(sweepable, t(0));
      await body(sweepable, t);
      await drain(sweepable, t(999));
    });

  const finished = (state: TaskState, timestamp: string, contextId?: string): Task => makeTask(newId(), { state, timestamp, contextId });

  sweepTest('a finished task older than the cutoff leaves get(), list() and totalSize; newer and unfinished ones stay', async (store, t) => {
    const scope = newScope();
    const contextId = `ctx-${randomUUID()}`;
    // Finished through a status change, as the engine writes it.
    const old = makeTask(newId(), { timestamp: t(0), contextId });
    await store.create(scope, old);
    const oldDone = { ...old, status: { state: 'TASK_STATE_COMPLETED' as const, timestamp: t(1) } };
    await store.update(scope, oldDone, 1, { kind: 'status', update: { taskId: old.id, contextId, status: oldDone.status } });
    // Finished through a replace, after the cutoff.
    const newer = makeTask(newId(), { timestamp: t(2), contextId });
    await store.create(scope, newer);
    await store.update(scope, nextTask(newer, 'done', { state: 'TASK_STATE_COMPLETED', timestamp: t(20) }), 1);
    const working = makeTask(newId(), { timestamp: t(1) });
    const parked = makeTask(newId(), { state: 'TASK_STATE_INPUT_REQUIRED', timestamp: t(1), contextId });
    await store.create(scope, working);
    await store.create(scope, parked);

    assert.equal(await store.removeFinished(t(10), 100), 1, 'one task finished before the cutoff');
    assert.equal(await store.get(scope, old.id), undefined);
    for (const id of [newer.id, working.id, parked.id]) await mustGet(store, scope, id);
    const all = await store.list(scope, EVERY);
    assert.deepEqual(ids(all.tasks).sort(), [newer.id, working.id, parked.id].sort());
    assert.equal(all.totalSize, 3);
    const completed = await store.list(scope, { pageSize: 100, status: 'TASK_STATE_COMPLETED' });
    assert.deepEqual([ids(completed.tasks), completed.totalSize], [[newer.id], 1]);
    const inContext = await store.list(scope, { pageSize: 100, contextId });
    assert.deepEqual([ids(inContext.tasks).sort(), inContext.totalSize], [[newer.id, parked.id].sort(), 2]);
  });

  sweepTest('every terminal state counts as finished, and every scope is swept', async (store, t) => {
    const scopes = [newScope('alice'), newScope('bob'), newScope('alice'), newScope('carol')];
    const tasks = TERMINAL.map((state, i) => finished(state, t(i)));
    for (let i = 0; i < tasks.length; i++) await store.create(scopes[i], tasks[i]);
    assert.equal(await store.removeFinished(t(100), 100), TERMINAL.length);
    for (let i = 0; i < tasks.length; i++) {
      assert.equal(await store.get(scopes[i], tasks[i].id), undefined, `${tasks[i].status.state} removed`);
      assert.equal((await store.list(scopes[i], EVERY)).totalSize, 0);
    }
  });

  sweepTest('the cutoff is exclusive: a task finished exactly at it stays', async (store, t) => {
    const scope = newScope();
    const task = finished('TASK_STATE_COMPLETED', t(5));
    await store.create(scope, task);
    assert.equal(await store.removeFinished(t(5), 100), 0);
    await mustGet(store, scope, task.id);
    assert.equal(await store.removeFinished(t(6), 100), 1);
    assert.equal(await store.get(scope, task.id), undefined);
  });

  sweepTest('limit bounds each call, and the oldest go first', async (store, t) => {
    const scope = newScope();
    // Created out of order: the order that counts is the status timestamp's.
    const tasks = [3, 1, 5, 2, 4].map((ms) => finished('TASK_STATE_FAILED', t(ms)));
    for (const task of tasks) await store.create(scope, task);
    const left = async () => ids((await store.list(scope, EVERY)).tasks);
    const byAge = [...tasks].sort((a, b) => (a.status.timestamp! < b.status.timestamp! ? -1 : 1)).map((task) => task.id);
    assert.equal(await store.removeFinished(t(10), 2), 2);
    assert.deepEqual((await left()).sort(), byAge.slice(2).sort());
    assert.equal(await store.removeFinished(t(10), 2), 2);
    assert.deepEqual(await left(), [byAge[4]]);
    assert.equal(await store.removeFinished(t(10), 2), 1);
    assert.equal(await store.removeFinished(t(10), 2), 0);
    assert.equal((await store.list(scope, EVERY)).totalSize, 0);
  });

  sweepTest('two sweepers at once remove each task once, and their counts add up', async (store, t) => {
    const scope = newScope();
    const tasks = Array.from({ length: 6 }, (_, i) => finished('TASK_STATE_CANCELED', t(i)));
    for (const task of tasks) await store.create(scope, task);
    const counts = await Promise.all([store.removeFinished(t(10), 100), store.removeFinished(t(10), 100)]);
    assert.equal(counts[0] + counts[1], tasks.length, `counts ${counts.join(' + ')}`);
    assert.equal(await store.removeFinished(t(10), 100), 0);
    for (const task of tasks) assert.equal(await store.get(scope, task.id), undefined);
    assert.equal((await store.list(scope, EVERY)).totalSize, 0);
  });

  sweepTest('a removed task takes its artifacts with it: its id stored again starts empty', async (store, t) => {
    const writer = new InPlaceWriter(store);
    writer.task.status = { state: 'TASK_STATE_WORKING', timestamp: t(0) };
    await writer.create();
    for (let i = 0; i < 12; i++) await writer.write(appendText('out', `chunk ${i}`), i > 0);
    const done = { ...writer.expected(), status: { state: 'TASK_STATE_COMPLETED' as const, timestamp: t(1) } };
    await store.update(writer.scope, done, writer.version, {
      kind: 'status',
      update: { taskId: done.id, contextId: done.contextId ?? '', status: done.status },
    });
    assert.equal(await store.removeFinished(t(2), 100), 1);
    assert.equal(await store.get(writer.scope, done.id), undefined);
    const again = makeTask(done.id, { timestamp: t(3) });
    assert.equal(await store.create(writer.scope, again), 1);
    assert.deepEqual(await store.get(writer.scope, done.id), { task: again, version: 1 });
  });
};
