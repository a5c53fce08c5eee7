/** ListTasks without HTTP: the caller's tasks only, trimmed as asked, after start-up settlement; a foreign page token is InvalidParams. And historyLength's trimming. */
import { listTasks } from '../../../lib/engine/task-listing';
import { withHistoryLength } from '../../../lib/engine/task-state';
import { TaskReader, type EngineLifecycle } from '../../../lib/engine/lifecycle';
import { A2AError } from '../../../lib/errors';
import { silentLogger } from '../../../lib/options';
import { deferred } from '../../helpers/async';
import { scope, storeWith, task, userMessage } from './engine-fixtures';

const withArtifact = {
  ...task('TASK_STATE_COMPLETED', 'task-2'),
  history: [userMessage('a', 'task-2'), userMessage('b', 'task-2')],
  artifacts: [{ artifactId: 'a1', parts: [{ text: 'x' }] }],
};

function reader(store: Awaited<ReturnType<typeof storeWith>>, recovering?: Promise<void>) {
  return new TaskReader(store, { recovering } as EngineLifecycle, silentLogger);
}

describe('listTasks', () => {
  it("lists only the caller's tasks, with historyLength applied and artifacts left out unless asked", async () => {
    const store = await storeWith(task('TASK_STATE_WORKING'), withArtifact);
    await store.create({ tenant: 't', owner: 'bob' }, task('TASK_STATE_WORKING', 'bobs'));
    const page = await listTasks(store, reader(store), scope, { historyLength: 1 } as never);
    expect(page.tasks.map((t) => t.id).sort()).toEqual(['task-1', 'task-2']);
    expect(page).toMatchObject({ pageSize: 50, totalSize: 2 });
    const second = page.tasks.find((t) => t.id === 'task-2')!;
    expect(second.history!.map((m) => m.messageId)).toEqual(['m-b']);
    expect(second.artifacts).toBeUndefined();
    const withArtifacts = await listTasks(store, reader(store), scope, { includeArtifacts: true } as never);
    expect(withArtifacts.tasks.find((t) => t.id === 'task-2')!.artifacts).toHaveLength(1);
  });

  it('answers InvalidParams for a page token this server did not issue', async () => {
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const refused = listTasks(store, reader(store), scope, { pageToken: 'not-ours' } as never);
    await expect(refused).rejects.toBeInstanceOf(A2AError);
    await expect(refused).rejects.toMatchObject({ kind: 'InvalidParams' });
  });

  it('waits for the start-up settlement before it reads', async () => {
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const settling = deferred();
    const list = jest.spyOn(store, 'list');
    const page = listTasks(store, reader(store, settling.promise), scope, {} as never);
    await new Promise((resolve) => setImmediate(resolve));
    expect(list).not.toHaveBeenCalled();
    settling.resolve();
    expect((await page).tasks).toHaveLength(1);
  });
});

describe('withHistoryLength', () => {
  it('keeps the newest messages, leaves the field out for 0, and returns the task itself when nothing is cut', () => {
    expect(withHistoryLength(withArtifact, 1).history!.map((m) => m.messageId)).toEqual(['m-b']);
    expect('history' in withHistoryLength(withArtifact, 0)).toBe(false);
    expect(withHistoryLength(withArtifact, 5)).toBe(withArtifact);
    expect(withHistoryLength(withArtifact, undefined)).toBe(withArtifact);
  });
});
