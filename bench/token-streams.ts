/**
 * LLM-like streaming: many concurrent tasks, each appending small artifact chunks (16-64 bytes) at a
 * steady rate, on every store. Reports CPU per event, the kit's and the database server's, and the
 * time from the agent's publish to the client's read.
 *
 *   npx tsx bench/token-streams.ts                                   # 200 streams x 50 chunks, one every 20 ms
 *   npx tsx bench/token-streams.ts --stores memory,postgres --streams 100 --chunks 50 --interval-ms 20 --out <dir>
 *   npm run bench -- --token-streams                                 # the same, through the main runner
 *   npx tsx bench/token-streams.ts --stores postgres --profile /tmp   # and a CPU profile of the server
 *
 * The server (the router on lib/ through tsx, so the working tree) runs in a child process per store;
 * the clients run here, so their CPU is not counted. Redis and PostgreSQL: a server of the bench's own
 * (skipped when not installed), its CPU read from /proc (bench/db-cpu.ts). SQLite runs in the server's
 * process. Latency: the agent writes `performance.timeOrigin + performance.now()` into each chunk and
 * the client subtracts it from its own clock when it parses the frame (one machine, one clock).
 * Writes bench/results/token-streams.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import express from 'express';
import { Pool } from 'pg';
import { createClient } from 'redis';
import { processTreeCpuMicros } from './db-cpu.js';
import { startLocalPostgres } from './local-postgres.js';
import { kitStore, startRedis, STORES, type StoreId } from './local-stores.js';

const ROOT = path.resolve(__dirname, '..');
const clock = () => performance.timeOrigin + performance.now();

// ---------------------------------------------------------------------------------------------
// The server (a child process per store)

async function serve(store: StoreId): Promise<void> {
  const kit = await import('../lib/index.js');
  const { options, close } = await kitStore(store, 'ts', { redis: process.env.TOKEN_STREAMS_REDIS_URL, postgres: process.env.TOKEN_STREAMS_PG_URL });
  const router = kit.createA2ARouter({
    agentCard: kit.defineAgentCard({ name: 'token streams', description: 'streams tokens' }),
    executor: {
      async execute(ctx, events) {
        const [chunks, intervalMs] = ctx.userText.split(',').map(Number);
        await events.start();
        for (let i = 0; i < chunks; i++) {
          await new Promise((resolve) => setTimeout(resolve, intervalMs));
          const stamp = `${clock().toFixed(3)}|`;
          const size = 16 + Math.floor(Math.random() * 49); // 16-64 bytes
          await events.artifact({ artifactId: 'out', text: stamp.padEnd(size, 'x'), append: i > 0, lastChunk: i === chunks - 1 });
        }
        await events.complete('done');
      },
    },
    ...options,
  } as Parameters<typeof kit.createA2ARouter>[0]);
  const app = express();
  app.get('/cpu', (_req, res) => {
    const usage = process.cpuUsage();
    res.json({ cpu: usage.user + usage.system });
  });
  app.use('/agent', router);
  const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`));
  process.stdin.resume();
  process.stdin.once('end', () => {
    server.closeAllConnections();
    server.close();
    void router
      .close()
      .then(close)
      .finally(() => process.exit(0));
  });
}

// ---------------------------------------------------------------------------------------------
// The clients (this process)

interface StreamOutcome {
  readonly events: number;
  readonly latenciesMs: number[];
  readonly completed: boolean;
}

let nextId = 0;

async function oneStream(url: string, chunks: number, intervalMs: number): Promise<StreamOutcome> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'a2a-version': '1.0' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendStreamingMessage',
      params: { message: { messageId: `m-${process.pid}-${nextId++}`, role: 'ROLE_USER', parts: [{ text: `${chunks},${intervalMs}` }] } },
    }),
  });
  const decoder = new TextDecoder();
  const latenciesMs: number[] = [];
  let buffered = '';
  let events = 0;
  let completed = false;
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = frame.split('\n').find((line) => line.startsWith('data:'));
      if (!data) continue;
      events++;
      const result = (JSON.parse(data.slice(5)) as { result?: Record<string, any> }).result ?? {};
      const text: string | undefined = result.artifactUpdate?.artifact?.parts?.[0]?.text;
      if (text) latenciesMs.push(clock() - Number(text.slice(0, text.indexOf('|'))));
      if (result.statusUpdate?.status?.state === 'TASK_STATE_COMPLETED') completed = true;
    }
  }
  return { events, latenciesMs, completed };
}

interface StoreResult {
  readonly store: StoreId;
  readonly events: number;
  readonly lost: number;
  readonly wallMs: number;
  readonly kitUsPerEvent: number;
  readonly dbUsPerEvent: number;
  /** Redis commands, or PostgreSQL transactions (each statement of the kit is one), per event. */
  readonly tripsPerEvent: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly error?: string;
}

/** The database's count of what it was asked (Redis: commands processed; PostgreSQL: transactions committed). */
function roundTrips(store: StoreId, env: NodeJS.ProcessEnv): { count: () => Promise<number>; close: () => Promise<void> } {
  if (store === 'redis') {
    const client = createClient({ url: env.TOKEN_STREAMS_REDIS_URL });
    const connected = client.connect();
    return {
      count: async () => {
        await connected;
        return Number(/total_commands_processed:(\d+)/.exec(await client.info('stats'))?.[1]);
      },
      close: async () => void (await client.quit()),
    };
  }
  if (store === 'postgres') {
    const pool = new Pool({ connectionString: env.TOKEN_STREAMS_PG_URL, max: 1 });
    return {
      count: async () =>
        Number((await pool.query('SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()')).rows[0].xact_commit),
      close: () => pool.end(),
    };
  }
  return { count: async () => 0, close: async () => undefined };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;

interface Run {
  readonly streams: number;
  readonly chunks: number;
  readonly intervalMs: number;
  /** Where the server writes a V8 CPU profile (`--profile <dir>`), if anywhere. */
  readonly profileDir?: string;
}

async function measure(store: StoreId, env: NodeJS.ProcessEnv, dbPid: number | undefined, { streams, chunks, intervalMs, profileDir }: Run) {
  const profile = profileDir ? ['--cpu-prof', '--cpu-prof-dir', path.join(profileDir, store)] : [];
  const child: ChildProcess = spawn(process.execPath, [...profile, '--import', 'tsx', __filename, '--serve', store], {
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (data: Buffer) => {
        out += data.toString();
        const ready = /READY (\d+)/.exec(out);
        if (ready) resolve(Number(ready[1]));
      });
      child.once('exit', (code) => reject(new Error(`the ${store} server exited (${code})`)));
    });
    const base = `http://127.0.0.1:${port}`;
    const cpu = async () => ((await (await fetch(`${base}/cpu`)).json()) as { cpu: number }).cpu;
    const dbCpu = () => (dbPid === undefined ? 0 : processTreeCpuMicros(dbPid));
    const trips = roundTrips(store, env);
    const round = (n: number, c: number) => Promise.all(Array.from({ length: n }, () => oneStream(`${base}/agent`, c, intervalMs)));
    await round(Math.min(streams, 20), 10); // warm-up: JIT, connections, statements
    const [kit0, db0, trips0, t0] = [await cpu(), dbCpu(), await trips.count(), performance.now()];
    const outcomes = await round(streams, chunks);
    const [kit1, db1, wallMs, trips1] = [await cpu(), dbCpu(), performance.now() - t0, await trips.count()];
    await trips.close();
    const events = outcomes.reduce((sum, o) => sum + o.events, 0);
    const latencies = outcomes.flatMap((o) => o.latenciesMs).sort((a, b) => a - b);
    return {
      store,
      events,
      lost: outcomes.filter((o) => !o.completed || o.latenciesMs.length !== chunks).length,
      wallMs: Math.round(wallMs),
      kitUsPerEvent: (kit1 - kit0) / events,
      dbUsPerEvent: (db1 - db0) / events,
      tripsPerEvent: (trips1 - trips0) / events,
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
    };
  } finally {
    child.stdin!.end();
    await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(undefined)));
  }
}

const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '-');

function table(results: readonly StoreResult[]): string {
  const memory = results.find((r) => r.store === 'memory' && !r.error);
  const total = (r: StoreResult) => r.kitUsPerEvent + r.dbUsPerEvent;
  const lines = [
    '| store | kit µs/event | database µs/event | total µs/event | total / memory | database round trips/event | events/s | publish→read p50 | p99 | streams lost |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of results) {
    if (r.error) {
      lines.push(`| ${r.store} | failed: ${r.error} | | | | | | | | |`);
      continue;
    }
    const ratio = memory ? `${fmt(total(r) / total(memory), 2)}×` : '-';
    lines.push(
      `| ${r.store} | ${fmt(r.kitUsPerEvent)} | ${fmt(r.dbUsPerEvent)} | ${fmt(total(r))} | ${ratio} | ${r.store === 'redis' || r.store === 'postgres' ? fmt(r.tripsPerEvent, 2) : '-'} | ` +
        `${fmt(r.events / (r.wallMs / 1000))} | ` +
        `${fmt(r.p50Ms, 1)} ms | ${fmt(r.p99Ms, 1)} ms | ${r.lost} |`,
    );
  }
  return lines.join('\n');
}

async function main(argv: string[]): Promise<void> {
  const arg = (name: string, fallback: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback);
  if (argv.includes('--serve')) return serve(arg('--serve', 'memory') as StoreId);
  const stores = arg('--stores', STORES.join(',')).split(',') as StoreId[];
  const [streams, chunks, intervalMs] = [Number(arg('--streams', '200')), Number(arg('--chunks', '50')), Number(arg('--interval-ms', '20'))];
  const run: Run = { streams, chunks, intervalMs, ...(argv.includes('--profile') ? { profileDir: path.resolve(arg('--profile', '.')) } : {}) };
  const redis = stores.includes('redis') ? await startRedis() : undefined;
  const postgres = stores.includes('postgres') ? await startLocalPostgres() : undefined;
  const pg = postgres && 'url' in postgres ? postgres : undefined;
  const env = { ...process.env, ...(redis ? { TOKEN_STREAMS_REDIS_URL: redis.url } : {}), ...(pg ? { TOKEN_STREAMS_PG_URL: pg.url } : {}) };
  const results: StoreResult[] = [];
  try {
    for (const store of stores) {
      if ((store === 'redis' && !redis) || (store === 'postgres' && !pg)) {
        console.log(`${store}: skipped (not installed)`);
        continue;
      }
      const dbPid = store === 'redis' ? redis?.pid : store === 'postgres' ? pg?.pid : undefined;
      const result = await measure(store, env, dbPid, run).catch((error: unknown): StoreResult => ({
        store,
        events: 0,
        lost: streams,
        wallMs: Number.NaN,
        kitUsPerEvent: Number.NaN,
        dbUsPerEvent: Number.NaN,
        tripsPerEvent: Number.NaN,
        p50Ms: Number.NaN,
        p99Ms: Number.NaN,
        error: error instanceof Error ? error.message : String(error),
      }));
      results.push(result);
      console.log(`${store}: ${JSON.stringify(result)}`);
    }
  } finally {
    redis?.stop();
    if (postgres && 'stop' in postgres) postgres.stop();
  }
  const report =
    `# Token streams\n\n${streams} concurrent SendStreamingMessage tasks, each appending ${chunks} artifact chunks of 16-64 bytes, ` +
    `one every ${intervalMs} ms (${os.cpus().length} cores, Node ${process.version}). CPU per event read by the clients: the server ` +
    `process's, and the database server's (redis-server, the PostgreSQL cluster's processes; SQLite runs in the server's process). ` +
    `Latency: from the agent's publish to the client's parse of the frame.\n\n${table(results)}\n`;
  const out = arg('--out', path.join(ROOT, 'bench', 'results'));
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'token-streams.md'), report);
  console.log(`\n${report}`);
}

void main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
