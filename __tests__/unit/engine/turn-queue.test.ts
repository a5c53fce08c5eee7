/** The turn queue alone, and through an Execution: order, each turn in its request's context, shutdown refusals. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TurnQueue } from '../../../lib/engine/execution/turn';
import { Execution } from '../../../lib/engine/execution/execution';
import type { Turn } from '../../../lib/engine/execution/turn';
import type { AgentExecutor } from '../../../lib/engine/executor';
import { shuttingDown } from '../../../lib/errors';
import { deferred } from '../../helpers/async';
import { executionDeps, recorder, scope, storeWith, task, turnRequest, userMessage } from './engine-fixtures';

describe('TurnQueue', () => {
  it('runs turns one at a time, in the order their messages arrived', () => {
    const started: string[] = [];
    const queue = new TurnQueue((turn) => started.push(turn.request.message.messageId));
    const first = queue.submit(turnRequest(userMessage('one')), true);
    queue.submit(turnRequest(userMessage('two')), true);
    queue.submit(turnRequest(userMessage('three')), true);
    expect(started).toEqual(['m-one']);
    expect(queue.current).toBe(first);
    expect(queue.waiting).toBe(2);

    queue.end(first, { kind: 'message', message: userMessage('reply') });
    expect(queue.current).toBeUndefined();
    expect(queue.startNext()).toBe(true);
    expect(queue.startNext()).toBe(true);
    expect(started).toEqual(['m-one', 'm-two', 'm-three']);
    expect(queue.startNext()).toBe(false);
  });

  it('queues a turn that may not start now (a cancel runs) even when nothing runs', () => {
    const started: Turn[] = [];
    const queue = new TurnQueue((turn) => started.push(turn));
    queue.submit(turnRequest(userMessage('one')), false);
    expect(started).toHaveLength(0);
    expect(queue.waiting).toBe(1);
  });

  it('starts each queued turn in the async context of the request that brought it', () => {
    const requests = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const queue = new TurnQueue(() => seen.push(requests.getStore()));
    requests.run('request-1', () => queue.submit(turnRequest(userMessage('one')), true));
    requests.run('request-2', () => queue.submit(turnRequest(userMessage('two')), true));
    requests.run('request-3', () => queue.submit(turnRequest(userMessage('three')), true));
    // Started from another request's context (the one that ended the turn before).
    requests.run('some-other-request', () => {
      queue.startNext();
      queue.startNext();
    });
    expect(seen).toEqual(['request-1', 'request-2', 'request-3']);
  });

  it('counts the observers of the running and the queued turns', () => {
    const queue = new TurnQueue(() => {});
    queue.submit(turnRequest(userMessage('one'), recorder()), true);
    queue.submit(turnRequest(userMessage('two')), true);
    queue.submit(turnRequest(userMessage('three'), recorder()), true);
    expect(queue.observerCount).toBe(2);
  });

  it('refuses every waiting turn with its own error, and leaves the running one alone', async () => {
    const queue = new TurnQueue(() => {});
    const running = queue.submit(turnRequest(userMessage('one')), true);
    const second = recorder();
    const third = recorder();
    queue.submit(turnRequest(userMessage('two'), second), true);
    queue.submit(turnRequest(userMessage('three'), third), true);
    queue.refuseWaiting(shuttingDown);
    const [a, b] = await Promise.all([second.ended, third.ended]);
    for (const outcome of [a, b]) {
      expect(outcome.kind).toBe('error');
      if (outcome.kind === 'error') expect(outcome.error.message).toBe('This agent is shutting down; send the message again later');
    }
    expect(a).not.toBe(b);
    expect(queue.waiting).toBe(0);
    expect(running.closed).toBe(false);
  });
});

describe('Execution turn order and shutdown', () => {
  it('a follow-up queued behind a running turn runs after it, in its own request context, and sees the task it left', async () => {
    const requests = new AsyncLocalStorage<string>();
    const release = deferred();
    const contexts: Array<string | undefined> = [];
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        contexts.push(requests.getStore());
        if (!ctx.task) {
          await events.start();
          await release.promise;
          await events.requireInput('more?');
        } else {
          await events.complete(`had ${ctx.task.status.state}`);
        }
      },
    };
    const store = await storeWith();
    const { deps } = executionDeps(store, executor);
    const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1');
    const first = recorder();
    const second = recorder();
    requests.run('first', () => execution.submit(turnRequest(userMessage('one'), first)));
    requests.run('second', () => execution.submit(turnRequest(userMessage('two'), second)));
    release.resolve();
    const [a, b] = await Promise.all([first.ended, second.ended]);
    expect(a.kind === 'task' && a.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(b.kind === 'task' && b.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(contexts).toEqual(['first', 'second']);
    expect((await store.get(scope, 'task-1'))!.task.status.message?.parts[0]).toEqual({ text: 'had TASK_STATE_INPUT_REQUIRED' });
  });

  it('shutdown refuses the queued turns and fails the running one with the reason', async () => {
    const started = deferred();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        await events.start();
        started.resolve();
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
      },
    };
    const store = await storeWith(task('TASK_STATE_INPUT_REQUIRED'));
    const { deps, idle } = executionDeps(store, executor);
    const execution = new Execution(deps, 'k', scope, 'task-1', 'ctx-1', await store.get(scope, 'task-1'));
    const running = recorder();
    const queued = recorder();
    execution.submit(turnRequest(userMessage('one'), running));
    execution.submit(turnRequest(userMessage('two'), queued));
    await started.promise;
    await execution.shutdown();
    const refused = await queued.ended;
    expect(refused.kind === 'error' && refused.error.message).toBe('This agent is shutting down; send the message again later');
    const ended = await running.ended;
    expect(ended.kind === 'task' && ended.task.status.state).toBe('TASK_STATE_FAILED');
    const stored = (await store.get(scope, 'task-1'))!.task;
    expect(stored.status.message?.parts[0]).toEqual({ text: 'The server shut down before the agent finished this task.' });
    expect(idle).toEqual([execution]);
  });
});
