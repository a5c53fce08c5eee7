/**
 * Fault run for issue 32: a router on a throwaway PostgreSQL under open-loop SendMessage load (one
 * every 40 ms: parks, completions, follow-ups), every process of the cluster SIGSTOPped for 10 s;
 * 25 s after it resumes, prints the answers by kind, the tasks left mid-turn with no live lease, and
 * the acknowledged tasks not in the state their client was last told.
 *
 *   npx tsx bench/tools/pg-stall.ts
 */
import { readFileSync, readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { Pool } from 'pg';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib/index.js';
import { createPostgresBackend } from '../../lib/postgres.js';
import { startPostgresServer } from '../../__tests__/helpers/postgres.js';
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

/** The postmaster of the cluster listening on `port`, and its children. */
function clusterPids(port: string): number[] {
  const dir = readdirSync('/tmp')
    .map((name) => `/tmp/${name}/data/postmaster.pid`)
    .find((file) => {
      try {
        return readFileSync(file, 'utf8').split('\n')[3] === port;
      } catch {
        return false;
      }
    });
  const postmaster = Number(readFileSync(dir!, 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return /^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] === String(postmaster);
      } catch {
        return false;
      }
    });
  return [postmaster, ...children.map(Number)];
}

async function main(): Promise<void> {
  const cluster = await startPostgresServer();
  const backend = await createPostgresBackend({ connectionString: cluster.url, schema: 'stall', logger: silentLogger });
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
  const pids = clusterPids(new URL(cluster.url).port);
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  await pause(10_000);
  for (const pid of pids) process.kill(pid, 'SIGCONT');
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
  const admin = new Pool({ connectionString: cluster.url });
  const { rows } = await admin.query<{ stranded: number }>(
    `SELECT count(*)::int AS stranded FROM stall.a2a_tasks t WHERE t.state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')
     AND NOT EXISTS (SELECT 1 FROM stall.a2a_leases l WHERE l.task_id = t.id AND l.expires_at > clock_timestamp())`,
  );
  const stored = await admin.query<{ id: string; state: string }>('SELECT id, state FROM stall.a2a_tasks WHERE id = ANY($1)', [[...told.keys()]]);
  const notAsTold = stored.rows.filter((row) => told.get(row.id) !== row.state).length + told.size - stored.rows.length;
  console.log(JSON.stringify({ answers: kinds, strandedTasks: rows[0].stranded, acknowledgedNotAsTold: notAsTold }, null, 1));
  await admin.end();
  server.close();
  await router.close();
  await backend.close();
  cluster.stop('immediate');
  cluster.remove();
}

void main();
