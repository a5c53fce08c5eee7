/**
 * The two-turn workload for instructions.sh: `pairs` input-required tasks, each followed up once
 * (turn 1 parks the task, turn 2 completes it), over 10 keep-alive connections to a bench server on
 * loopback. autocannon cannot send turn 2 (it needs turn 1's task id), hence this client.
 * Exits non-zero when an answer is not the expected task state.
 *
 *   npx tsx bench/tools/two-turn-pairs.ts <port> <pairs> [connections=10]
 */
import { RPC_HEADERS, sendMessageBody } from '../workloads.js';

const [port, pairs, connections = 10] = process.argv.slice(2).map(Number);
if (!Number.isInteger(port) || !Number.isInteger(pairs)) throw new Error('usage: two-turn-pairs.ts <port> <pairs> [connections]');
const url = `http://127.0.0.1:${port}/`;

interface Answer {
  result?: { task?: { id?: string; status?: { state?: string } } };
}

async function send(body: string): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers: RPC_HEADERS, body });
  return (await response.json()) as Answer;
}

let started = 0;
let bad = 0;
async function connection(): Promise<void> {
  while (started < pairs) {
    started += 1;
    const parked = (await send(sendMessageBody('input'))).result?.task;
    if (parked?.status?.state !== 'TASK_STATE_INPUT_REQUIRED' || !parked.id) {
      bad += 1;
      continue;
    }
    const done = (await send(sendMessageBody('more', { taskId: parked.id }))).result?.task;
    if (done?.status?.state !== 'TASK_STATE_COMPLETED') bad += 1;
  }
}

async function main(): Promise<void> {
  await Promise.all(Array.from({ length: connections }, connection));
  if (bad > 0) {
    console.error(`two-turn-pairs: ${bad} of ${pairs} pairs did not answer input-required then completed`);
    process.exit(1);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
