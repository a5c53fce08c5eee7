/**
 * Run by files-per-request.test.ts in a process of its own: V8 coverage sees every module instance in
 * the isolate, so in a jest worker it would count the timers other test files left running.
 */
import { Session } from 'node:inspector/promises';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { createA2ARouter, InMemoryTaskStore, silentLogger, type AgentExecutor } from '../../lib/index.js';
import { testCard } from './fixtures.js';

const LIB = path.resolve(__dirname, '../../lib') + path.sep;

const executor: AgentExecutor = {
  async execute(context, events) {
    if (context.userText === 'wait') {
      await events.start();
      await new Promise<void>((resolve) => context.signal.addEventListener('abort', () => resolve(), { once: true }));
      return;
    }
    await events.complete('done');
  },
};

async function main(): Promise<void> {
  const app = express();
  app.use(createA2ARouter({ agentCard: testCard, executor, taskStore: new InMemoryTaskStore(), logger: silentLogger }));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const rpc = async (method: string, params: unknown) =>
    (await (
      await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
      })
    ).json()) as { result: { task?: { id: string; status: { state: string } }; status?: { state: string } } };
  const message = (text: string) => ({ message: { messageId: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text }] } });
  const expectState = (state: string | undefined, wanted: string) => {
    if (state !== wanted) throw new Error(`expected ${wanted}, got ${state}`);
  };
  const send = async () => expectState((await rpc('SendMessage', message('go'))).result.task?.status.state, 'TASK_STATE_COMPLETED');
  const cancelRunning = async () => {
    const id = (await rpc('SendMessage', { ...message('wait'), configuration: { returnImmediately: true } })).result.task!.id;
    return async () => expectState((await rpc('CancelTask', { id })).result.status?.state, 'TASK_STATE_CANCELED');
  };

  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  const filesRunBy = async (request: () => Promise<void>): Promise<string[]> => {
    await session.post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
    await session.post('Profiler.takePreciseCoverage'); // resets the counts: only `request` is counted
    await request();
    const { result } = await session.post('Profiler.takePreciseCoverage');
    await session.post('Profiler.stopPreciseCoverage');
    const files = new Set<string>();
    for (const script of result) {
      const file = script.url.startsWith('file://') ? new URL(script.url).pathname : script.url;
      if (file.startsWith(LIB) && script.functions.some((fn) => fn.ranges[0]!.count > 0)) files.add(path.relative(LIB, file));
    }
    return [...files].sort();
  };
  for (let i = 0; i < 3; i++) await send(); // loaded and compiled before the count
  const sent = await filesRunBy(send);
  for (let i = 0; i < 3; i++) await (await cancelRunning())();
  const canceled = await filesRunBy(await cancelRunning());
  session.disconnect();
  server.close();
  process.stdout.write(`RESULT ${JSON.stringify({ send: sent, cancel: canceled })}\n`);
  process.exit(0);
}

void main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
