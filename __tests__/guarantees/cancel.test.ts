/**
 * Guarantee 4: CancelTask always ends in a terminal state and leaves nothing running, for running and
 * parked tasks, even when the agent's cancel() throws or hangs or execute() ignores the signal.
 * Over both bindings (JSON-RPC and HTTP+JSON).
 */
import type { AgentExecutor, CancelContext } from '../../lib';
import { deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { a2aClient, BINDINGS, type A2AClient } from '../helpers/bindings';

type CancelBehaviour = 'publishes' | 'throws' | 'hangs' | 'absent' | 'silent';

function agent(cancelBehaviour: CancelBehaviour, executeBehaviour: 'honours-signal' | 'ignores-signal' | 'throws-on-abort') {
  const calls: CancelContext[] = [];
  const started = deferred();
  const executor: AgentExecutor = {
    async execute(ctx, events) {
      if (ctx.userText === 'park') return events.requireInput('more?');
      if (ctx.userText === 'finish') return events.complete('done');
      await events.start('working');
      started.resolve();
      if (executeBehaviour === 'ignores-signal') return new Promise<void>(() => {});
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      if (executeBehaviour === 'throws-on-abort') throw new Error('aborted');
    },
  };
  if (cancelBehaviour !== 'absent') {
    executor.cancel = async (ctx, events) => {
      calls.push(ctx);
      if (cancelBehaviour === 'publishes') return events.canceled('stopped by the agent');
      if (cancelBehaviour === 'throws') throw new Error('cancel blew up');
      if (cancelBehaviour === 'hangs') return new Promise<void>(() => {});
    };
  }
  return { executor, calls, started };
}

async function startRunning(a2a: A2AClient, started: Promise<void>): Promise<string> {
  const reply = await a2a.call('SendMessage', { ...userMessage('run'), configuration: { returnImmediately: true } });
  await started;
  return reply.result.task.id;
}

describe.each(BINDINGS)('cancel always ends, over %s', (binding) => {
  let server: TestServer | undefined;
  const a2a = () => a2aClient(binding, server!.url);
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const cases: [CancelBehaviour, 'honours-signal' | 'ignores-signal' | 'throws-on-abort', string][] = [
    ['publishes', 'honours-signal', 'stopped by the agent'],
    ['throws', 'honours-signal', 'The task was canceled.'],
    ['hangs', 'honours-signal', 'The task was canceled.'],
    ['absent', 'honours-signal', 'The task was canceled.'],
    ['silent', 'throws-on-abort', 'The task was canceled.'],
    ['silent', 'ignores-signal', 'The task was canceled.'],
    ['hangs', 'ignores-signal', 'The task was canceled.'],
  ];

  it.each(cases)('running task, cancel() %s, execute() %s → CANCELED, nothing live', async (cancelBehaviour, executeBehaviour, text) => {
    const { executor, calls, started } = agent(cancelBehaviour, executeBehaviour);
    server = await startAgent(executor, { cancelGracePeriodMs: 100 });
    const taskId = await startRunning(a2a(), started.promise);
    expect(server.router.liveExecutions).toBe(1);

    const reply = await a2a().call('CancelTask', { id: taskId });
    expect(reply.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(reply.result.status.message.parts[0].text).toBe(text);
    if (cancelBehaviour !== 'absent') expect(calls).toHaveLength(1);
    if (calls[0]) expect(calls[0].running).toBe(true);
    expect(server.router.liveExecutions).toBe(0);
    expect(server.router.liveObservers).toBe(0);

    const stored = await a2a().call('GetTask', { id: taskId });
    expect(stored.result.status.state).toBe('TASK_STATE_CANCELED');
    // The task is terminal: a follow-up is refused.
    const followUp = await a2a().call('SendMessage', userMessage('more', { taskId }));
    expect(followUp.error?.code).toBe(-32004);
  });

  it.each<CancelBehaviour>(['publishes', 'throws', 'hangs', 'absent'])('parked task, cancel() %s → CANCELED', async (cancelBehaviour) => {
    const { executor, calls } = agent(cancelBehaviour, 'honours-signal');
    server = await startAgent(executor, { cancelGracePeriodMs: 100 });
    const parked = await a2a().call('SendMessage', userMessage('park'));
    const taskId = parked.result.task.id;
    expect(server.router.liveExecutions).toBe(0);

    const reply = await a2a().call('CancelTask', { id: taskId });
    expect(reply.result.status.state).toBe('TASK_STATE_CANCELED');
    if (cancelBehaviour !== 'absent') {
      expect(calls).toHaveLength(1);
      expect(calls[0].running).toBe(false);
      expect(calls[0].task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    }
    expect(server.router.liveExecutions).toBe(0);
  });

  it('a parked task without a cancel() hook is canceled at once, not after the grace period', async () => {
    const { executor } = agent('absent', 'honours-signal');
    // A grace period longer than the test timeout: waiting for it would fail the test.
    server = await startAgent(executor, { cancelGracePeriodMs: 600_000 });
    const taskId = (await a2a().call('SendMessage', userMessage('park'))).result.task.id;
    const reply = await a2a().call('CancelTask', { id: taskId });
    expect(reply.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(server.router.liveExecutions).toBe(0);
  }, 10_000);

  it('a canceled task is returned again by a second CancelTask, without calling cancel() again', async () => {
    const { executor, calls } = agent('publishes', 'honours-signal');
    server = await startAgent(executor);
    const taskId = (await a2a().call('SendMessage', userMessage('park'))).result.task.id;
    const first = await a2a().call('CancelTask', { id: taskId });
    const second = await a2a().call('CancelTask', { id: taskId });
    expect(second.result).toEqual(first.result);
    expect(calls).toHaveLength(1);
  });

  it('a completed task is not cancelable', async () => {
    const { executor, calls } = agent('publishes', 'honours-signal');
    server = await startAgent(executor);
    const taskId = (await a2a().call('SendMessage', userMessage('finish'))).result.task.id;
    const reply = await a2a().call('CancelTask', { id: taskId });
    expect(reply.error?.code).toBe(-32002);
    expect(reply.error?.reason).toBe('TASK_NOT_CANCELABLE');
    expect(calls).toHaveLength(0);
  });

  it('concurrent cancels of one running task share one cancellation', async () => {
    const { executor, calls, started } = agent('publishes', 'honours-signal');
    server = await startAgent(executor);
    const taskId = await startRunning(a2a(), started.promise);
    const replies = await Promise.all([1, 2, 3].map(() => a2a().call('CancelTask', { id: taskId })));
    for (const reply of replies) expect(reply.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(calls).toHaveLength(1);
    expect(server.router.liveExecutions).toBe(0);
  });

  it('the AbortSignal fires after cancel() ran', async () => {
    const order: string[] = [];
    const started = deferred();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        await events.start();
        ctx.signal.addEventListener('abort', () => order.push('abort'));
        started.resolve();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      },
      async cancel() {
        order.push('cancel');
      },
    };
    server = await startAgent(executor);
    const taskId = await startRunning(a2a(), started.promise);
    await a2a().call('CancelTask', { id: taskId });
    expect(order).toEqual(['cancel', 'abort']);
  });
});
