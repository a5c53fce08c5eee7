/** Cancel, on an Execution built directly: the hook's context, the grace bound, CANCELED, TaskNotCancelable. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Execution } from '../../../lib/engine/execution/execution';
import { answerFinished, cancelAnswer, type CancelRequest } from '../../../lib/engine/execution/cancel';
import type { AgentExecutor } from '../../../lib/engine/executor';
import type { EngineEvents } from '../../../lib/engine/engine-events';
import { A2AError } from '../../../lib/errors';
import { aborted, deferred } from '../../helpers/async';
import { recordingLogger } from '../../push/helpers';
import { executionDeps, recorder, scope, storeWith, task, turnRequest, userMessage } from './engine-fixtures';

const cancelRequest = {
  taskId: 'task-1',
  contextId: 'ctx-1',
  caller: { id: 'alice', authenticated: true },
  tenant: scope.tenant,
} as unknown as CancelRequest;

/** An agent whose turn starts the task and then waits for its signal; `cancel` is its hook. */
function agent(cancel?: AgentExecutor['cancel']) {
  const started = deferred();
  const executor: AgentExecutor = {
    async execute(ctx, events) {
      await events.start();
      started.resolve();
      await aborted(ctx.signal);
    },
    cancel,
  };
  return { executor, started: started.promise };
}

async function runningExecution(executor: AgentExecutor, started: Promise<void>, extra = {}) {
  const store = await storeWith();
  const { deps, idle } = executionDeps(store, executor, extra);
  const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1');
  const observer = recorder();
  execution.submit(turnRequest(userMessage('go'), observer));
  await started;
  return { store, execution, observer, idle };
}

describe('Execution.cancel', () => {
  it("runs executor.cancel() in the canceller's async context, aborts the turn and ends the task CANCELED", async () => {
    const requests = new AsyncLocalStorage<string>();
    let hookContext: string | undefined;
    let running: boolean | undefined;
    const { executor, started } = agent((ctx) => {
      hookContext = requests.getStore();
      running = ctx.running;
    });
    const store = await storeWith();
    const { deps, idle } = executionDeps(store, executor);
    const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1');
    const observer = recorder();
    requests.run('the sender', () => execution.submit(turnRequest(userMessage('go'), observer)));
    await started;
    const canceled = await requests.run('the canceller', () => execution.cancel(cancelRequest, 5_000));
    expect(hookContext).toBe('the canceller');
    expect(running).toBe(true);
    expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
    const ended = await observer.ended;
    expect(ended.kind === 'task' && ended.task.status.state).toBe('TASK_STATE_CANCELED');
    expect((await store.get(scope, 'task-1'))!.task.status.message?.parts[0]).toEqual({ text: 'The task was canceled.' });
    expect(idle).toEqual([execution]);
  });

  it('does not wait past the grace period for a hook that never settles', async () => {
    const { executor, started } = agent(() => new Promise<void>(() => {}));
    const { execution } = await runningExecution(executor, started);
    const canceled = await execution.cancel(cancelRequest, 20);
    expect(canceled.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('cancels anyway when the hook throws', async () => {
    const { executor, started } = agent(() => {
      throw new Error('hook broke');
    });
    const { execution } = await runningExecution(executor, started);
    expect((await execution.cancel(cancelRequest, 5_000)).status.state).toBe('TASK_STATE_CANCELED');
  });

  it('concurrent cancels share one run and one answer', async () => {
    let hookRuns = 0;
    const { executor, started } = agent(() => {
      hookRuns++;
    });
    const { execution } = await runningExecution(executor, started);
    const [a, b] = await Promise.all([execution.cancel(cancelRequest, 5_000), execution.cancel(cancelRequest, 5_000)]);
    expect(a).toBe(b);
    expect(hookRuns).toBe(1);
  });

  it('answers TaskNotCancelable when another terminal state won the race, and reports it', async () => {
    const answered: string[] = [];
    const events: EngineEvents = { cancelAnswered: ({ outcome }) => answered.push(outcome) };
    // The hook finishes the work instead: COMPLETED lands before the engine's CANCELED.
    const { executor, started } = agent(async (_ctx, taskEvents) => {
      await taskEvents.complete('finished first');
    });
    const { execution, store } = await runningExecution(executor, started, { events });
    const refusal = execution.cancel(cancelRequest, 5_000);
    await expect(refusal).rejects.toMatchObject({
      kind: 'TaskNotCancelable',
      message: 'Task task-1 is in TASK_STATE_COMPLETED and cannot be canceled',
    });
    expect((await store.get(scope, 'task-1'))!.task.status.state).toBe('TASK_STATE_COMPLETED');
    await Promise.resolve();
    expect(answered).toEqual(['not-cancelable']);
  });

  it('a hook whose canceled() is refused because the task completed first is logged as that race, at info, not as a throw', async () => {
    const logger = recordingLogger();
    const { executor, started } = agent(async (_ctx, taskEvents) => {
      await taskEvents.complete('finished first');
      await taskEvents.canceled();
    });
    const { execution, store } = await runningExecution(executor, started, { logger });
    await expect(execution.cancel(cancelRequest, 5_000)).rejects.toMatchObject({ kind: 'TaskNotCancelable' });
    expect((await store.get(scope, 'task-1'))!.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(logger.lines.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
    expect(logger.lines).toContainEqual({
      level: 'info',
      fields: { taskId: 'task-1', state: 'TASK_STATE_COMPLETED' },
      message: 'the task completed before the cancel; it stays COMPLETED',
    });
  });

  it('cancels a parked task (no turn running here): the hook is told so', async () => {
    let running: boolean | undefined;
    const executor: AgentExecutor = {
      execute: () => {},
      cancel: (ctx) => {
        running = ctx.running;
      },
    };
    const store = await storeWith(task('TASK_STATE_INPUT_REQUIRED'));
    const { deps } = executionDeps(store, executor);
    const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1');
    expect((await execution.cancel(cancelRequest, 5_000)).status.state).toBe('TASK_STATE_CANCELED');
    expect(running).toBe(false);
  });
});

describe('the answer to a CancelTask', () => {
  it('is the task when it is CANCELED, TaskNotCancelable for another terminal state, Unavailable when not settled', () => {
    const canceled = task('TASK_STATE_CANCELED');
    expect(cancelAnswer(canceled)).toBe(canceled);
    expect(() => cancelAnswer(task('TASK_STATE_FAILED'))).toThrow('Task task-1 is in TASK_STATE_FAILED and cannot be canceled');
    const unsettled = (() => {
      try {
        cancelAnswer(task('TASK_STATE_WORKING'));
      } catch (error) {
        return error as A2AError;
      }
    })();
    expect(unsettled?.kind).toBe('Unavailable');
  });

  it('for a task read terminal already, reports the outcome to the cancelAnswered hook', () => {
    const answered: string[] = [];
    const events: EngineEvents = { cancelAnswered: ({ outcome }) => answered.push(outcome) };
    expect(answerFinished(task('TASK_STATE_CANCELED'), events, 't').status.state).toBe('TASK_STATE_CANCELED');
    expect(() => answerFinished(task('TASK_STATE_REJECTED'), events, 't')).toThrow(expect.objectContaining({ kind: 'TaskNotCancelable' }));
    expect(answered).toEqual(['canceled', 'not-cancelable']);
  });
});
