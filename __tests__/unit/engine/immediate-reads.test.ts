/** Reads the in-memory store makes within the call: no seam deadline for them, and a store whose get() was replaced is called as it is. */
import { Deadlines, deadlineHook } from '../../../lib/engine/deadlines';
import { interceptSeam } from '../../../lib/engine/seams/intercept';
import { TaskReader, type EngineLifecycle } from '../../../lib/engine/lifecycle';
import { InMemoryTaskStore } from '../../../lib/backends/memory/in-memory-task-store';
import type { TaskScope, VersionedTask } from '../../../lib/engine/seams/task-store';
import { silentLogger } from '../../../lib/options';
import { scope, storeWith, task } from './engine-fixtures';

/** Counts the seam calls that go through a deadline. */
class CountingDeadlines extends Deadlines {
  calls = 0;
  override bound<T>(promise: Promise<T>, call: string, extraMs = 0): Promise<T> {
    this.calls++;
    return super.bound(promise, call, extraMs);
  }
}

const settled = { recovering: undefined } as unknown as EngineLifecycle;

function readerOver(store: InMemoryTaskStore): { reader: TaskReader; deadlines: CountingDeadlines } {
  const deadlines = new CountingDeadlines(5_000);
  return { reader: new TaskReader(interceptSeam(store, 'taskStore', [deadlineHook(deadlines)]), settled, silentLogger), deadlines };
}

describe('immediate reads of the in-memory store', () => {
  it('a read answers the task as stored without a deadline (no promise, no timer for it)', async () => {
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const { reader, deadlines } = readerOver(store);
    const stored = await reader.read(scope, 'task-1');
    expect(stored.task.status.state).toBe('TASK_STATE_WORKING');
    expect(stored.version).toBe(1);
    expect(deadlines.calls).toBe(0);
    // Another owner's task is a missing one, as through get().
    await expect(reader.read({ tenant: 't', owner: 'mallory' }, 'task-1')).rejects.toMatchObject({ kind: 'TaskNotFound' });
  });

  it('a subclass that replaces get() is called as it is, under the deadline', async () => {
    const seen: string[] = [];
    class AuditedStore extends InMemoryTaskStore {
      override async get(s: TaskScope, taskId: string): Promise<VersionedTask | undefined> {
        seen.push(taskId);
        return super.get(s, taskId);
      }
    }
    const store = new AuditedStore();
    await store.create(scope, task('TASK_STATE_WORKING'));
    const { reader, deadlines } = readerOver(store);
    expect((await reader.read(scope, 'task-1')).task.id).toBe('task-1');
    expect(seen).toEqual(['task-1']);
    expect(deadlines.calls).toBe(1);
  });

  it('a get() that fails is answered as unavailable, not read around', async () => {
    class DownStore extends InMemoryTaskStore {
      override async get(): Promise<VersionedTask | undefined> {
        throw new Error('store down');
      }
    }
    const store = new DownStore();
    await store.create(scope, task('TASK_STATE_WORKING'));
    const { reader } = readerOver(store);
    await expect(reader.read(scope, 'task-1')).rejects.toMatchObject({ kind: 'Unavailable' });
  });
});
