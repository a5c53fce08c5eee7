/**
 * The carrier's request signal: getA2ARequestContext().signal aborts when the client closes the
 * request that carried the message (it is made lazily, so this checks it is still wired), and the
 * task goes on. execute() only records what it saw: an expect() in there would fail the task, not
 * the test.
 */
import { getA2ARequestContext, type AgentExecutor } from '../../lib';
import { deferred, until } from '../helpers/async';
import { startAgent } from '../helpers/fixtures';
import { V1, rpc, userMessage } from '../helpers/http';

it('aborts when the client goes away, and the task is not canceled by it', async () => {
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
  try {
    const client = new AbortController();
    const request = fetch(server.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...V1 },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: userMessage('wait') }),
      signal: client.signal,
    }).catch(() => undefined);
    const taskId = await started.promise;
    client.abort();
    await aborted.promise;
    await request;

    // The task's own signal fires on cancel only; the client leaving is not a cancel.
    await until(() => seen.finished, 'execute() to finish');
    expect(seen.taskSignalAbortedAfterClientLeft).toBe(false);
    const task = await rpc(server.url, 'GetTask', { id: taskId });
    expect(task.body.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.body.result.status.message.parts[0].text).toBe('finished after the client left');
  } finally {
    await server.close();
  }
});
