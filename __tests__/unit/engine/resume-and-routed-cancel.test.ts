/**
 * Through an Execution, without HTTP: executor.resume() for a task left mid-turn (what it is told,
 * that it runs as a turn under the lease, and that an unfinished resume still fails the task), and
 * a cancel routed from another process ending a turn whose agent ignores its signal.
 */
import { Execution } from '../../../lib/engine/execution/execution';
import type { AgentExecutor, ResumeContext } from '../../../lib/engine/executor';
import type { CommittedEvent } from '../../../lib/engine/seams/task-event-bus';
import { getA2ARequestContext } from '../../../lib/context/carrier';
import { deferred, until } from '../../helpers/async';
import { FakeLeases, executionDeps, recorder, scope, storeWith, task, turnRequest, userMessage } from './engine-fixtures';
import type { InMemoryTaskStore } from '../../../lib/backends/memory/in-memory-task-store';
import type { ExecutionDeps } from '../../../lib/engine/execution/execution';

const LOST = 'The server running this task stopped before the agent finished it.';

const never: AgentExecutor['execute'] = () => {
  throw new Error('execute() is not called for a resume');
};

async function orphan(store: InMemoryTaskStore, executor: AgentExecutor, extra: Partial<ExecutionDeps> = {}) {
  const { deps, idle } = executionDeps(store, executor, extra);
  const committed: CommittedEvent[] = [];
  deps.bus.subscribe('k', (event) => committed.push(event));
  const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1', await store.get(scope, 'task-1'));
  return { execution, deps, idle, committed };
}

const stateOf = (committed: CommittedEvent[]) => committed.map((c) => c.task.status.state);

describe('executor.resume()', () => {
  it('is called once for a task left mid-turn, with the task as stored, under its lease; what it publishes is committed and announced', async () => {
    const leases = new FakeLeases();
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const calls: ResumeContext[] = [];
    const done = deferred();
    let contextInside: unknown;
    const executor: AgentExecutor = {
      execute: never,
      async resume(ctx, events) {
        calls.push(ctx);
        contextInside = getA2ARequestContext();
        expect(leases.held.has('k')).toBe(true);
        await events.progress('picked up again');
        await events.complete('finished after the crash');
        done.resolve();
      },
    };
    const { execution, idle, committed } = await orphan(store, executor, { leases });
    await execution.settleOrphan(LOST, 'replica-lost');
    await done.promise;
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      resumed: true,
      reason: 'replica-lost',
      taskId: 'task-1',
      contextId: 'ctx-1',
      tenant: 't',
      caller: { id: 'alice' },
    });
    expect(calls[0].task.status.state).toBe('TASK_STATE_WORKING');
    expect(calls[0].task.history?.[0].parts[0]).toEqual({ text: 'hello' });
    expect(contextInside).toMatchObject({ caller: { id: 'alice' }, tenant: 't' });
    expect(stateOf(committed)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    expect((await store.get(scope, 'task-1'))!.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(idle).toEqual([execution]);
    expect(leases.held.size).toBe(0);
    // Settled already: a second settlement (another sweep) calls nothing.
    const again = await orphan(store, executor, { leases });
    await again.execution.settleOrphan(LOST, 'replica-lost');
    expect(calls).toHaveLength(1);
  });

  it.each([
    ['throws', async () => Promise.reject(new Error('cannot resume'))],
    ['returns without an end state', async () => undefined],
  ])('fails the task with the reason when it %s', async (_how, resume) => {
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const { execution, committed } = await orphan(store, { execute: never, resume });
    await execution.settleOrphan(LOST, 'replica-lost');
    await until(() => committed.length > 0, 'the settlement');
    const stored = (await store.get(scope, 'task-1'))!.task;
    expect(stored.status.state).toBe('TASK_STATE_FAILED');
    expect(stored.status.message?.parts[0]).toEqual({ text: LOST });
  });

  it('is not called for a parked task, nor when another replica holds the lease', async () => {
    const resume = jest.fn();
    const parked = await orphan(await storeWith(task('TASK_STATE_INPUT_REQUIRED')), { execute: never, resume });
    await parked.execution.settleOrphan(LOST, 'restart');
    const leases = new FakeLeases();
    leases.heldElsewhere.add('k');
    const taken = await orphan(await storeWith(task('TASK_STATE_WORKING')), { execute: never, resume }, { leases });
    await taken.execution.settleOrphan(LOST, 'replica-lost');
    expect(resume).not.toHaveBeenCalled();
  });

  it('can be canceled like a turn: its signal fires and the task ends CANCELED', async () => {
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const running = deferred();
    const executor: AgentExecutor = {
      execute: never,
      async resume(ctx) {
        running.resolve();
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      },
    };
    const { execution } = await orphan(store, executor);
    await execution.settleOrphan(LOST, 'restart');
    await running.promise;
    const canceled = await execution.cancel(
      {
        taskId: 'task-1',
        contextId: 'ctx-1',
        caller: { id: 'alice', authenticated: true },
        tenant: 't',
        metadata: undefined,
        requestContext: { caller: { id: 'alice', authenticated: true }, tenant: 't' },
      },
      1_000,
    );
    expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
  });
});

describe('a cancel routed from another process, the agent ignoring its signal', () => {
  /** execute() starts, then stays silent until `release` (it never looks at its signal). */
  function stubborn() {
    const started = deferred();
    const release = deferred();
    let late: 'accepted' | 'refused' | undefined;
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start();
        started.resolve();
        await release.promise;
        await events.progress('late').then(
          () => (late = 'accepted'),
          () => (late = 'refused'),
        );
      },
    };
    return { executor, started, release, late: () => late };
  }

  it('ends the turn with the CANCELED another process committed, and refuses its later events', async () => {
    const agent = stubborn();
    const store = await storeWith(task('TASK_STATE_INPUT_REQUIRED'));
    const { deps, idle } = executionDeps(store, agent.executor, { cancelGraceMs: 600_000 });
    const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1', await store.get(scope, 'task-1'));
    const observer = recorder();
    execution.submit(turnRequest(userMessage('go'), observer));
    await agent.started.promise;
    // "Another process": it routes the cancel, then commits CANCELED through its own execution.
    const { deps: otherDeps } = executionDeps(store, { execute: never }, { bus: deps.bus });
    const other = new Execution(otherDeps, 'k', scope, 'task-1', 'ctx-1');
    const request = {
      taskId: 'task-1',
      contextId: 'ctx-1',
      caller: { id: 'alice', authenticated: true },
      tenant: 't',
      metadata: undefined,
      requestContext: { caller: { id: 'alice', authenticated: true }, tenant: 't' },
    };
    const answer = await other.cancel(request, 600_000);
    expect(answer.status.state).toBe('TASK_STATE_CANCELED');
    const ended = await observer.ended;
    expect(ended.kind === 'task' && ended.task.status.state).toBe('TASK_STATE_CANCELED');
    const last = observer.events.at(-1)!;
    expect('statusUpdate' in last && last.statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
    expect(idle).toContain(execution);
    agent.release.resolve();
    await until(() => agent.late() !== undefined, 'the late write answered');
    expect(agent.late()).toBe('refused');
    expect((await store.get(scope, 'task-1'))!.task.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('commits CANCELED before it asks the other process to stop, so the first write after the signal is refused', async () => {
    // execute() writes the moment its signal fires (it does not wait for anything else).
    let late: 'accepted' | 'refused' | undefined;
    const started = deferred();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        await events.start();
        started.resolve();
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        await events.progress('late').then(
          () => (late = 'accepted'),
          () => (late = 'refused'),
        );
      },
    };
    const store = await storeWith(task('TASK_STATE_INPUT_REQUIRED'));
    const { deps } = executionDeps(store, executor, { cancelGraceMs: 600_000 });
    const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1', await store.get(scope, 'task-1'));
    execution.submit(turnRequest(userMessage('go'), recorder()));
    await started.promise;
    const { deps: otherDeps } = executionDeps(store, { execute: never }, { bus: deps.bus });
    const other = new Execution(otherDeps, 'k', scope, 'task-1', 'ctx-1');
    // What is stored when the cancel request reaches the running process.
    const storedAtRequest: string[] = [];
    deps.bus.onCancelRequest('k', () => void store.get(scope, 'task-1').then((stored) => storedAtRequest.push(stored!.task.status.state)));
    const request = {
      taskId: 'task-1',
      contextId: 'ctx-1',
      caller: { id: 'alice', authenticated: true },
      tenant: 't',
      metadata: undefined,
      requestContext: { caller: { id: 'alice', authenticated: true }, tenant: 't' },
    };
    expect((await other.cancel(request, 600_000)).status.state).toBe('TASK_STATE_CANCELED');
    await until(() => late !== undefined, 'the late write answered');
    expect(late).toBe('refused');
    expect(storedAtRequest).toEqual(['TASK_STATE_CANCELED']);
    const stored = (await store.get(scope, 'task-1'))!.task;
    expect(stored.status.state).toBe('TASK_STATE_CANCELED');
    expect(JSON.stringify(stored)).not.toContain('"late"');
  });

  it('writes CANCELED itself once the grace period is over when nothing was committed elsewhere', async () => {
    const agent = stubborn();
    const store = await storeWith();
    const { deps } = executionDeps(store, agent.executor, { cancelGraceMs: 20 });
    const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1');
    const observer = recorder();
    execution.submit(turnRequest(userMessage('go'), observer));
    await agent.started.promise;
    deps.bus.requestCancel('k'); // the other process asked, and died before writing anything
    const ended = await observer.ended;
    expect(ended.kind === 'task' && ended.task.status.state).toBe('TASK_STATE_CANCELED');
    agent.release.resolve();
    await until(() => agent.late() !== undefined, 'the late write answered');
    expect(agent.late()).toBe('refused');
  });
});
