/** TaskStore contract rules for artifact and status changes (the change hint), under compare-and-set and concurrency. */
import assert from 'node:assert/strict';
import type { Artifact, Task, TaskArtifactUpdateEvent } from '../protocol/schemas.js';
import { TaskNotFoundInStoreError, TaskVersionConflictError, type TaskStore } from '../engine/seams/task-store.js';
import {
  type Define,
  at,
  newScope,
  newId,
  makeTask,
  nextTask,
  EVERY,
  mustGet,
  rejectsWith,
  InPlaceWriter,
  appendText,
} from './task-store-fixtures.js';

export const defineChangeHint: Define<TaskStore> = (test) => {
  const artifact = (artifactId: string, text: string): Artifact => ({ artifactId, name: artifactId, parts: [{ text }] });
  const chunk = (task: Task, art: Artifact, append: boolean) => ({
    kind: 'artifact' as const,
    update: { taskId: task.id, contextId: task.contextId ?? '', artifact: art, append, lastChunk: false },
  });

  test('update() with an artifact change for a new artifact stores exactly the task passed', async (store) => {
    const scope = newScope();
    const task: Task = { ...makeTask(newId()), artifacts: [artifact('one', 'first')] };
    await store.create(scope, task);
    const added = artifact('two', 'second');
    const next: Task = { ...task, artifacts: [...task.artifacts!, added] };
    assert.equal(await store.update(scope, next, 1, chunk(task, added, false)), 2);
    assert.deepEqual(await store.get(scope, task.id), { task: next, version: 2 });
  });

  test('update() with an appended artifact chunk stores exactly the task passed', async (store) => {
    const scope = newScope();
    const task: Task = { ...makeTask(newId()), artifacts: [artifact('one', 'first'), artifact('two', 'x')] };
    await store.create(scope, task);
    const piece = artifact('one', ' and more');
    const next: Task = { ...task, artifacts: [{ ...task.artifacts![0], parts: [{ text: 'first' }, { text: ' and more' }] }, task.artifacts![1]] };
    assert.equal(await store.update(scope, next, 1, chunk(task, piece, true)), 2);
    assert.deepEqual(await store.get(scope, task.id), { task: next, version: 2 });
  });

  test('update() with an artifact change that replaces an artifact stores exactly the task passed', async (store) => {
    const scope = newScope();
    const task: Task = { ...makeTask(newId()), artifacts: [artifact('one', 'draft')] };
    await store.create(scope, task);
    const replacement = artifact('one', 'final');
    const next: Task = { ...task, artifacts: [replacement] };
    assert.equal(await store.update(scope, next, 1, chunk(task, replacement, false)), 2);
    assert.deepEqual(await store.get(scope, task.id), { task: next, version: 2 });
  });

  test('update() with change { kind: "replace" } stores exactly the task passed', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, task);
    const next = nextTask(task, 'second', { state: 'TASK_STATE_INPUT_REQUIRED', timestamp: at(1) });
    assert.equal(await store.update(scope, next, 1, { kind: 'replace' }), 2);
    assert.deepEqual(await store.get(scope, task.id), { task: next, version: 2 });
  });

  test('an artifact change at a stale version or on a terminal task is refused like any update', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, task);
    const current = nextTask(task, 'second');
    await store.update(scope, current, 1);
    const added = artifact('late', 'late');
    await rejectsWith(store.update(scope, { ...task, artifacts: [added] }, 1, chunk(task, added, false)), TaskVersionConflictError, 'stale');
    assert.deepEqual(await store.get(scope, task.id), { task: current, version: 2 });
    const done = nextTask(current, 'done', { state: 'TASK_STATE_COMPLETED' });
    await store.update(scope, done, 2);
    await rejectsWith(store.update(scope, { ...done, artifacts: [added] }, 3, chunk(done, added, false)), TaskVersionConflictError, 'terminal');
    assert.deepEqual(await store.get(scope, task.id), { task: done, version: 3 });
  });
};
export const defineArtifactAppends: Define<TaskStore> = (test) => {
  const text = (artifactId: string, value: string, fields: Partial<Artifact> = {}): Artifact => ({ artifactId, parts: [{ text: value }], ...fields });

  test('300 appended chunks, written from one task object folded in place, read back as every chunk in order', async (store) => {
    const writer = new InPlaceWriter(store);
    await writer.create();
    for (let i = 0; i < 300; i++) assert.equal(await writer.write(text('out', `chunk ${i};`, i === 0 ? { name: 'out' } : {}), i > 0), i + 2);
    const stored = await mustGet(store, writer.scope, writer.task.id);
    assert.deepEqual(stored, { task: writer.expected(), version: 301 });
    assert.deepEqual(
      stored.task.artifacts![0].parts.map((p) => ('text' in p ? p.text : '')),
      Array.from({ length: 300 }, (_, i) => `chunk ${i};`),
    );
    const listed = await store.list(writer.scope, EVERY);
    assert.deepEqual(listed.tasks, [writer.expected()]);
  });

  test('appends after a read keep folding onto what was read: reads in the middle change nothing', async (store) => {
    const writer = new InPlaceWriter(store);
    await writer.create();
    for (let i = 0; i < 40; i++) {
      await writer.write(text('out', `${i}`), i > 0);
      if (i % 9 === 4) assert.deepEqual(await store.get(writer.scope, writer.task.id), { task: writer.expected(), version: writer.version });
      if (i % 13 === 6) assert.deepEqual((await store.list(writer.scope, EVERY)).tasks, [writer.expected()]);
    }
    assert.deepEqual(await store.get(writer.scope, writer.task.id), { task: writer.expected(), version: 41 });
  });

  test('appends to several artifacts, a replaced artifact and a chunk carrying new fields fold like reduceTask', async (store) => {
    const writer = new InPlaceWriter(store, [text('first', 'created with the task')]);
    await writer.create();
    for (let i = 0; i < 30; i++) {
      await writer.write(text(i % 2 === 0 ? 'a' : 'b', `${i}`), i > 1);
      if (i === 12) await writer.write(text('first', 'replaced'), false);
      if (i === 20) await writer.write(text('a', 'renamed', { name: 'A', description: 'now named', metadata: { n: i } }), true);
    }
    assert.deepEqual(await store.get(writer.scope, writer.task.id), { task: writer.expected(), version: writer.version });
    // A whole-task write after the appends replaces them all.
    const done: Task = { ...writer.expected(), status: { state: 'TASK_STATE_COMPLETED', timestamp: at(5) } };
    await store.update(writer.scope, done, writer.version, { kind: 'replace' });
    assert.deepEqual(await store.get(writer.scope, writer.task.id), { task: done, version: writer.version + 1 });
  });

  test('changing the task object after an append resolved does not change what is stored', async (store) => {
    const writer = new InPlaceWriter(store);
    await writer.create();
    await writer.write(text('out', 'one'), false);
    await writer.write(text('out', 'two'), true);
    const expected = writer.expected();
    // The engine's writer folds its next event into the same object before writing it.
    writer.task.artifacts![0].parts.push({ text: 'not written' });
    writer.task.artifacts!.push(text('ghost', 'not written'));
    assert.deepEqual(await store.get(writer.scope, writer.task.id), { task: expected, version: 3 });
  });

  test('status changes between chunks fold in order: status, history and listing follow them', async (store) => {
    const writer = new InPlaceWriter(store);
    await writer.create();
    for (let i = 0; i < 30; i++) {
      await writer.write(text('out', `${i}`), i > 0);
      if (i % 7 === 3) await writer.status('TASK_STATE_WORKING', i, `progress ${i}`);
      if (i === 20) await writer.status('TASK_STATE_WORKING', i);
    }
    await writer.status('TASK_STATE_INPUT_REQUIRED', 40, 'which one?');
    assert.deepEqual(await store.get(writer.scope, writer.task.id), { task: writer.expected(), version: writer.version });
    const parked = await store.list(writer.scope, { pageSize: 10, status: 'TASK_STATE_INPUT_REQUIRED', statusTimestampAfter: at(40) });
    assert.deepEqual(parked.tasks, [writer.expected()]);
    assert.equal((await store.list(writer.scope, { pageSize: 10, status: 'TASK_STATE_WORKING' })).totalSize, 0);
    await writer.status('TASK_STATE_WORKING', 41);
    await writer.write(text('out', 'after the answer'), true);
    await writer.status('TASK_STATE_COMPLETED', 42, 'done');
    assert.deepEqual(await store.get(writer.scope, writer.task.id), { task: writer.expected(), version: writer.version });
  });
};

/** The version rules for artifact and status changes (registered under 'compare-and-set'). */
export const defineAppendCompareAndSet: Define<TaskStore> = (test) => {
  const text = appendText;

  test('an append at a stale version, from another scope, or on a terminal task changes nothing', async (store) => {
    const writer = new InPlaceWriter(store);
    await writer.create();
    for (let i = 0; i < 5; i++) await writer.write(text('out', `${i}`), i > 0);
    const before = writer.expected();
    const update = (value: string): TaskArtifactUpdateEvent => ({
      taskId: writer.task.id,
      contextId: writer.task.contextId ?? '',
      artifact: text('out', value),
      append: true,
    });
    const grown = (value: string): Task => ({
      ...before,
      artifacts: [{ ...before.artifacts![0], parts: [...before.artifacts![0].parts, { text: value }] }],
    });
    await rejectsWith(
      store.update(writer.scope, grown('stale'), 5, { kind: 'artifact', update: update('stale') }),
      TaskVersionConflictError,
      'stale',
    );
    await rejectsWith(
      store.update(newScope(), grown('other'), 6, { kind: 'artifact', update: update('other') }),
      TaskNotFoundInStoreError,
      'other scope',
    );
    assert.deepEqual(await store.get(writer.scope, writer.task.id), { task: before, version: 6 });
    const done: Task = { ...before, status: { state: 'TASK_STATE_CANCELED', timestamp: at(3) } };
    await store.update(writer.scope, done, 6, { kind: 'replace' });
    await rejectsWith(
      store.update(writer.scope, grown('late'), 7, { kind: 'artifact', update: update('late') }),
      TaskVersionConflictError,
      'terminal',
    );
    assert.deepEqual(await store.get(writer.scope, writer.task.id), { task: done, version: 7 });
  });

  test('a task completed by a status change refuses later appends', async (store) => {
    const writer = new InPlaceWriter(store);
    await writer.create();
    await writer.write(text('out', 'one'), false);
    await writer.status('TASK_STATE_COMPLETED', 2, 'done');
    const done = writer.expected();
    const update: TaskArtifactUpdateEvent = { taskId: done.id, contextId: done.contextId ?? '', artifact: text('out', 'late'), append: true };
    const late: Task = { ...done, artifacts: [{ ...done.artifacts![0], parts: [...done.artifacts![0].parts, { text: 'late' }] }] };
    await rejectsWith(store.update(writer.scope, late, 3, { kind: 'artifact', update }), TaskVersionConflictError, 'terminal');
    assert.deepEqual(await store.get(writer.scope, done.id), { task: done, version: 3 });
  });
};

/** Concurrent artifact changes (registered under 'concurrency'). */
export const defineAppendConcurrency: Define<TaskStore> = (test) => {
  const text = appendText;

  test('of concurrent appends naming the same version, exactly one is stored', async (store) => {
    const writer = new InPlaceWriter(store);
    await writer.create();
    await writer.write(text('out', 'base'), false);
    const base = writer.expected();
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => {
        const update: TaskArtifactUpdateEvent = {
          taskId: base.id,
          contextId: base.contextId ?? '',
          artifact: text('out', `racer ${i}`),
          append: true,
        };
        const task: Task = { ...base, artifacts: [{ ...base.artifacts![0], parts: [...base.artifacts![0].parts, { text: `racer ${i}` }] }] };
        return store.update(writer.scope, task, 2, { kind: 'artifact', update });
      }),
    );
    const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [i] : []));
    assert.equal(won.length, 1, 'exactly one append wins');
    for (const r of results) if (r.status === 'rejected') assert.ok(r.reason instanceof TaskVersionConflictError, String(r.reason));
    const stored = await mustGet(store, writer.scope, base.id);
    assert.equal(stored.version, 3);
    assert.deepEqual(stored.task.artifacts![0].parts, [{ text: 'base' }, { text: `racer ${won[0]}` }]);
  });
};
