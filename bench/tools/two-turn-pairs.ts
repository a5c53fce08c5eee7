/**
 * The two-turn workload for instructions.sh: `pairs` input-required tasks, each followed up once
 * (turn 1 parks the task, turn 2 completes it), over 10 keep-alive connections to a bench server on
 * loopback. autocannon cannot send turn 2 (it needs turn 1's task id), hence this client.
 * Exits non-zero when an answer is not the expected task state.
 *
 *   npx tsx bench/tools/two-turn-pairs.ts <port> <pairs> [connections=10]
 */
import { pool, rpcClient } from '../http.js';
import { extractTask, sendMessageBody } from '../workloads.js';

const [port, pairs, connections = 10] = process.argv.slice(2).map(Number);
if (!Number.isInteger(port) || !Number.isInteger(pairs)) throw new Error('usage: two-turn-pairs.ts <port> <pairs> [connections]');

async function main(): Promise<void> {
  const client = rpcClient(`http://127.0.0.1:${port}/`, connections);
  try {
    const good = await pool(pairs, connections, async () => {
      const parked = await client.post(sendMessageBody('input'));
      const task = extractTask(parked.body);
      if (!task || !parked.body.includes('TASK_STATE_INPUT_REQUIRED')) return false;
      const done = await client.post(sendMessageBody('more', { taskId: task.id }));
      return done.body.includes('TASK_STATE_COMPLETED');
    });
    const bad = good.filter((ok) => !ok).length;
    if (bad > 0) throw new Error(`two-turn-pairs: ${bad} of ${pairs} pairs did not answer input-required then completed`);
  } finally {
    client.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
