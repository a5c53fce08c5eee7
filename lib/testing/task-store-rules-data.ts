/** TaskStore contract rules on what is read back: clone isolation, large tasks, listing (order, filters, paging). */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Task } from '../protocol/schemas.js';
import { InvalidPageTokenError, type TaskScope, type TaskStore } from '../engine/seams/task-store.js';
import {
  type Define,
  at,
  newScope,
  newId,
  message,
  type TaskFields,
  makeTask,
  nextTask,
  EVERY,
  mustGet,
  rejectsWith,
  listAllPages,
  ids,
  copy,
} from './task-store-fixtures.js';

export const defineCloneIsolation: Define<TaskStore> = (test) => {
  const vandalize = (task: Task) => {
    task.status.state = 'TASK_STATE_FAILED';
    task.history?.push(message(task.id, 'injected'));
    const first = task.history?.[0]?.parts[0];
    if (first && 'text' in first) first.text = 'changed';
    task.metadata = { injected: true };
  };

  // Right after the call, before the write resolves: a store that writes later (a queue, a group
  // commit) must still keep the task as it was at the call.
  test('mutating the task passed to create() afterwards does not change the stored task', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    const expected = copy(task);
    const written = store.create(scope, task);
    vandalize(task);
    await written;
    assert.deepEqual((await mustGet(store, scope, expected.id)).task, expected);
  });

  test('mutating the task passed to update() afterwards does not change the stored task', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, task);
    const next = nextTask(task, 'second');
    const expected = copy(next);
    const written = store.update(scope, next, 1);
    vandalize(next);
    await written;
    assert.deepEqual((await mustGet(store, scope, task.id)).task, expected);
  });

  test('mutating a task returned by get() does not change the stored task', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, copy(task));
    vandalize((await mustGet(store, scope, task.id)).task);
    assert.deepEqual(await store.get(scope, task.id), { task, version: 1 });
  });

  test('mutating tasks returned by list() does not change the stored tasks', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, copy(task));
    const page = await store.list(scope, EVERY);
    page.tasks.forEach(vandalize);
    assert.deepEqual(await store.get(scope, task.id), { task, version: 1 });
    assert.deepEqual((await store.list(scope, EVERY)).tasks, [task]);
  });
};

export const defineLargeTasks: Define<TaskStore> = (test) => {
  test('a task with 2,000 history messages round-trips exactly through create, update, get and list', async (store) => {
    const scope = newScope();
    const id = newId();
    const task: Task = { ...makeTask(id), history: Array.from({ length: 2000 }, (_, i) => message(id, `message ${i}`)) };
    await store.create(scope, task);
    assert.deepEqual(await store.get(scope, id), { task, version: 1 });
    const next = nextTask(task, 'message 2000');
    await store.update(scope, next, 1);
    assert.deepEqual(await store.get(scope, id), { task: next, version: 2 });
    assert.deepEqual((await store.list(scope, EVERY)).tasks, [next]);
  });

  test('a 1 MB text part with multi-byte characters round-trips exactly', async (store) => {
    const scope = newScope();
    const id = newId();
    // ASCII, 2-byte, 3-byte and 4-byte (surrogate pair) characters, so truncation or re-encoding
    // shows; whole units only, so no surrogate pair is split.
    const unit = 'abcdefgh-é-€-😀-\n\t"\\';
    const text = unit.repeat(Math.ceil(1_048_576 / unit.length));
    const task: Task = { ...makeTask(id), artifacts: [{ artifactId: 'big', parts: [{ text }] }] };
    await store.create(scope, task);
    const stored = await mustGet(store, scope, id);
    const part = stored.task.artifacts?.[0]?.parts[0];
    assert.ok(part && 'text' in part);
    assert.equal(part.text.length, text.length);
    assert.ok(part.text === text, 'the text comes back byte for byte');
    assert.deepEqual(stored, { task, version: 1 });
  });
};

export const defineListing: Define<TaskStore> = (test) => {
  /** Creates `spec` (suffix → timestamp seconds) in the given order; ids sort by suffix. */
  async function seed(store: TaskStore, scope: TaskScope, spec: Array<[string, number, TaskFields?]>) {
    const run = `task-${randomUUID()}`;
    const created = new Map<string, Task>();
    for (const [suffix, seconds, fields] of spec) {
      const task = makeTask(`${run}-${suffix}`, { timestamp: at(seconds), ...fields });
      await store.create(scope, task);
      created.set(suffix, task);
    }
    return { run, created, idOf: (suffix: string) => `${run}-${suffix}` };
  }

  test('list() orders by newest status timestamp first, then by id, and returns whole tasks', async (store) => {
    const scope = newScope();
    const { created } = await seed(store, scope, [
      ['e', 1],
      ['b', 3],
      ['a', 1],
      ['d', 3],
      ['c', 2],
    ]);
    const page = await store.list(scope, EVERY);
    assert.deepEqual(
      page.tasks,
      ['b', 'd', 'c', 'a', 'e'].map((s) => created.get(s)),
    );
    assert.equal(page.nextPageToken, '');
    assert.equal(page.totalSize, 5);
  });

  test('list() of a scope without tasks returns no tasks, totalSize 0 and nextPageToken ""', async (store) => {
    assert.deepEqual(await store.list(newScope(), EVERY), { tasks: [], nextPageToken: '', totalSize: 0 });
  });

  test('list() filters by contextId', async (store) => {
    const scope = newScope();
    const { idOf } = await seed(store, scope, [
      ['a', 1, { contextId: 'ctx-1' }],
      ['b', 2, { contextId: 'ctx-2' }],
      ['c', 3, { contextId: 'ctx-1' }],
    ]);
    const page = await store.list(scope, { ...EVERY, contextId: 'ctx-1' });
    assert.deepEqual(ids(page.tasks), [idOf('c'), idOf('a')]);
    assert.equal(page.totalSize, 2);
  });

  test('list() filters by status state, using the current state after updates', async (store) => {
    const scope = newScope();
    const { idOf, created } = await seed(store, scope, [
      ['a', 1],
      ['b', 2, { state: 'TASK_STATE_INPUT_REQUIRED' }],
      ['c', 3],
    ]);
    await store.update(scope, nextTask(created.get('c')!, 'done', { state: 'TASK_STATE_COMPLETED' }), 1);
    assert.deepEqual(ids((await store.list(scope, { ...EVERY, status: 'TASK_STATE_WORKING' })).tasks), [idOf('a')]);
    assert.deepEqual(ids((await store.list(scope, { ...EVERY, status: 'TASK_STATE_COMPLETED' })).tasks), [idOf('c')]);
    assert.deepEqual(ids((await store.list(scope, { ...EVERY, status: 'TASK_STATE_INPUT_REQUIRED' })).tasks), [idOf('b')]);
    assert.equal((await store.list(scope, { ...EVERY, status: 'TASK_STATE_FAILED' })).totalSize, 0);
  });

  test('list() filters by statusTimestampAfter, inclusive of the bound', async (store) => {
    const scope = newScope();
    const { idOf } = await seed(store, scope, [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    const page = await store.list(scope, { ...EVERY, statusTimestampAfter: at(2) });
    assert.deepEqual(ids(page.tasks), [idOf('c'), idOf('b')]);
    assert.equal(page.totalSize, 2);
  });

  test('list() combines filters: a task is listed only when it matches every one', async (store) => {
    const scope = newScope();
    const { idOf } = await seed(store, scope, [
      ['a', 1, { contextId: 'ctx-1' }],
      ['b', 2, { contextId: 'ctx-1', state: 'TASK_STATE_INPUT_REQUIRED' }],
      ['c', 3, { contextId: 'ctx-1' }],
      ['d', 4, { contextId: 'ctx-2' }],
    ]);
    const page = await store.list(scope, { ...EVERY, contextId: 'ctx-1', status: 'TASK_STATE_WORKING', statusTimestampAfter: at(2) });
    assert.deepEqual(ids(page.tasks), [idOf('c')]);
    assert.equal(page.totalSize, 1);
  });

  test('pageSize caps a page and totalSize counts every match before paging', async (store) => {
    const scope = newScope();
    await seed(
      store,
      scope,
      Array.from({ length: 12 }, (_, i): [string, number] => [String(i).padStart(2, '0'), i]),
    );
    const page = await store.list(scope, { pageSize: 5 });
    assert.equal(page.tasks.length, 5);
    assert.equal(page.totalSize, 12);
    assert.notEqual(page.nextPageToken, '');
  });

  test('nextPageToken pages through every match in order with no gaps or duplicates, "" on the last page', async (store) => {
    const scope = newScope();
    // Timestamps repeat so pages break inside a run of equal timestamps, where only the id orders.
    await seed(
      store,
      scope,
      Array.from({ length: 25 }, (_, i): [string, number] => [String(i).padStart(2, '0'), i % 4]),
    );
    const whole = await store.list(scope, EVERY);
    const pages = await listAllPages(store, scope, { pageSize: 7 });
    assert.deepEqual(
      pages.map((p) => p.tasks.length),
      [7, 7, 7, 4],
    );
    assert.deepEqual(
      pages.flatMap((p) => ids(p.tasks)),
      ids(whole.tasks),
    );
    for (const page of pages) assert.equal(page.totalSize, 25, 'totalSize is the same on every page');
    pages.slice(0, -1).forEach((p) => assert.notEqual(p.nextPageToken, ''));
  });

  test('an exactly full last page answers nextPageToken ""', async (store) => {
    const scope = newScope();
    await seed(
      store,
      scope,
      Array.from({ length: 6 }, (_, i): [string, number] => [String(i), i]),
    );
    const pages = await listAllPages(store, scope, { pageSize: 3 });
    assert.deepEqual(
      pages.map((p) => p.tasks.length),
      [3, 3],
    );
    assert.equal(pages[1].nextPageToken, '');
  });

  test('paging keeps the filters, and totalSize counts the filtered matches', async (store) => {
    const scope = newScope();
    const spec = Array.from({ length: 15 }, (_, i): [string, number, TaskFields] => [
      String(i).padStart(2, '0'),
      i,
      { contextId: i % 3 ? 'ctx-a' : 'ctx-b' },
    ]);
    const { idOf } = await seed(store, scope, spec);
    const pages = await listAllPages(store, scope, { pageSize: 4, contextId: 'ctx-a' });
    const expected = spec
      .filter(([, , f]) => f.contextId === 'ctx-a')
      .map(([s]) => idOf(s))
      .reverse();
    assert.deepEqual(
      pages.flatMap((p) => ids(p.tasks)),
      expected,
    );
    for (const page of pages) assert.equal(page.totalSize, expected.length);
  });

  test('a malformed pageToken rejects with InvalidPageTokenError', async (store) => {
    const scope = newScope();
    await seed(store, scope, [
      ['a', 1],
      ['b', 2],
    ]);
    for (const pageToken of ['not a page token', '%%%', '{"id":1}']) {
      await rejectsWith(store.list(scope, { pageSize: 1, pageToken }), InvalidPageTokenError, `pageToken ${JSON.stringify(pageToken)}`);
    }
  });

  test('a task updated between pages is never served twice; untouched tasks are served exactly once', async (store) => {
    const scope = newScope();
    const { created, idOf } = await seed(
      store,
      scope,
      Array.from({ length: 12 }, (_, i): [string, number] => [String(i).padStart(2, '0'), i]),
    );
    const first = await store.list(scope, { pageSize: 4 });
    // Move one served task and one unserved task to the front, as a status update does.
    const served = first.tasks[0].id.slice(-2);
    const unserved = '02';
    for (const suffix of [served, unserved]) {
      await store.update(scope, nextTask(created.get(suffix)!, 'moved', { timestamp: at(100) }), 1);
    }
    const rest = await listAllPages(store, scope, { pageSize: 4, pageToken: first.nextPageToken });
    const seen = [...ids(first.tasks), ...rest.flatMap((p) => ids(p.tasks))];
    assert.equal(new Set(seen).size, seen.length, `no task is served twice: ${seen.join(', ')}`);
    for (const suffix of created.keys()) {
      if (suffix === served || suffix === unserved) continue;
      assert.ok(seen.includes(idOf(suffix)), `untouched task ${suffix} is served`);
    }
  });
};
