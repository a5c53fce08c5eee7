/**
 * Graceful shutdown: router.close() refuses new messages (503), lets running turns finish within
 * the grace period, then fails what is left with a reason, ends every open stream after its last
 * event, and resolves when nothing runs. `npm start` does it on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AgentExecutor, Task } from '../../lib';
import { aborted, deferred, until } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { openStream, rpc, sseFrames, userMessage } from '../helpers/http';

declare const EXPRESS_MAJOR: 4 | 5;

const readAll = async (response: Response): Promise<any[]> => {
  const events: any[] = [];
  for await (const frame of sseFrames(response)) if (frame.data) events.push(JSON.parse(frame.data).result);
  return events;
};
const stateOf = (event: any): string | undefined => event?.statusUpdate?.status.state ?? event?.task?.status.state;

describe('router.close()', () => {
  let server: TestServer;
  afterEach(() => server.close());

  it('lets a turn that finishes within the grace period finish, refuses new messages, and resolves', async () => {
    const release = deferred();
    const started = deferred();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        if (ctx.userText === 'park') return events.requireInput('more?');
        await events.start();
        started.resolve();
        await release.promise;
        await events.complete('finished during the drain');
      },
    };
    server = await startAgent(executor);
    const parked: Task = (await rpc(server.url, 'SendMessage', userMessage('park'))).body.result.task;
    const subscriber = await openStream(server.url, 'SubscribeToTask', { id: parked.id });
    const subscribed = readAll(subscriber);
    const blocking = rpc(server.url, 'SendMessage', userMessage('work'));
    await started.promise;

    const closed = server.router.close({ graceMs: 10_000 });
    const refused = await rpc(server.url, 'SendMessage', userMessage('too late'));
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe(-32603);
    expect(refused.body.error.message).toMatch(/shutting down/);
    const refusedFollowUp = await rpc(server.url, 'SendMessage', userMessage('Friday', { taskId: parked.id }));
    expect(refusedFollowUp.status).toBe(503);
    // Reads still work while draining.
    expect((await rpc(server.url, 'GetTask', { id: parked.id })).body.result.id).toBe(parked.id);

    release.resolve();
    expect((await blocking).body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    await closed;
    expect(server.router.liveExecutions).toBe(0);
    // The parked task's subscriber got its snapshot and a clean end (no error frame).
    expect(await subscribed).toEqual([{ task: parked }]);
    expect(server.router.liveObservers).toBe(0);
  });

  it('ends the streams of parked tasks at once, while a running turn still has its grace period (issue 21, item 4)', async () => {
    const release = deferred();
    const started = deferred();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        if (ctx.userText === 'park') return events.requireInput('more?');
        await events.start();
        started.resolve();
        await release.promise;
        await events.complete('finished during the drain');
      },
    };
    server = await startAgent(executor);
    const parked: Task = (await rpc(server.url, 'SendMessage', userMessage('park'))).body.result.task;
    const subscribed = readAll(await openStream(server.url, 'SubscribeToTask', { id: parked.id }));
    const running = await openStream(server.url, 'SendStreamingMessage', userMessage('work'));
    const runningEvents = readAll(running);
    await started.promise;
    const runningTask = (await rpc(server.url, 'ListTasks', {})).body.result.tasks.find((t: Task) => t.id !== parked.id) as Task;
    const runningSubscriber = readAll(await openStream(server.url, 'SubscribeToTask', { id: runningTask.id }));

    const closed = server.router.close({ graceMs: 60_000 });
    // The parked task's stream ends (cleanly, after its snapshot) while the turn is still running.
    expect(await subscribed).toEqual([{ task: parked }]);
    expect(server.router.liveExecutions).toBe(1);
    release.resolve();
    await closed;
    // The running task's streams end after its final event.
    expect(stateOf((await runningEvents).at(-1))).toBe('TASK_STATE_COMPLETED');
    expect(stateOf((await runningSubscriber).at(-1))).toBe('TASK_STATE_COMPLETED');
  });

  it('after the grace period, aborts what still runs: the task is FAILED with a reason, streams end after their last event', async () => {
    const started = deferred();
    let running = 0;
    const abortedSeen: boolean[] = [];
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        await events.start('working');
        running++;
        started.resolve();
        await aborted(ctx.signal);
        abortedSeen.push(true);
        await new Promise<void>(() => {}); // and never returns
      },
    };
    server = await startAgent(executor);
    const streams = await Promise.all(Array.from({ length: 5 }, () => openStream(server.url, 'SendStreamingMessage', userMessage('run'))));
    const reads = streams.map(readAll);
    const blocking = rpc(server.url, 'SendMessage', userMessage('run'));
    await started.promise;
    await until(() => running === 6, 'all six turns running');

    await server.router.close({ graceMs: 50 });
    expect(server.router.liveExecutions).toBe(0);
    const reply = (await blocking).body.result.task as Task;
    expect(reply.status.state).toBe('TASK_STATE_FAILED');
    expect(reply.status.message?.parts[0]).toEqual({ text: 'The server shut down before the agent finished this task.' });
    for (const events of await Promise.all(reads)) expect(stateOf(events.at(-1))).toBe('TASK_STATE_FAILED');
    expect(abortedSeen.length).toBeGreaterThan(0);
    // Nothing is left WORKING in the store.
    const listed = (await rpc(server.url, 'ListTasks', {})).body.result.tasks as Task[];
    expect(listed).toHaveLength(6);
    for (const task of listed) expect(task.status.state).toBe('TASK_STATE_FAILED');
  });
});

(EXPRESS_MAJOR === 5 ? describe : describe.skip)('npm start on SIGTERM', () => {
  it('exits within the grace period; streams end cleanly; the running turn finishes', async () => {
    const root = path.resolve(__dirname, '..', '..');
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/basic/server.ts'], {
      cwd: root,
      // npm start's default store (SQLite), in a file of this run's own.
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        SHUTDOWN_GRACE_MS: '5000',
        A2A_SQLITE_FILE: path.join(mkdtempSync(path.join(tmpdir(), 'a2a-start-')), 'tasks.sqlite'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          const match = /listening: (http:\/\/\S+\/agent)/.exec(out);
          if (match) resolve(match[1]);
        });
        child.on('exit', () => reject(new Error(`server exited early: ${out}`)));
      });
      // Five subscribers on parked tasks (they stay open until the task ends) and a running turn.
      const parked = await Promise.all(
        Array.from({ length: 5 }, async () => (await rpc(url, 'SendMessage', userMessage('book a flight'))).body.result.task as Task),
      );
      const streams = await Promise.all(parked.map((task) => openStream(url, 'SubscribeToTask', { id: task.id })));
      const reads = streams.map(readAll);
      const counting = openStream(url, 'SendStreamingMessage', userMessage('count to five')).then(readAll);
      await new Promise((resolve) => setTimeout(resolve, 100)); // let the count start: it takes about 1 s

      const signalled = Date.now();
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(Date.now() - signalled).toBeLessThan(5_000);
      for (const events of await Promise.all(reads)) expect(stateOf(events.at(-1))).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(stateOf((await counting).at(-1))).toBe('TASK_STATE_COMPLETED');
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);
});
