/**
 * The TaskStore contract as a test suite a user runs on their own store. It registers plain
 * describe/it blocks and asserts with node:assert only, so it runs unchanged under jest, vitest,
 * mocha or node:test. Every test uses fresh random scopes and ids, so a store shared between tests
 * (one database) works too.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Artifact, Message, Task, TaskArtifactUpdateEvent, TaskState } from '../protocol/schemas.js';
import { foldTaskInPlace } from '../engine/task-reducer.js';
import { defineTraceContexts } from './task-store-trace-contract.js';
import {
  InvalidPageTokenError,
  TaskExistsError,
  TaskNotFoundInStoreError,
  TaskStoreError,
  TaskVersionConflictError,
  type ListTasksQuery,
  type TaskPage,
  type TaskScope,
  type TaskStore,
} from '../engine/seams/task-store.js';

/** A `describe` as jest, vitest, mocha and node:test all accept it. */
export type ContractDescribe = (name: string, body: () => void) => unknown;
/** An `it`: the third argument is a timeout in ms (jest, vitest; mocha and node:test ignore it). */
export type ContractIt = (name: string, body: () => Promise<void>, timeoutMs?: number) => unknown;

export interface TaskStoreContractOptions<S extends TaskStore = TaskStore> {
  /** Defaults to the global `describe`. */
  describe?: ContractDescribe;
  /** Defaults to the global `it`. */
  it?: ContractIt;
  /** Runs after each test with the store it used (close a connection, drop a schema). */
  cleanup?: (store: S) => void | Promise<void>;
  /** Per test, store creation and cleanup included. Default 10000. */
  timeoutMs?: number;
}

type Body<S> = (store: S) => Promise<void>;

/** Registers the contract suite for the store `makeStore` builds; it is called once per test. */
export function describeTaskStoreContract<S extends TaskStore>(
  name: string,
  makeStore: () => S | Promise<S>,
  options: TaskStoreContractOptions<S> = {},
): void {
  const globals = globalThis as { describe?: ContractDescribe; it?: ContractIt };
  const describe = options.describe ?? globals.describe;
  const it = options.it ?? globals.it;
  if (!describe || !it) {
    throw new TypeError('describeTaskStoreContract: no global describe/it; pass { describe, it } from your test framework');
  }
  const timeoutMs = options.timeoutMs ?? 10_000;

  // Zero-parameter bodies: mocha would read a parameter as a `done` callback.
  const test = (rule: string, body: Body<S>) =>
    it(rule, async () => runWithStore(makeStore, body, options.cleanup, timeoutMs, rule), timeoutMs + 1_000);

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

async function runWithStore<S>(
  makeStore: () => S | Promise<S>,
  body: Body<S>,
  cleanup: ((store: S) => void | Promise<void>) | undefined,
  timeoutMs: number,
  rule: string,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  // Our own timeout, so a hanging store fails with a clear message under any framework.
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`"${rule}" did not finish within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([
      (async () => {
        const store = await makeStore();
        try {
          await body(store);
        } finally {
          await cleanup?.(store);
        }
      })(),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

type Define<S> = (test: (rule: string, body: Body<S>) => void) => void;

// ---------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------

const T0 = Date.parse('2026-01-05T10:00:00.000Z');
/** A status timestamp `seconds` after a fixed origin, in the UTC form the engine writes. */
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString();

const newScope = (owner = 'alice'): TaskScope => ({ tenant: `tenant-${randomUUID()}`, owner });
const newId = (): string => `task-${randomUUID()}`;

const message = (taskId: string, text: string): Message => makeMessage(taskId, text);

const makeMessage = (taskId: string, text: string): Message => ({
  messageId: randomUUID(),
  role: 'ROLE_USER',
  parts: [{ text }],
  taskId,
});

interface TaskFields {
  state?: TaskState;
  timestamp?: string;
  contextId?: string;
  text?: string;
}

function makeTask(id: string, fields: TaskFields = {}): Task {
  return {
    id,
    contextId: fields.contextId ?? `ctx-${id}`,
    status: { state: fields.state ?? 'TASK_STATE_WORKING', timestamp: fields.timestamp ?? at(0) },
    history: [message(id, fields.text ?? 'hello')],
  };
}

/** The same task with one more history message and a new status. */
function nextTask(task: Task, text: string, fields: TaskFields = {}): Task {
  return {
    ...task,
    status: { state: fields.state ?? task.status.state, timestamp: fields.timestamp ?? task.status.timestamp },
    history: [...(task.history ?? []), message(task.id, text)],
  };
}

const EVERY: ListTasksQuery = { pageSize: 100 };

async function mustGet(store: TaskStore, scope: TaskScope, id: string) {
  const found = await store.get(scope, id);
  assert.ok(found, `get(${id}) should find the task`);
  return found;
}

async function rejectsWith(promise: Promise<unknown>, errorClass: new (...args: never[]) => Error, why: string) {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof errorClass, `${why}: expected a ${errorClass.name}, got ${String(error)}`);
    return true;
  });
}

/** Every page of a listing, following nextPageToken; fails instead of looping forever. */
async function listAllPages(store: TaskStore, scope: TaskScope, query: ListTasksQuery) {
  const pages: TaskPage[] = [];
  let pageToken = query.pageToken;
  do {
    assert.ok(pages.length < 1000, 'paging does not end');
    const page = await store.list(scope, { ...query, pageToken });
    pages.push(page);
    pageToken = page.nextPageToken;
  } while (pageToken !== '');
  return pages;
}

const ids = (tasks: Task[]): string[] => tasks.map((t) => t.id);

// A JSON round trip, not structuredClone: under jest the latter returns objects of another realm,
// which deepStrictEqual tells apart by prototype.
const copy = (task: Task): Task => JSON.parse(JSON.stringify(task)) as Task;

// ---------------------------------------------------------------------------
// The rules
// ---------------------------------------------------------------------------

const defineScoping: Define<TaskStore> = (test) => {
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

const defineVersions: Define<TaskStore> = (test) => {
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

const TERMINAL: TaskState[] = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

const defineCompareAndSet: Define<TaskStore> = (test) => {
  test('update() at a stale expectedVersion rejects with TaskVersionConflictError and changes nothing', async (store) => {
    const scope = newScope();
    const task = makeTask(newId());
    await store.create(scope, task);
    const current = nextTask(task, 'second', { timestamp: at(1) });
    await store.update(scope, current, 1);
    await rejectsWith(store.update(scope, nextTask(task, 'stale writer', { state: 'TASK_STATE_COMPLETED' }), 1), TaskVersionConflictError, 'stale version');
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

const defineConcurrency: Define<TaskStore> = (test) => {
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
    const texts = (final.task.history ?? []).slice(1).map((m) => ('text' in m.parts[0] ? m.parts[0].text : '')).sort();
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
    assert.deepEqual(versions, updated.map(() => 2));
    for (const task of updated) assert.deepEqual(await store.get(scope, task.id), { task, version: 2 });
  });
};

const defineCloneIsolation: Define<TaskStore> = (test) => {
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

const defineLargeTasks: Define<TaskStore> = (test) => {
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

const defineListing: Define<TaskStore> = (test) => {
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
    const { created } = await seed(store, scope, [['e', 1], ['b', 3], ['a', 1], ['d', 3], ['c', 2]]);
    const page = await store.list(scope, EVERY);
    assert.deepEqual(page.tasks, ['b', 'd', 'c', 'a', 'e'].map((s) => created.get(s)));
    assert.equal(page.nextPageToken, '');
    assert.equal(page.totalSize, 5);
  });

  test('list() of a scope without tasks returns no tasks, totalSize 0 and nextPageToken ""', async (store) => {
    assert.deepEqual(await store.list(newScope(), EVERY), { tasks: [], nextPageToken: '', totalSize: 0 });
  });

  test('list() filters by contextId', async (store) => {
    const scope = newScope();
    const { idOf } = await seed(store, scope, [['a', 1, { contextId: 'ctx-1' }], ['b', 2, { contextId: 'ctx-2' }], ['c', 3, { contextId: 'ctx-1' }]]);
    const page = await store.list(scope, { ...EVERY, contextId: 'ctx-1' });
    assert.deepEqual(ids(page.tasks), [idOf('c'), idOf('a')]);
    assert.equal(page.totalSize, 2);
  });

  test('list() filters by status state, using the current state after updates', async (store) => {
    const scope = newScope();
    const { idOf, created } = await seed(store, scope, [['a', 1], ['b', 2, { state: 'TASK_STATE_INPUT_REQUIRED' }], ['c', 3]]);
    await store.update(scope, nextTask(created.get('c')!, 'done', { state: 'TASK_STATE_COMPLETED' }), 1);
    assert.deepEqual(ids((await store.list(scope, { ...EVERY, status: 'TASK_STATE_WORKING' })).tasks), [idOf('a')]);
    assert.deepEqual(ids((await store.list(scope, { ...EVERY, status: 'TASK_STATE_COMPLETED' })).tasks), [idOf('c')]);
    assert.deepEqual(ids((await store.list(scope, { ...EVERY, status: 'TASK_STATE_INPUT_REQUIRED' })).tasks), [idOf('b')]);
    assert.equal((await store.list(scope, { ...EVERY, status: 'TASK_STATE_FAILED' })).totalSize, 0);
  });

  test('list() filters by statusTimestampAfter, inclusive of the bound', async (store) => {
    const scope = newScope();
    const { idOf } = await seed(store, scope, [['a', 1], ['b', 2], ['c', 3]]);
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
    await seed(store, scope, Array.from({ length: 12 }, (_, i): [string, number] => [String(i).padStart(2, '0'), i]));
    const page = await store.list(scope, { pageSize: 5 });
    assert.equal(page.tasks.length, 5);
    assert.equal(page.totalSize, 12);
    assert.notEqual(page.nextPageToken, '');
  });

  test('nextPageToken pages through every match in order with no gaps or duplicates, "" on the last page', async (store) => {
    const scope = newScope();
    // Timestamps repeat so pages break inside a run of equal timestamps, where only the id orders.
    await seed(store, scope, Array.from({ length: 25 }, (_, i): [string, number] => [String(i).padStart(2, '0'), i % 4]));
    const whole = await store.list(scope, EVERY);
    const pages = await listAllPages(store, scope, { pageSize: 7 });
    assert.deepEqual(pages.map((p) => p.tasks.length), [7, 7, 7, 4]);
    assert.deepEqual(pages.flatMap((p) => ids(p.tasks)), ids(whole.tasks));
    for (const page of pages) assert.equal(page.totalSize, 25, 'totalSize is the same on every page');
    pages.slice(0, -1).forEach((p) => assert.notEqual(p.nextPageToken, ''));
  });

  test('an exactly full last page answers nextPageToken ""', async (store) => {
    const scope = newScope();
    await seed(store, scope, Array.from({ length: 6 }, (_, i): [string, number] => [String(i), i]));
    const pages = await listAllPages(store, scope, { pageSize: 3 });
    assert.deepEqual(pages.map((p) => p.tasks.length), [3, 3]);
    assert.equal(pages[1].nextPageToken, '');
  });

  test('paging keeps the filters, and totalSize counts the filtered matches', async (store) => {
    const scope = newScope();
    const spec = Array.from({ length: 15 }, (_, i): [string, number, TaskFields] => [String(i).padStart(2, '0'), i, { contextId: i % 3 ? 'ctx-a' : 'ctx-b' }]);
    const { idOf } = await seed(store, scope, spec);
    const pages = await listAllPages(store, scope, { pageSize: 4, contextId: 'ctx-a' });
    const expected = spec.filter(([, , f]) => f.contextId === 'ctx-a').map(([s]) => idOf(s)).reverse();
    assert.deepEqual(pages.flatMap((p) => ids(p.tasks)), expected);
    for (const page of pages) assert.equal(page.totalSize, expected.length);
  });

  test('a malformed pageToken rejects with InvalidPageTokenError', async (store) => {
    const scope = newScope();
    await seed(store, scope, [['a', 1], ['b', 2]]);
    for (const pageToken of ['not a page token', '%%%', '{"id":1}']) {
      await rejectsWith(store.list(scope, { pageSize: 1, pageToken }), InvalidPageTokenError, `pageToken ${JSON.stringify(pageToken)}`);
    }
  });

  test('a task updated between pages is never served twice; untouched tasks are served exactly once', async (store) => {
    const scope = newScope();
    const { created, idOf } = await seed(store, scope, Array.from({ length: 12 }, (_, i): [string, number] => [String(i).padStart(2, '0'), i]));
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

const defineChangeHint: Define<TaskStore> = (test) => {
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

/**
 * A writer as the engine's: one copy of the task, artifact events folded into it in place (so the
 * object passed to update() is the same one every time, holding every earlier chunk), each written
 * with its artifact change at the version the last write made.
 */
class InPlaceWriter {
  readonly scope = newScope();
  task: Task;
  version = 1;

  constructor(
    readonly store: TaskStore,
    artifacts?: Artifact[],
  ) {
    this.task = { ...makeTask(newId()), ...(artifacts ? { artifacts } : {}) };
  }

  create(): Promise<number> {
    return this.store.create(this.scope, this.task);
  }

  /** Folds the artifact event into the copy and writes it; resolves with the new version. */
  async write(artifact: Artifact, append: boolean): Promise<number> {
    const update: TaskArtifactUpdateEvent = { taskId: this.task.id, contextId: this.task.contextId ?? '', artifact, append, lastChunk: false };
    const folded = foldTaskInPlace(this.task, { artifactUpdate: update }, { taskId: this.task.id, contextId: this.task.contextId ?? '' });
    assert.ok(folded.ok && folded.task === this.task, 'the fixture folds in place');
    this.version = await this.store.update(this.scope, this.task, this.version, { kind: 'artifact', update, event: { artifactUpdate: update } });
    return this.version;
  }

  /** Folds a status update into the copy and writes it with its status change. */
  async status(state: TaskState, seconds: number, text?: string): Promise<number> {
    const message: Message | undefined = text === undefined ? undefined : { ...makeMessage(this.task.id, text), role: 'ROLE_AGENT' };
    const update = { taskId: this.task.id, contextId: this.task.contextId ?? '', status: { state, timestamp: at(seconds), ...(message ? { message } : {}) } };
    const folded = foldTaskInPlace(this.task, { statusUpdate: update }, { taskId: this.task.id, contextId: this.task.contextId ?? '' });
    assert.ok(folded.ok && folded.change.kind === 'status', 'the fixture folds a status change');
    this.task = folded.task;
    this.version = await this.store.update(this.scope, this.task, this.version, { ...folded.change, event: folded.event });
    return this.version;
  }

  /** The task as the store must hold it now (a copy of the writer's). */
  expected(): Task {
    return copy(this.task);
  }
}

const defineArtifactAppends: Define<TaskStore> = (test) => {
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

const appendText = (artifactId: string, value: string, fields: Partial<Artifact> = {}): Artifact => ({ artifactId, parts: [{ text: value }], ...fields });

/** The version rules for artifact and status changes (registered under 'compare-and-set'). */
const defineAppendCompareAndSet: Define<TaskStore> = (test) => {
  const text = appendText;

  test('an append at a stale version, from another scope, or on a terminal task changes nothing', async (store) => {
    const writer = new InPlaceWriter(store);
    await writer.create();
    for (let i = 0; i < 5; i++) await writer.write(text('out', `${i}`), i > 0);
    const before = writer.expected();
    const update = (value: string): TaskArtifactUpdateEvent => ({ taskId: writer.task.id, contextId: writer.task.contextId ?? '', artifact: text('out', value), append: true });
    const grown = (value: string): Task => ({ ...before, artifacts: [{ ...before.artifacts![0], parts: [...before.artifacts![0].parts, { text: value }] }] });
    await rejectsWith(store.update(writer.scope, grown('stale'), 5, { kind: 'artifact', update: update('stale') }), TaskVersionConflictError, 'stale');
    await rejectsWith(store.update(newScope(), grown('other'), 6, { kind: 'artifact', update: update('other') }), TaskNotFoundInStoreError, 'other scope');
    assert.deepEqual(await store.get(writer.scope, writer.task.id), { task: before, version: 6 });
    const done: Task = { ...before, status: { state: 'TASK_STATE_CANCELED', timestamp: at(3) } };
    await store.update(writer.scope, done, 6, { kind: 'replace' });
    await rejectsWith(store.update(writer.scope, grown('late'), 7, { kind: 'artifact', update: update('late') }), TaskVersionConflictError, 'terminal');
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
const defineAppendConcurrency: Define<TaskStore> = (test) => {
  const text = appendText;

  test('of concurrent appends naming the same version, exactly one is stored', async (store) => {
    const writer = new InPlaceWriter(store);
    await writer.create();
    await writer.write(text('out', 'base'), false);
    const base = writer.expected();
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, i) => {
        const update: TaskArtifactUpdateEvent = { taskId: base.id, contextId: base.contextId ?? '', artifact: text('out', `racer ${i}`), append: true };
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

const defineFailures: Define<TaskStore> = (test) => {
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

// ---------------------------------------------------------------------------
// Retention
// ---------------------------------------------------------------------------

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

const defineRetention: Define<TaskStore> = (test) => {
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
