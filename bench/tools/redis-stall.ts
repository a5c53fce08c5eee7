/**
 * Fault run for issue 32: a router on a throwaway Redis under open-loop SendMessage load (one every
 * 40 ms: parks, completions, follow-ups), redis-server SIGSTOPped for 10 s;
 * 25 s after it resumes, prints the answers by kind, the tasks left mid-turn with no live lease, and
 * the acknowledged tasks not in the state their client was last told.
 *
 *   npx tsx bench/tools/redis-stall.ts
 */
import { silentLogger } from '../../lib/index.js';
import { createRedisBackend } from '../../lib/redis.js';
import { redisForTests } from '../../__tests__/helpers/redis.js';
import { stallRun } from './stall-load.js';

async function main(): Promise<void> {
  const redis = redisForTests();
  const backend = await createRedisBackend({ url: await redis.url(), keyPrefix: 'stall:', logger: silentLogger });
  const { url, kinds, told, close } = await stallRun(
    backend.options,
    () => redis.signal('SIGSTOP'),
    () => redis.signal('SIGCONT'),
  );
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
  await close();
  await backend.close();
  await redis.stop();
}

void main();
