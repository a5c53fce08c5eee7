/**
 * Fault run for issue 32: a router on a throwaway Redis under open-loop SendMessage load (one every
 * 40 ms: parks, completions, follow-ups), redis-server SIGSTOPped for 10 s;
 * 25 s after it resumes, prints the answers by kind, the tasks left mid-turn with no live lease, and
 * the acknowledged tasks not in the state their client was last told.
 *
 *   npx tsx bench/tools/redis-stall.ts
 */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib/index.js';
import { createRedisBackend } from '../../lib/redis.js';
import { redisForTests } from '../../__tests__/helpers/redis.js';
import { testCard } from '../../__tests__/helpers/fixtures.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const executor: AgentExecutor = {
  async execute(ctx, events) {
    await events.start();
    await pause(50);
    if (ctx.userText === 'park') return events.requireInput('more?');
    return events.complete('done');
  },
};

async function main(): Promise<void> {
  const redis = redisForTests();
  const backend = await createRedisBackend({ url: await redis.url(), keyPrefix: 'stall:', logger: silentLogger });
  const router = createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, ...backend.options });
  const app = express();
  app.use('/agent', router);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  let n = 0;
  const send = async (text: string, taskId?: string): Promise<{ kind: string; state?: string; id?: string }> => {
    const message = { messageId: `m-${++n}`, role: 'ROLE_USER', parts: [{ text }], ...(taskId ? { taskId } : {}) };
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: n, method: 'SendMessage', params: { message } }),
        signal: AbortSignal.timeout(60_000),
      });
      const body = (await response.json()) as {
        error?: { code: number; message: string };
        result?: { task?: { id: string; status: { state: string } } };
      };
      const task = body.result?.task;
      return {
        kind: `${response.status} ${body.error ? `${body.error.code} ${body.error.message}` : task?.status.state}`,
        state: task?.status.state,
        id: task?.id,
      };
    } catch (error) {
      return { kind: `no answer: ${String(error)}` };
    }
  };
  const parked: string[] = [];
  const answers: Promise<{ kind: string; state?: string; id?: string }>[] = [];
  let loading = true;
  const load = (async () => {
    for (let i = 0; loading; i++) {
      if (i % 3 === 0 && parked.length > 0) answers.push(send('done', parked.shift()));
      else
        answers.push(
          send(i % 2 ? 'park' : 'done').then((answer) => {
            if (answer.state === 'TASK_STATE_INPUT_REQUIRED') parked.push(answer.id!);
            return answer;
          }),
        );
      await pause(40);
    }
  })();
  await pause(3_000);
  await redis.signal('SIGSTOP');
  await pause(10_000);
  await redis.signal('SIGCONT');
  await pause(2_000);
  loading = false;
  await load;
  const kinds: Record<string, number> = {};
  // What each task's client was last told (a follow-up is sent once its task's park was answered).
  const told = new Map<string, string>();
  for (const { kind, state, id } of await Promise.all(answers)) {
    kinds[kind] = (kinds[kind] ?? 0) + 1;
    if (id !== undefined && state !== undefined) told.set(id, state);
  }
  await pause(25_000); // a lease of 10 s (the default) is claimed 15 s after its last renewal
  // Nothing runs now (the load ended 25 s ago): a task mid-turn is stranded.
  const read = async (method: string, params: unknown) =>
    (await (
      await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 0, method, params }),
      })
    ).json()) as { result?: { tasks?: unknown[]; status?: { state: string } } };
  let stranded = 0;
  for (const status of ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING'])
    stranded += (await read('ListTasks', { status, pageSize: 100 })).result?.tasks?.length ?? 0;
  const notAsTold: string[] = [];
  for (const [id, state] of told) {
    const now = (await read('GetTask', { id })).result?.status?.state;
    if (now !== state) notAsTold.push(`told ${state}, now ${now}`);
  }
  console.log(JSON.stringify({ answers: kinds, strandedTasks: stranded, acknowledgedNotAsTold: notAsTold }, null, 1));
  server.close();
  await router.close();
  await backend.close();
  await redis.stop();
}

void main();
