/**
 * Fault run for issue 32: a router on a throwaway PostgreSQL under open-loop SendMessage load (one
 * every 40 ms: parks, completions, follow-ups), every process of the cluster SIGSTOPped for 10 s;
 * 25 s after it resumes, prints the answers by kind, the tasks left mid-turn with no live lease, and
 * the acknowledged tasks not in the state their client was last told.
 *
 *   npx tsx bench/tools/pg-stall.ts
 */
import { readFileSync, readdirSync } from 'node:fs';
import { Pool } from 'pg';
import { silentLogger } from '../../lib/index.js';
import { createPostgresBackend } from '../../lib/postgres.js';
import { startPostgresServer } from '../../__tests__/helpers/postgres.js';
import { stallRun } from './stall-load.js';

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
  let pids: number[] = [];
  const { kinds, told, close } = await stallRun(
    backend.options,
    () => {
      pids = clusterPids(new URL(cluster.url).port);
      for (const pid of pids) process.kill(pid, 'SIGSTOP');
    },
    () => {
      for (const pid of pids) process.kill(pid, 'SIGCONT');
    },
  );
  const admin = new Pool({ connectionString: cluster.url });
  const { rows } = await admin.query<{ stranded: number }>(
    `SELECT count(*)::int AS stranded FROM stall.a2a_tasks t WHERE t.state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')
     AND NOT EXISTS (SELECT 1 FROM stall.a2a_leases l WHERE l.task_id = t.id AND l.expires_at > clock_timestamp())`,
  );
  const stored = await admin.query<{ id: string; state: string }>('SELECT id, state FROM stall.a2a_tasks WHERE id = ANY($1)', [[...told.keys()]]);
  const notAsTold = stored.rows.filter((row) => told.get(row.id) !== row.state).length + told.size - stored.rows.length;
  console.log(JSON.stringify({ answers: kinds, strandedTasks: rows[0].stranded, acknowledgedNotAsTold: notAsTold }, null, 1));
  await admin.end();
  await close();
  await backend.close();
  cluster.stop('immediate');
  cluster.remove();
}

void main();
