/**
 * The carrier's request signal: getA2ARequestContext().signal aborts when the client closes the
 * request that carried the message (it is made lazily, so this checks it is still wired).
 */
import { getA2ARequestContext, type AgentExecutor } from '../../lib';
import { deferred } from '../helpers/async';
import { startAgent } from '../helpers/fixtures';
import { V1, userMessage } from '../helpers/http';

it('aborts when the client goes away, and the task is not canceled by it', async () => {
  const started = deferred();
  const aborted = deferred();
  const executor: AgentExecutor = {
    async execute(ctx, events) {
      const signal = getA2ARequestContext().signal!;
      signal.addEventListener('abort', () => aborted.resolve(), { once: true });
      await events.start();
      started.resolve();
      await aborted.promise;
      expect(ctx.signal.aborted).toBe(false); // the task's own signal fires on cancel only
      await events.complete('finished after the client left');
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
    await started.promise;
    client.abort();
    await aborted.promise;
    await request;
  } finally {
    await server.close();
  }
});
