/**
 * SqliteTaskStore.removeFinished beyond the contract: the file stops growing under steady load
 * (freed pages are reused), a removed task takes its rows in every table with it (push configs and
 * logged events included), and the sweep reads the partial index of finished tasks.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { StreamResponse, Task, TaskScope } from 'a2a-express-kit';
import { openSqliteTaskStore, sqlitePushStores, type SqliteTaskStore } from 'a2a-express-kit/sqlite';
import { FINISHED_BEFORE_SQL } from '../../lib/backends/sqlite/sqlite-retention';

const dir = mkdtempSync(path.join(tmpdir(), 'a2a-sqlite-retention-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fileIn = () => path.join(dir, `${randomUUID()}.sqlite`);

const T0 = Date.parse('2026-03-01T00:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const statusUpdate = (task: Task) => ({ taskId: task.id, contextId: task.contextId ?? '', status: task.status });
const statusEvent = (task: Task): StreamResponse => ({ statusUpdate: statusUpdate(task) });

/** A task written as the engine writes one: created, an artifact in chunks, then finished at `second`. */
async function finishedTask(store: SqliteTaskStore, scope: TaskScope, second: number, chunks = 10): Promise<string> {
  const id = `task-${randomUUID()}`;
  const task: Task = { id, contextId: `ctx-${id}`, status: { state: 'TASK_STATE_WORKING', timestamp: at(second) }, artifacts: [] };
  await store.create(scope, task);
  let version = 1;
  for (let i = 0; i < chunks; i++) {
    const part = { text: `${i}:${'x'.repeat(400)}` };
    const update = { taskId: id, contextId: task.contextId!, artifact: { artifactId: 'out', parts: [part] }, append: i > 0, lastChunk: false };
    task.artifacts = [{ artifactId: 'out', parts: [...(task.artifacts?.[0]?.parts ?? []), part] }];
    version = await store.update(scope, task, version, { kind: 'artifact', update });
  }
  const done: Task = { ...task, status: { state: 'TASK_STATE_COMPLETED', timestamp: at(second) } };
  await store.update(scope, done, version, { kind: 'status', update: statusUpdate(done), event: statusEvent(done) });
  return id;
}

const count = (store: SqliteTaskStore, table: string) => (store.database.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe('SqliteTaskStore retention', () => {
  it('stops the file growing: rounds of writing and expiring tasks reuse the freed pages', async () => {
    const store = await openSqliteTaskStore({ path: fileIn() });
    const scope = { tenant: 'acme', owner: 'alice' };
    const pages: number[] = [];
    const control = await openSqliteTaskStore({ path: fileIn() });
    for (let round = 0; round < 8; round++) await Promise.all(Array.from({ length: 150 }, (_, i) => finishedTask(control, scope, round * 1000 + i)));
    const pagesWithoutSweep = Number(control.database.pragma('page_count', { simple: true }));
    await control.close();
    // Steady load: each round writes 150 tasks (about 4 kB of artifact chunks each), and the
    // sweep removes the round before it, as a TTL of one round would.
    for (let round = 0; round < 8; round++) {
      await Promise.all(Array.from({ length: 150 }, (_, i) => finishedTask(store, scope, round * 1000 + i)));
      while ((await store.removeFinished(at(round * 1000), 100)) > 0);
      pages.push(Number(store.database.pragma('page_count', { simple: true })));
    }
    // From round 1 on, every round holds two rounds' tasks at its peak: the file reached its size
    // by round 2 and keeps it (ids are random, so b-tree splits may differ by a page or two).
    const settled = pages[2];
    for (const later of pages.slice(3)) expect(later).toBeLessThanOrEqual(Math.ceil(settled * 1.02));
    expect(count(store, 'a2a_tasks')).toBe(150);
    // Without the sweep the same rounds take several times the pages: the test sees the difference.
    expect(pages[pages.length - 1] * 3).toBeLessThan(pagesWithoutSweep);
    await store.close();
  }, 60_000);

  it('removes the rows of every table the task had, push configs and logged events included', async () => {
    const store = await openSqliteTaskStore({ path: fileIn() });
    const push = sqlitePushStores(store);
    const scope = { tenant: 'acme', owner: 'alice' };
    const id = `task-${randomUUID()}`;
    const task: Task = { id, contextId: 'c', status: { state: 'TASK_STATE_WORKING', timestamp: at(0) } };
    await store.create(scope, task);
    // A config put while it runs: the task's events are logged for it, nothing is delivered.
    await push.configStore.put(scope, { id: 'hook', taskId: id, url: 'https://hooks.example.com/x', protocol: '1.0' }, 10);
    const update = { taskId: id, contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'hi' }] }, append: false, lastChunk: false };
    await store.update(scope, { ...task, artifacts: [update.artifact] }, 1, { kind: 'artifact', update, event: { artifactUpdate: update } });
    const done: Task = { ...task, artifacts: [update.artifact], status: { state: 'TASK_STATE_COMPLETED', timestamp: at(1) } };
    await store.update(scope, done, 2, { kind: 'replace', event: statusEvent(done) });
    const tables = ['a2a_tasks', 'a2a_task_bodies', 'a2a_artifacts', 'a2a_artifact_chunks', 'a2a_push_configs', 'a2a_push_events'];
    expect(tables.map((t) => count(store, t))).toEqual([1, 1, 1, 1, 1, 2]);

    expect(await store.removeFinished(at(2), 10)).toBe(1);
    expect(tables.map((t) => count(store, t))).toEqual([0, 0, 0, 0, 0, 0]);
    expect(await push.configStore.list(scope, id)).toEqual([]);
    expect(await push.outbox.pending()).toEqual([]);
    await store.close();
  });

  it('reads the oldest finished tasks through the partial index, not the table', async () => {
    const store = await openSqliteTaskStore({ path: ':memory:' });
    const plan = store.database.prepare(`EXPLAIN QUERY PLAN ${FINISHED_BEFORE_SQL}`).all(at(0), 10) as Array<{ detail: string }>;
    expect(plan.map((row) => row.detail).join('\n')).toMatch(/USING INDEX a2a_tasks_finished/);
    await store.close();
  });
});
