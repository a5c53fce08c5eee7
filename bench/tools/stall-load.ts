/** The open-loop load of the stall runs (pg-stall.ts, redis-stall.ts): the store stalled mid-load, then what each client was told. */
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib/index.js';
import { testCard } from '../../__tests__/helpers/fixtures.js';

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const executor: AgentExecutor = {
  async execute(ctx, events) {
    await events.start();
    await pause(50);
    if (ctx.userText === 'park') return events.requireInput('more?');
    return events.complete('done');
  },
};

interface Answer {
  readonly kind: string;
  readonly state?: string;
  readonly id?: string;
}

/**
 * A router on `backendOptions` under SendMessage load (one every 40 ms: parks, completions, follow-ups);
 * `stall` 3 s in, `resume` 10 s later, the load ends 2 s after that, and 25 s later (a 10 s lease is
 * claimed 15 s after its last renewal) resolves with the answers by kind and what each task's client was last told.
 */
export async function stallRun(
  backendOptions: Record<string, unknown>,
  stall: () => Promise<void> | void,
  resume: () => Promise<void> | void,
): Promise<{ url: string; kinds: Record<string, number>; told: Map<string, string>; close: () => Promise<void> }> {
  const router = createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, ...backendOptions });
  const app = express();
  app.use('/agent', router);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  let n = 0;
  const send = async (text: string, taskId?: string): Promise<Answer> => {
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
  const answers: Promise<Answer>[] = [];
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
  await stall();
  await pause(10_000);
  await resume();
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
  await pause(25_000);
  return {
    url,
    kinds,
    told,
    close: async () => {
      server.close();
      await router.close();
    },
  };
}
