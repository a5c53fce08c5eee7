/** The engine lifecycle alone: start-up settlement, the lease sweep, and the graceful close. */
import { EngineLifecycle, Executions, REPLICA_LOST_TEXT, RESTARTED_TEXT } from '../../../lib/engine/lifecycle';
import { LocalExecutionRegistry } from '../../../lib/engine/seams/execution-registry';
import type { Execution } from '../../../lib/engine/execution/execution';
import type { AgentExecutor } from '../../../lib/engine/executor';
import type { InMemoryTaskStore } from '../../../lib/backends/memory/in-memory-task-store';
import { aborted, deferred } from '../../helpers/async';
import { FakeLeases, executionDeps, recorder, scope, storeWith, task, turnRequest, userMessage } from './engine-fixtures';

function engine(store: InMemoryTaskStore, executor: AgentExecutor, leases?: FakeLeases) {
  const { deps } = executionDeps(store, executor, { leases });
  const registry = new LocalExecutionRegistry<Execution>();
  const { onIdle: _unused, ...rest } = deps;
  const executions = new Executions(registry, rest);
  const lifecycle = new EngineLifecycle({ store, executions, logger: deps.logger, leases });
  return { lifecycle, executions };
}

const idleAgent: AgentExecutor = { execute: () => {} };

describe('EngineLifecycle start-up', () => {
  it('fails the tasks a previous process left mid-turn, and leaves parked and finished ones alone', async () => {
    const store = await storeWith(
      task('TASK_STATE_WORKING', 'mid'),
      task('TASK_STATE_INPUT_REQUIRED', 'parked'),
      task('TASK_STATE_COMPLETED', 'done'),
    );
    // A store that can list what is mid-turn (as the SQLite store can).
    Object.assign(store, { findUnfinished: async () => ['mid', 'parked', 'done'].map((taskId) => ({ scope, taskId })) });
    const { lifecycle, executions } = engine(store, idleAgent);
    expect(lifecycle.recovering).toBeDefined();
    await lifecycle.recovering;
    const mid = (await store.get(scope, 'mid'))!.task;
    expect(mid.status.state).toBe('TASK_STATE_FAILED');
    expect(mid.status.message?.parts[0]).toEqual({ text: RESTARTED_TEXT });
    expect((await store.get(scope, 'parked'))!.version).toBe(1);
    expect((await store.get(scope, 'done'))!.version).toBe(1);
    expect(executions.size).toBe(0);
    await Promise.resolve();
    expect(lifecycle.recovering).toBeUndefined();
  });

  it('with leases, there is no start-up settlement; a sweep settles the tasks whose lease expired', async () => {
    const store = await storeWith(task('TASK_STATE_WORKING', 'orphan'));
    let looked = false;
    Object.assign(store, {
      findUnfinished: async () => {
        looked = true;
        return [];
      },
    });
    const leases = new FakeLeases();
    const { lifecycle } = engine(store, idleAgent, leases);
    expect(lifecycle.recovering).toBeUndefined();
    leases.expired = [{ scope, taskId: 'orphan' }];
    await lifecycle.sweepExpiredLeases(leases);
    const orphan = (await store.get(scope, 'orphan'))!.task;
    expect(orphan.status.message?.parts[0]).toEqual({ text: REPLICA_LOST_TEXT });
    expect(looked).toBe(false);
    await lifecycle.close(0);
  });
});

describe('EngineLifecycle.close', () => {
  it('refuses new turns, fails the turns still running after the grace period, refuses queued ones and ends subscriptions', async () => {
    const started = deferred();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        await events.start();
        started.resolve();
        await aborted(ctx.signal);
      },
    };
    const store = await storeWith();
    const { lifecycle, executions } = engine(store, executor);
    const execution = executions.open('k', scope, 'task-1', 'ctx-1');
    const running = recorder();
    const queued = recorder();
    execution.submit(turnRequest(userMessage('one'), running));
    execution.submit(turnRequest(userMessage('two'), queued));
    await started.promise;
    let subscriptionEnded = false;
    lifecycle.trackSubscription('k', () => (subscriptionEnded = true));

    await lifecycle.close(10);
    expect(() => lifecycle.refuseWhenClosing()).toThrow('This agent is shutting down; send the message again later');
    const refused = await queued.ended;
    expect(refused.kind === 'error' && refused.error.kind).toBe('Unavailable');
    const ended = await running.ended;
    expect(ended.kind === 'task' && ended.task.status.state).toBe('TASK_STATE_FAILED');
    expect((await store.get(scope, 'task-1'))!.task.status.message?.parts[0]).toEqual({
      text: 'The server shut down before the agent finished this task.',
    });
    expect(subscriptionEnded).toBe(true);
    expect(executions.size).toBe(0);
  });

  it('lets a turn that ends within the grace period finish as the agent ends it', async () => {
    const release = deferred();
    const started = deferred();
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start();
        started.resolve();
        await release.promise;
        await events.complete('finished during the close');
      },
    };
    const store = await storeWith();
    const { lifecycle, executions } = engine(store, executor);
    executions.open('k', scope, 'task-1', 'ctx-1').submit(turnRequest(userMessage('one')));
    await started.promise;
    const closed = lifecycle.close(60_000);
    expect(lifecycle.closing).toBe(true);
    release.resolve();
    await closed;
    expect((await store.get(scope, 'task-1'))!.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('forgets a subscription that ended on its own', async () => {
    const { lifecycle } = engine(await storeWith(), idleAgent);
    let calls = 0;
    const end = () => calls++;
    lifecycle.trackSubscription('k', end);
    lifecycle.forgetSubscription(end);
    await lifecycle.close(0);
    expect(calls).toBe(0);
  });
});
