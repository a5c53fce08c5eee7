/**
 * The carrier's request signal: getA2ARequestContext().signal aborts when the client closes the
 * request that carried the message (it is made lazily, so this checks it is still wired), and the
 * task goes on. execute() only records what it saw: an expect() in there would fail the task, not
 * the test. Over both bindings (JSON-RPC and HTTP+JSON).
 */
import { getA2ARequestContext, type AgentExecutor } from '../../lib';
import { deferred, until } from '../helpers/async';
import { startAgent } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { a2aClient, BINDINGS } from '../helpers/bindings';

it.each(BINDINGS)('over %s: aborts when the client goes away, and the task is not canceled by it', async (binding) => {
  const started = deferred<string>();
  const aborted = deferred();
  const seen = { taskSignalAbortedAfterClientLeft: undefined as boolean | undefined, finished: false };
  const executor: AgentExecutor = {
    async execute(ctx, events) {
      const signal = getA2ARequestContext().signal!;
      signal.addEventListener('abort', () => aborted.resolve(), { once: true });
      await events.start();
      started.resolve(ctx.taskId);
      await aborted.promise;
      seen.taskSignalAbortedAfterClientLeft = ctx.signal.aborted;
      await events.complete('finished after the client left');
      seen.finished = true;
    },
  };
  const server = await startAgent(executor);
  const a2a = a2aClient(binding, server.url);
  try {
    const client = new AbortController();
    const request = a2a.open('SendMessage', userMessage('wait'), { signal: client.signal }).catch(() => undefined);
    const taskId = await started.promise;
    client.abort();
    await aborted.promise;
    await request;

    // The task's own signal fires on cancel only; the client leaving is not a cancel.
    await until(() => seen.finished, 'execute() to finish');
    expect(seen.taskSignalAbortedAfterClientLeft).toBe(false);
    const task = await a2a.call('GetTask', { id: taskId });
    expect(task.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.result.status.message.parts[0].text).toBe('finished after the client left');
  } finally {
    await server.close();
  }
});
