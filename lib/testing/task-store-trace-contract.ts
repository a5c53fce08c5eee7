/** The TaskStore contract's tracing group: save/loadTraceContext() keep a traceparent beside a task, in scope, not in it. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { TaskScope, TaskStore } from '../engine/seams/task-store.js';
import type { Task } from '../protocol/schemas.js';

type Body = (store: TaskStore) => Promise<void>;
type Traced = TaskStore & Required<Pick<TaskStore, 'saveTraceContext' | 'loadTraceContext'>>;

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

/** The group; each test passes at once on a store without the two methods. */
export function defineTraceContexts(test: (rule: string, body: Body) => void): void {
  const tracedTest = (rule: string, body: (store: Traced, scope: TaskScope, task: Task & { contextId: string }) => Promise<void>) =>
    test(rule, async (store) => {
      if (typeof store.saveTraceContext !== 'function' || typeof store.loadTraceContext !== 'function') return;
      const scope = { tenant: `tenant-${randomUUID()}`, owner: 'alice' };
      const task: Task & { contextId: string } = {
        id: `task-${randomUUID()}`,
        contextId: `ctx-${randomUUID()}`,
        status: { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() },
      };
      await store.create(scope, task);
      await body(store as Traced, scope, task);
    });

  tracedTest('a saved traceparent is read back in the task’s scope, not in another one', async (store, scope, task) => {
    assert.equal(await store.loadTraceContext(scope, task.id), undefined, 'nothing before it is saved');
    await store.saveTraceContext(scope, task.id, TRACEPARENT);
    assert.equal(await store.loadTraceContext(scope, task.id), TRACEPARENT);
    assert.equal(await store.loadTraceContext({ ...scope, owner: 'mallory' }, task.id), undefined, 'another owner');
    assert.equal(await store.loadTraceContext({ ...scope, tenant: `${scope.tenant}-other` }, task.id), undefined, 'another tenant');
    assert.equal(await store.loadTraceContext(scope, `task-${randomUUID()}`), undefined, 'a missing task');
  });

  tracedTest('another scope cannot save one for the task', async (store, scope, task) => {
    await store.saveTraceContext({ ...scope, owner: 'mallory' }, task.id, TRACEPARENT);
    assert.equal(await store.loadTraceContext(scope, task.id), undefined);
  });

  tracedTest('it is not part of the task as read, and survives its writes', async (store, scope, task) => {
    await store.saveTraceContext(scope, task.id, TRACEPARENT);
    const done: Task = { ...task, status: { state: 'TASK_STATE_COMPLETED', timestamp: new Date().toISOString() } };
    await store.update(scope, done, 1, { kind: 'status', update: { taskId: task.id, contextId: task.contextId, status: done.status } });
    const read = await store.get(scope, task.id);
    assert.deepEqual(read?.task, done);
    assert.ok(!JSON.stringify(read).includes(TRACEPARENT.slice(3, 35)), 'no trace id in the task');
    const page = await store.list(scope, { pageSize: 10 });
    assert.ok(!JSON.stringify(page).includes(TRACEPARENT.slice(3, 35)), 'no trace id in the listing');
    assert.equal(await store.loadTraceContext(scope, task.id), TRACEPARENT);
  });
}
