/** The replica guard, alone and through an Execution: the lease, orphan settling, a handed-off turn, routed cancels. */
import { Execution } from '../../../lib/engine/execution/execution';
import { ReplicaGuard } from '../../../lib/engine/execution/replica-guard';
import { TaskChannel } from '../../../lib/engine/execution/task-channel';
import { InProcessTaskEventBus } from '../../../lib/engine/seams/task-event-bus';
import { openTaskPublisher } from '../../../lib/engine/task-publisher';
import type { AgentExecutor } from '../../../lib/engine/executor';
import type { HandOff } from '../../../lib/engine/task-events';
import { silentLogger } from '../../../lib/options';
import { aborted, deferred } from '../../helpers/async';
import { FakeLeases, executionDeps, recorder, scope, storeWith, task, turnRequest, userMessage } from './engine-fixtures';
import type { InMemoryTaskStore } from '../../../lib/backends/memory/in-memory-task-store';

const LOST = 'The server running this task stopped before the agent finished it.';

const completes: AgentExecutor = {
  async execute(_ctx, events) {
    await events.complete('done');
  },
};

async function orphanExecution(store: InMemoryTaskStore, leases?: FakeLeases) {
  const { deps, idle } = executionDeps(store, completes, { leases });
  return { execution: new Execution(deps, 'k', scope, 'task-1', 'ctx-1', await store.get(scope, 'task-1')), idle };
}

describe('ReplicaGuard leases', () => {
  it("a turn takes the task's lease before it runs, and the execution gives it back when idle", async () => {
    const leases = new FakeLeases();
    const store = await storeWith(task('TASK_STATE_INPUT_REQUIRED'));
    const { execution, idle } = await orphanExecution(store, leases);
    const observer = recorder();
    execution.submit(turnRequest(userMessage('more'), observer));
    const ended = await observer.ended;
    expect(ended.kind === 'task' && ended.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(leases.acquired).toEqual([{ key: 'k', waitMs: 0 }]);
    expect(idle).toEqual([execution]);
    await Promise.resolve();
    expect(leases.released).toEqual(['k']);
    expect(leases.held.size).toBe(0);
  });

  it('a turn whose lease another replica holds is refused as busy, and nothing is written', async () => {
    const leases = new FakeLeases();
    leases.heldElsewhere.add('k');
    const store = await storeWith(task('TASK_STATE_INPUT_REQUIRED'));
    const { execution } = await orphanExecution(store, leases);
    const observer = recorder();
    execution.submit(turnRequest(userMessage('more'), observer));
    const ended = await observer.ended;
    expect(ended.kind === 'error' && ended.error.message).toBe('Task task-1 is processing another message; send this one when it asks for input');
    expect((await store.get(scope, 'task-1'))!.version).toBe(1);
  });

  it('with the lease free but the task still mid-turn (its replica died), the turn is refused; the sweep settles it', async () => {
    const leases = new FakeLeases();
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const bus = new InProcessTaskEventBus();
    const guard = new ReplicaGuard({ bus, logger: silentLogger, leases, leaseWaitMs: 0 }, 'k', scope, 'task-1', () => {});
    const channel = new TaskChannel(
      { store, bus, logger: silentLogger },
      'k',
      scope,
      { taskId: 'task-1', contextId: 'ctx-1' },
      await store.get(scope, 'task-1'),
      {
        openingMessage: () => undefined,
        created: () => {},
        committed: () => {},
        announced: () => {},
        endedElsewhere: () => {},
        engineWriteFailed: () => {},
      },
      { refused: '', endedBy: '' },
    );
    expect(guard.needsLease).toBe(true);
    const refusal = await guard.takeLease(channel);
    expect(refusal?.kind).toBe('UnsupportedOperation');
    expect(guard.leased).toBe(true);
    guard.release();
    await Promise.resolve();
    expect(leases.released).toEqual(['k']);
  });
});

describe('orphan settling', () => {
  it("a task left mid-turn is FAILED with the reason, under the task's lease taken at once", async () => {
    const leases = new FakeLeases();
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const { execution, idle } = await orphanExecution(store, leases);
    await execution.settleOrphan(LOST, 'replica-lost');
    const stored = (await store.get(scope, 'task-1'))!.task;
    expect(stored.status.state).toBe('TASK_STATE_FAILED');
    expect(stored.status.message?.parts[0]).toEqual({ text: LOST });
    expect(leases.acquired).toEqual([{ key: 'k', waitMs: 0 }]);
    expect(idle).toEqual([execution]);
  });

  it('a parked task is not touched', async () => {
    const store = await storeWith(task('TASK_STATE_INPUT_REQUIRED'));
    const { execution, idle } = await orphanExecution(store);
    await execution.settleOrphan(LOST, 'replica-lost');
    const stored = (await store.get(scope, 'task-1'))!;
    expect(stored.version).toBe(1);
    expect(stored.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(idle).toEqual([execution]);
  });

  it('a task whose lease another replica took over is not touched', async () => {
    const leases = new FakeLeases();
    leases.heldElsewhere.add('k');
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const { execution } = await orphanExecution(store, leases);
    await execution.settleOrphan(LOST, 'replica-lost');
    expect((await store.get(scope, 'task-1'))!.task.status.state).toBe('TASK_STATE_WORKING');
  });
});

describe('following and routing across processes', () => {
  it("a handed-off turn follows the bus: a publisher's events reach its observer, and the final one ends it", async () => {
    const handed = deferred<HandOff>();
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        handed.resolve(await events.handOff());
      },
    };
    const store = await storeWith();
    const { deps } = executionDeps(store, executor);
    const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1');
    const observer = recorder();
    execution.submit(turnRequest(userMessage('go'), observer));
    const handOff = await handed.promise;
    // A worker (here, in the same process) publishes through its own task channel.
    const publisher = openTaskPublisher(deps, 'k', handOff.scope, (await store.get(scope, 'task-1'))!);
    await publisher.progress('half way');
    await publisher.complete('all done');
    const ended = await observer.ended;
    expect(ended.kind === 'task' && ended.task.status.state).toBe('TASK_STATE_COMPLETED');
    const states = observer.events.map((e) => ('task' in e ? e.task.status.state : 'statusUpdate' in e ? e.statusUpdate.status.state : '?'));
    expect(states).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    expect(publisher.closed).toBe(true);
  });

  it('a cancel asked through the bus (by another process) aborts the running turn, which ends CANCELED', async () => {
    const started = deferred();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        await events.start();
        started.resolve();
        await aborted(ctx.signal);
      },
    };
    const store = await storeWith();
    const { deps } = executionDeps(store, executor);
    const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1');
    const observer = recorder();
    execution.submit(turnRequest(userMessage('go'), observer));
    await started.promise;
    deps.bus.requestCancel('k');
    const ended = await observer.ended;
    expect(ended.kind === 'task' && ended.task.status.state).toBe('TASK_STATE_CANCELED');
  });
});
