/**
 * Bounded memory and time: an SSE client that never reads is cut once it is a send buffer behind
 * (the task goes on); a blocking caller that leaves releases its observer; a turn past
 * `turnTimeoutMs` fails its task with the reason.
 */
import net from 'node:net';
import type { AgentExecutor, Task } from '../../lib';
import { aborted, deferred, until } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { V1, rpc, rpcStream, userMessage } from '../helpers/http';

describe('bounded streams and turns', () => {
  let server: TestServer;
  afterEach(() => server.close());

  it('SSE clients that never read are cut once streamBufferBytes behind for streamStallMs; the task completes', async () => {
    const chunk = 'x'.repeat(64 * 1024);
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start();
        // Each event replaces one 64 KB artifact: the task stays small, the stream does not.
        for (let i = 0; i < 400; i++) await events.artifact({ artifactId: 'big', text: `${i}${chunk}` });
        await events.complete('sent it all');
      },
    };
    server = await startAgent(executor, { streamBufferBytes: 256 * 1024, streamStallMs: 100 });
    const { port } = new URL(server.url);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: userMessage('flood') });
    // Raw sockets that send the request and never read a byte of the answer.
    const sockets = Array.from({ length: 3 }, () => {
      const socket = net.connect(Number(port), '127.0.0.1');
      socket.pause();
      socket.write(
        `POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nA2A-Version: ${V1['A2A-Version']}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return socket;
    });
    // The turns run to their end, and the server lets go of the streams it cut.
    await until(() => server.router.liveExecutions === 0 && server.router.liveObservers === 0, 'turns finished, streams released', 20_000);
    // Reading now, each client finds a stream the server closed long before the 26 MB it produced.
    const received = await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<number>((resolve) => {
            let bytes = 0;
            socket.on('data', (data: Buffer) => (bytes += data.length));
            socket.on('close', () => resolve(bytes));
            socket.resume();
          }),
      ),
    );
    for (const bytes of received) expect(bytes).toBeLessThan(400 * 64 * 1024);
    const tasks = (await rpc(server.url, 'ListTasks', {})).body.result.tasks as Task[];
    expect(tasks.map((t) => t.status.state)).toEqual(['TASK_STATE_COMPLETED', 'TASK_STATE_COMPLETED', 'TASK_STATE_COMPLETED']);
  });

  it('a client that reads is never cut, even by a burst or one event larger than streamBufferBytes', async () => {
    const big = 'y'.repeat(2 * 1024 * 1024);
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start();
        await events.artifact({ artifactId: 'one', text: big });
        const burst = Array.from({ length: 20 }, (_, i) => events.artifact({ artifactId: `b${i}`, text: big.slice(0, 200 * 1024) }));
        await Promise.all(burst);
        await events.complete('all sent');
      },
    };
    server = await startAgent(executor, { streamBufferBytes: 1024 * 1024, streamStallMs: 2_000 });
    const reply = await rpcStream(server.url, 'SendStreamingMessage', userMessage('big'));
    expect(reply.events).toHaveLength(23); // the task, 21 artifacts, the completion
    expect(reply.events.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('a blocking caller that leaves releases its observer; the turn goes on and completes', async () => {
    const release = deferred();
    const started = deferred();
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start();
        started.resolve();
        await release.promise;
        await events.complete('done without a listener');
      },
    };
    server = await startAgent(executor);
    const client = new AbortController();
    const request = fetch(server.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...V1 },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: userMessage('wait') }),
      signal: client.signal,
    }).catch(() => undefined);
    await started.promise;
    expect(server.router.liveObservers).toBe(1);
    client.abort();
    await request;
    await until(() => server.router.liveObservers === 0, 'observer released');
    expect(server.router.liveExecutions).toBe(1);
    release.resolve();
    await until(() => server.router.liveExecutions === 0, 'turn finished');
    const [task] = (await rpc(server.url, 'ListTasks', {})).body.result.tasks as Task[];
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('a turn past turnTimeoutMs is failed with the reason, and its signal fires', async () => {
    const signalled = deferred();
    const executor: AgentExecutor = {
      async execute(ctx) {
        void aborted(ctx.signal).then(() => signalled.resolve());
        await new Promise<void>(() => {}); // never publishes, never returns
      },
    };
    server = await startAgent(executor, { turnTimeoutMs: 100 });
    const reply = await rpc(server.url, 'SendMessage', userMessage('hang'));
    const task = reply.body.result.task as Task;
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    expect(task.status.message?.parts[0]).toEqual({ text: 'The agent did not finish within 100 ms.' });
    await signalled.promise;
    expect(server.router.liveExecutions).toBe(0);
  });

  it('without turnTimeoutMs (the default) a long turn is left alone', async () => {
    const release = deferred();
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start();
        await release.promise;
        await events.complete();
      },
    };
    server = await startAgent(executor);
    const reply = rpc(server.url, 'SendMessage', userMessage('slow'));
    await until(() => server.router.liveExecutions === 1, 'turn running');
    await new Promise((resolve) => setTimeout(resolve, 50));
    release.resolve();
    expect((await reply).body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });
});
