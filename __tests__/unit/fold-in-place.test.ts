/**
 * foldTaskInPlace (the writer's fold) against reduceTask, and TaskWriter's handling of a failed
 * write after folding in place: the next commit re-reads the task instead of folding on a copy the
 * store does not have.
 */
import { foldTaskInPlace } from '../../lib/engine/task-reducer';
import { TaskWriter } from '../../lib/engine/task-writer';
import { InMemoryTaskStore, reduceTask, type Artifact, type Message, type StreamResponse, type Task, type TaskScope } from '../../lib';
import type { TaskEvent } from '../../lib/engine/task-reducer';

const ids = { taskId: 't1', contextId: 'c1' };
const opening: Message = { messageId: 'u1', role: 'ROLE_USER', parts: [{ text: 'hi' }], taskId: 't1', contextId: 'c1' };
const artifactEvent = (artifactId: string, text: string, append: boolean, fields: Partial<Artifact> = {}): TaskEvent => ({
  artifactUpdate: { ...ids, artifact: { artifactId, parts: [{ text }], ...fields }, append },
});
const working = (): TaskEvent => ({ statusUpdate: { ...ids, status: { state: 'TASK_STATE_WORKING', timestamp: '2026-01-01T00:00:00.000Z' } } });

/** A seeded sequence of events: a first status, then artifact chunks, replacements and statuses. */
function events(seed: number, n: number): TaskEvent[] {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const out: TaskEvent[] = [working()];
  for (let i = 0; i < n; i++) {
    const r = next();
    const id = ['a', 'b', 'c'][Math.floor(next() * 3)];
    if (r < 0.7) out.push(artifactEvent(id, `chunk ${i}`, true, next() < 0.1 ? { name: `name ${i}`, metadata: { i } } : {}));
    else if (r < 0.85) out.push(artifactEvent(id, `new ${i}`, false));
    else
      out.push({
        statusUpdate: {
          ...ids,
          status: {
            state: 'TASK_STATE_WORKING',
            timestamp: '2026-01-01T00:00:01.000Z',
            message: { ...opening, messageId: `m${i}`, role: 'ROLE_AGENT' },
          },
        },
      });
  }
  return out;
}

describe('foldTaskInPlace', () => {
  it('folds every sequence to the same task as reduceTask, without changing a published event', () => {
    for (let seed = 1; seed <= 20; seed++) {
      const sequence = events(seed, 60);
      const published = JSON.stringify(sequence);
      let pure: Task | undefined;
      let inPlace: Task | undefined;
      const emitted: StreamResponse[] = [];
      for (const event of sequence) {
        const a = reduceTask(pure, event, { ...ids, openingMessage: opening });
        const b = foldTaskInPlace(inPlace, event, { ...ids, openingMessage: opening });
        expect(b.ok).toBe(a.ok);
        if (!a.ok || !b.ok) continue;
        expect(b.task).toEqual(a.task);
        // A status on an existing task is a status change (reduceTask's is a replace); the rest match.
        if ('statusUpdate' in event && pure)
          expect(b.change).toEqual({ kind: 'status', update: (b.event as { statusUpdate: unknown }).statusUpdate });
        else expect(b.change).toEqual(a.change);
        emitted.push(b.event);
        pure = a.task;
        inPlace = b.task;
      }
      // Events (and what the first one created) are not appended to later.
      expect(JSON.stringify(sequence)).toBe(published);
      expect(JSON.stringify(emitted)).toBe(JSON.stringify(sequence.map((e, i) => (i === 0 ? emitted[0] : e))));
    }
  });

  it('changes the task it is given for an artifact event and returns that object', () => {
    const task = ((): Task => {
      const created = foldTaskInPlace(undefined, artifactEvent('a', 'one', false), ids);
      if (!created.ok) throw new Error(created.reason);
      return created.task;
    })();
    const parts = task.artifacts![0].parts;
    const next = foldTaskInPlace(task, artifactEvent('a', 'two', true), ids);
    expect(next.ok && next.task).toBe(task);
    expect(task.artifacts![0].parts).toBe(parts);
    expect(parts).toEqual([{ text: 'one' }, { text: 'two' }]);
  });

  it('gives each status its own task object, so a task read after later events keeps its status', () => {
    const created = foldTaskInPlace(undefined, working(), { ...ids, openingMessage: opening });
    if (!created.ok) throw new Error(created.reason);
    const done = foldTaskInPlace(
      created.task,
      { statusUpdate: { ...ids, status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T00:00:02.000Z' } } },
      ids,
    );
    expect(done.ok && done.task).not.toBe(created.task);
    expect(created.task.status.state).toBe('TASK_STATE_WORKING');
    expect(done.ok && done.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('refuses what reduceTask refuses, leaving the task as it was', () => {
    const created = foldTaskInPlace(undefined, artifactEvent('a', 'one', false), ids);
    if (!created.ok) throw new Error(created.reason);
    const before = JSON.stringify(created.task);
    expect(foldTaskInPlace(created.task, { artifactUpdate: { ...ids, artifact: { artifactId: 'a', parts: [] }, append: true } }, ids).ok).toBe(false);
    expect(
      foldTaskInPlace(
        created.task,
        { artifactUpdate: { taskId: 'other', contextId: 'c1', artifact: { artifactId: 'a', parts: [{ text: 'x' }] } } },
        ids,
      ).ok,
    ).toBe(false);
    expect(JSON.stringify(created.task)).toBe(before);
  });
});

describe('TaskWriter after a failed write', () => {
  const scope: TaskScope = { tenant: 't', owner: 'o' };

  it('re-reads the task before its next fold, so the chunk the store refused is not kept', async () => {
    const store = new InMemoryTaskStore();
    let failNext = false;
    let reads = 0;
    const flaky = {
      get: (...args: Parameters<InMemoryTaskStore['get']>) => (reads++, store.get(...args)),
      create: (...args: Parameters<InMemoryTaskStore['create']>) => store.create(...args),
      update: (...args: Parameters<InMemoryTaskStore['update']>) => {
        if (failNext) {
          failNext = false;
          return Promise.reject(new Error('connection lost'));
        }
        return store.update(...args);
      },
      list: (...args: Parameters<InMemoryTaskStore['list']>) => store.list(...args),
    };
    const writer = new TaskWriter(flaky, scope, 't1', 'c1');
    await writer.commit(artifactEvent('a', 'one', false), opening);
    await writer.commit(artifactEvent('a', 'two', true), undefined);
    failNext = true;
    await expect(writer.commit(artifactEvent('a', 'lost', true), undefined)).rejects.toThrow('connection lost');
    expect(reads).toBe(0);
    const result = await writer.commit(artifactEvent('a', 'three', true), undefined);
    expect(reads).toBe(1);
    expect(result.kind).toBe('committed');
    const expected = [{ text: 'one' }, { text: 'two' }, { text: 'three' }];
    expect(writer.task!.artifacts![0].parts).toEqual(expected);
    expect((await store.get(scope, 't1'))!.task.artifacts![0].parts).toEqual(expected);
    expect(writer.version).toBe(3);
  });
});
