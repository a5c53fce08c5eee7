/** The task reducer alone: what each event does to a task, and what it refuses. */
import { reduceTask, type Message, type Reduction, type Task, type TaskState } from '../../lib';

const ids = { taskId: 't1', contextId: 'c1' };
const opening: Message = { messageId: 'u1', role: 'ROLE_USER', parts: [{ text: 'hi' }], taskId: 't1', contextId: 'c1' };
const agent = (text: string): Message => ({ messageId: `a-${text}`, role: 'ROLE_AGENT', parts: [{ text }], taskId: 't1', contextId: 'c1' });
const ts = '2026-01-01T00:00:00.000Z';
const task = (state: TaskState, extra: Partial<Task> = {}): Task => ({
  id: 't1',
  contextId: 'c1',
  status: { state, timestamp: ts },
  history: [opening],
  ...extra,
});
const status = (state: TaskState, message?: Message, timestamp = ts) => ({
  statusUpdate: { taskId: 't1', contextId: 'c1', status: { state, timestamp, ...(message ? { message } : {}) } },
});
const ok = (r: Reduction) => {
  if (!r.ok) throw new Error(`refused: ${r.reason}`);
  return r;
};
const refused = (r: Reduction) => {
  if (r.ok) throw new Error('accepted');
  return r.reason;
};

describe('reduceTask', () => {
  it('a first status creates the task with the opening message and the status message in its history', () => {
    const r = ok(reduceTask(undefined, status('TASK_STATE_WORKING', agent('on it')), { ...ids, openingMessage: opening }));
    expect(r.task).toEqual({
      id: 't1',
      contextId: 'c1',
      status: { state: 'TASK_STATE_WORKING', timestamp: ts, message: agent('on it') },
      history: [opening, agent('on it')],
    });
    expect(r.event).toEqual({ task: r.task });
  });

  it('a Task event creates the task, adding the opening message once', () => {
    const created = ok(reduceTask(undefined, { task: task('TASK_STATE_SUBMITTED', { history: [] }) }, { ...ids, openingMessage: opening }));
    expect(created.task.history).toEqual([opening]);
    const already = ok(reduceTask(undefined, { task: task('TASK_STATE_SUBMITTED') }, { ...ids, openingMessage: opening }));
    expect(already.task.history).toEqual([opening]);
    expect(refused(reduceTask(task('TASK_STATE_WORKING'), { task: task('TASK_STATE_WORKING') }, ids))).toMatch(/only create/);
  });

  it('a status update moves the state, appends its message, and is the event streams see', () => {
    const r = ok(reduceTask(task('TASK_STATE_WORKING'), status('TASK_STATE_COMPLETED', agent('done')), ids));
    expect(r.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(r.task.history).toEqual([opening, agent('done')]);
    expect(r.change).toEqual({ kind: 'replace' });
    expect(r.event).toEqual(status('TASK_STATE_COMPLETED', agent('done')));
  });

  it('timestamps are stored as UTC with milliseconds, and the event carries the stored form', () => {
    const r = ok(reduceTask(task('TASK_STATE_WORKING'), status('TASK_STATE_WORKING', undefined, '2026-01-01T02:00:00+02:00'), ids));
    expect(r.task.status.timestamp).toBe('2026-01-01T00:00:00.000Z');
    expect((r.event as { statusUpdate: { status: { timestamp: string } } }).statusUpdate.status.timestamp).toBe('2026-01-01T00:00:00.000Z');
  });

  it('refuses anything out of a terminal state, and illegal transitions', () => {
    for (const state of ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'] as const) {
      const done = task(state);
      expect(refused(reduceTask(done, status('TASK_STATE_WORKING'), ids))).toMatch(/terminal/);
      expect(refused(reduceTask(done, { userMessage: opening }, ids))).toMatch(/terminal/);
      expect(
        refused(reduceTask(done, { artifactUpdate: { taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a', parts: [{ text: 'x' }] } } }, ids)),
      ).toMatch(/terminal/);
    }
    expect(refused(reduceTask(task('TASK_STATE_INPUT_REQUIRED'), status('TASK_STATE_SUBMITTED'), ids))).toMatch(/illegal transition/);
  });

  it('refuses events of another task or context', () => {
    expect(
      refused(reduceTask(task('TASK_STATE_WORKING'), { statusUpdate: { ...status('TASK_STATE_WORKING').statusUpdate, taskId: 't2' } }, ids)),
    ).toMatch(/task t2/);
    expect(
      refused(reduceTask(task('TASK_STATE_WORKING'), { statusUpdate: { ...status('TASK_STATE_WORKING').statusUpdate, contextId: 'c2' } }, ids)),
    ).toMatch(/contextId c2/);
  });

  it('artifacts: added, appended as chunks, replaced; each change says so for stores that append', () => {
    const add = (artifactId: string, text: string, append = false) => ({
      artifactUpdate: { taskId: 't1', contextId: 'c1', artifact: { artifactId, parts: [{ text }] }, ...(append ? { append: true } : {}) },
    });
    const first = ok(reduceTask(task('TASK_STATE_WORKING'), add('a', 'one'), ids));
    expect(first.change).toEqual({ kind: 'artifact', update: add('a', 'one').artifactUpdate });
    const chunk = ok(reduceTask(first.task, add('a', 'two', true), ids));
    expect(chunk.task.artifacts).toEqual([{ artifactId: 'a', parts: [{ text: 'one' }, { text: 'two' }] }]);
    const replaced = ok(reduceTask(chunk.task, add('a', 'new'), ids));
    expect(replaced.task.artifacts).toEqual([{ artifactId: 'a', parts: [{ text: 'new' }] }]);
    expect(
      refused(
        reduceTask(task('TASK_STATE_WORKING'), { artifactUpdate: { taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a', parts: [] } } }, ids),
      ),
    ).toMatch(/at least one part/);
    // Before any status: the task is created WORKING, with the artifact.
    const created = ok(reduceTask(undefined, add('a', 'one'), { ...ids, openingMessage: opening }));
    expect(created.task.status.state).toBe('TASK_STATE_WORKING');
    expect(created.task.artifacts).toHaveLength(1);
  });

  it('a follow-up joins the history and claims the task (WORKING again)', () => {
    const parked = task('TASK_STATE_INPUT_REQUIRED', { history: [opening, agent('which day?')] });
    const followUp: Message = { ...opening, messageId: 'u2', parts: [{ text: 'Friday' }] };
    const r = ok(reduceTask(parked, { userMessage: followUp }, ids));
    expect(r.task.status.state).toBe('TASK_STATE_WORKING');
    expect(r.task.history).toEqual([opening, agent('which day?'), followUp]);
    // Subscribers and webhooks are told the return to WORKING (issue 19, item 4).
    expect(r.event).toEqual({ statusUpdate: { taskId: ids.taskId, contextId: ids.contextId, status: r.task.status } });
    expect(refused(reduceTask(undefined, { userMessage: followUp }, ids))).toMatch(/does not exist/);
  });

  it('never mutates its input', () => {
    const before = task('TASK_STATE_WORKING', { artifacts: [{ artifactId: 'a', parts: [{ text: 'one' }] }] });
    const frozen = JSON.stringify(before);
    reduceTask(before, status('TASK_STATE_COMPLETED', agent('done')), ids);
    reduceTask(
      before,
      { artifactUpdate: { taskId: 't1', contextId: 'c1', artifact: { artifactId: 'a', parts: [{ text: 'two' }] }, append: true } },
      ids,
    );
    expect(JSON.stringify(before)).toBe(frozen);
  });
});
