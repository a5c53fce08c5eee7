/**
 * The SQLite push stores: the PushConfigStore contract unchanged on a task store's file, then the
 * durable outbox: the task store logs events only while a task has configs, in the write's own
 * transaction; a restart rebuilds what is owed from cursors and the log; delivered events are
 * deleted; a cursor never skips a version it has not had.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { StreamResponse, Task, TaskScope } from 'a2a-express-kit';
import { openSqliteTaskStore, sqlitePushStores, type SqliteTaskStore } from 'a2a-express-kit/sqlite';
import { describePushConfigStoreContract } from 'a2a-express-kit/testing';

const dir = mkdtempSync(path.join(tmpdir(), 'a2a-sqlite-push-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fileIn = () => path.join(dir, `${randomUUID()}.sqlite`);

let shared: Promise<SqliteTaskStore> | undefined;
const sharedStore = () => (shared ??= openSqliteTaskStore({ path: fileIn() }));
afterAll(async () => (await shared)?.close());

describePushConfigStoreContract('SqlitePushConfigStore', async () => sqlitePushStores(await sharedStore()).configStore);

const scopeOf = (): TaskScope => ({ tenant: `t-${randomUUID()}`, owner: 'alice' });
const working = (id: string, text: string): Task => ({
  id,
  contextId: `ctx-${id}`,
  status: {
    state: 'TASK_STATE_WORKING',
    timestamp: new Date().toISOString(),
    message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }] },
  },
});
const completed = (id: string): Task => ({ ...working(id, 'done'), status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() } });
const statusEvent = (task: Task): StreamResponse => ({ statusUpdate: { taskId: task.id, contextId: task.contextId ?? '', status: task.status } });
const config = (taskId: string, id: string, protocol: '1.0' | '0.3' = '1.0') => ({
  id,
  taskId,
  url: `https://hooks.example.com/${id}`,
  authentication: { scheme: 'Bearer', credentials: `secret-${id}` },
  protocol,
});

describe('SqlitePushOutbox', () => {
  it('resumes, after a reopen, every event committed after the config was stored; delivered events are deleted', async () => {
    const file = fileIn();
    const scope = scopeOf();
    const id = `task-${randomUUID()}`;
    let store = await openSqliteTaskStore({ path: file });
    let push = sqlitePushStores(store);
    // v1 before any config: not logged, not owed.
    await store.create(scope, working(id, 'v1'));
    await push.configStore.put(scope, config(id, 'c-1'), 10);
    let task = working(id, 'v2');
    await store.update(scope, task, 1, { kind: 'replace', event: statusEvent(task) });
    task = working(id, 'v3');
    await store.update(scope, task, 2, { kind: 'replace', event: statusEvent(task) });
    const events = () =>
      store.database
        .prepare('SELECT version FROM a2a_push_events WHERE task_id = ? ORDER BY version')
        .all(id)
        .map((r) => (r as { version: number }).version);
    expect(events()).toEqual([2, 3]);
    // The process dies: nothing was delivered.
    await store.close();

    store = await openSqliteTaskStore({ path: file });
    push = sqlitePushStores(store);
    const owed = await push.outbox.pending();
    expect(owed.map((d) => [d.configId, d.version, d.final])).toEqual([
      ['c-1', 2, false],
      ['c-1', 3, false],
    ]);
    expect(JSON.parse(owed[1].body).statusUpdate.status.message.parts[0].text).toBe('v3');
    await push.outbox.remove(owed[0].id);
    expect(events()).toEqual([3]);
    // v3 given up or delivered: the cursor is at 3, nothing is owed, nothing logged.
    await push.outbox.remove(owed[1].id);
    expect(events()).toEqual([]);
    expect(await push.outbox.pending()).toEqual([]);
    expect(push.outbox.size).toBe(0);

    // The final event: owed as final; once done, a restart removes the ended task's configs.
    const done = completed(id);
    await store.update(scope, done, 3, { kind: 'replace', event: statusEvent(done) });
    const [last] = await push.outbox.pending();
    expect([last.version, last.final]).toEqual([4, true]);
    await push.outbox.remove(last.id);
    expect(await push.outbox.pending()).toEqual([]);
    expect(await push.configStore.list(scope, id)).toEqual([]);
    await store.close();
  });

  it('a cursor only moves over the span a delivery covered; attempts survive a restart', async () => {
    const store = await openSqliteTaskStore({ path: fileIn() });
    const push = sqlitePushStores(store);
    const scope = scopeOf();
    const id = `task-${randomUUID()}`;
    await store.create(scope, working(id, 'v1'));
    await push.configStore.put(scope, config(id, 'c-1'), 10);
    for (let v = 1; v <= 3; v++) {
      const task = working(id, `v${v + 1}`);
      await store.update(scope, task, v, { kind: 'replace', event: statusEvent(task) });
    }
    const owed = await push.outbox.pending();
    expect(owed.map((d) => d.version)).toEqual([2, 3, 4]);
    await push.outbox.recordAttempts(owed[0].id, 2);
    // v4 done before v2 and v3 (a live delivery overtaking a resumed one): the cursor stays at 1.
    await push.outbox.remove(owed[2].id);
    const again = await sqlitePushStores(store).outbox.pending();
    expect(again.map((d) => [d.version, d.attempts])).toEqual([
      [2, 2],
      [3, 0],
      [4, 0],
    ]);
    await store.close();
  });

  it('v0.3 configs are owed the task as it stands, once; a write without its event owes nothing', async () => {
    const store = await openSqliteTaskStore({ path: fileIn() });
    const push = sqlitePushStores(store);
    const scope = scopeOf();
    const id = `task-${randomUUID()}`;
    await store.create(scope, working(id, 'v1'));
    await push.configStore.put(scope, config(id, 'old', '0.3'), 10);
    await push.configStore.put(scope, config(id, 'new'), 10);
    const v2 = working(id, 'v2');
    await store.update(scope, v2, 1, { kind: 'replace', event: statusEvent(v2) });
    // No event: a follow-up joining the history (told to its turn only), or a third-party caller.
    await store.update(scope, working(id, 'v3'), 2);
    const owed = await push.outbox.pending();
    expect(owed.map((d) => [d.configId, d.version, d.contentType])).toEqual([
      ['old', 2, 'application/json'],
      ['new', 2, 'application/a2a+json'],
    ]);
    expect(JSON.parse(owed[0].body).status.message.parts[0].text).toBe('v3');
    expect(JSON.parse(owed[1].body).statusUpdate.status.message.parts[0].text).toBe('v2');
    // Done: the cursor passes v3 too when the next event is delivered live.
    for (const delivery of owed) await push.outbox.remove(delivery.id);
    const v4 = working(id, 'v4');
    await store.update(scope, v4, 3, { kind: 'replace', event: statusEvent(v4) });
    await push.outbox.add([{ ...owed[1], id: 'live', version: 4 }]);
    await push.outbox.remove('live');
    expect((await push.outbox.pending()).map((d) => [d.configId, d.version])).toEqual([['old', 4]]);
    await store.close();
  });

  it('logs nothing for a task without configs', async () => {
    const store = await openSqliteTaskStore({ path: fileIn() });
    const scope = scopeOf();
    const id = `task-${randomUUID()}`;
    await store.create(scope, working(id, 'v1'));
    const task = working(id, 'v2');
    await store.update(scope, task, 1, { kind: 'replace', event: statusEvent(task) });
    expect(store.database.prepare('SELECT COUNT(*) AS n FROM a2a_push_events').get()).toEqual({ n: 0 });
    await store.close();
  });
});
