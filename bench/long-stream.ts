/**
 * Long streams: one SendStreamingMessage whose agent streams one artifact as N appended chunks, on
 * the in-memory, SQLite, Redis and PostgreSQL stores, reporting the CPU per event (server and client in one
 * process, as they share the machine anyway) so that a cost growing with the task shows at once.
 *
 *   npx tsx bench/long-stream.ts                      # every store, 1,000 / 4,000 / 16,000 chunks of 16 B and 1 KB
 *   npx tsx bench/long-stream.ts --stores sqlite --sizes 1024 --counts 8000
 *   npm run bench -- --long-stream                    # the same, through the main runner
 *
 * Each cell runs in a fresh child process (`--cell store,size,count`) after two warm-up streams (200 and 1,000 chunks)
 * stream, so one cell's heap or file does not weigh on the next. The kit is loaded from lib/ (the
 * sources through tsx), so it measures the working tree. Redis: a redis-server of its own on a free
 * loopback port (skipped when redis-server is not on the PATH); PostgreSQL: a throwaway cluster of its
 * own (bench/local-postgres.ts; skipped when PostgreSQL is not installed). Writes bench/results/long-stream.md.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import express from 'express';
import { startLocalPostgres } from './local-postgres.js';
import { kitStore, startRedis, STORES, type StoreId } from './local-stores.js';

const ROOT = path.resolve(__dirname, '..');

interface CellResult {
  readonly store: StoreId;
  readonly size: number;
  readonly count: number;
  /** Events the client read (the chunks, plus the task, the first status and the final status). */
  readonly events: number;
  readonly cpuPerEventUs: number;
  readonly wallMs: number;
  /** CPU of a GetTask of the finished task: the first read, then a second one. */
  readonly getTaskCpuMs: readonly [number, number];
  /** The artifact's text length as GetTask returned it (the check that nothing was lost). */
  readonly artifactChars: number;
  readonly error?: string;
}

// ---------------------------------------------------------------------------------------------
// One cell (in its own process)
// ---------------------------------------------------------------------------------------------

async function runCell(store: StoreId, size: number, count: number): Promise<CellResult> {
  const kit = await import('../lib/index.js');
  const chunk = 'x'.repeat(size);
  const { options, close } = await kitStore(store, 'ls', { redis: process.env.LONG_STREAM_REDIS_URL, postgres: process.env.LONG_STREAM_PG_URL });
  const router = kit.createA2ARouter({
    agentCard: kit.defineAgentCard({ name: 'long stream', description: 'streams one long artifact' }),
    executor: {
      async execute(ctx, events) {
        const n = Number(ctx.userText);
        await events.start();
        for (let i = 0; i < n; i++) {
          await events.artifact({ artifactId: 'out', text: chunk, append: i > 0, lastChunk: i === n - 1 });
        }
        await events.complete('done');
      },
    },
    // Server and client share one event loop: the client may fall behind while the agent writes
    // (with the in-memory store the agent never waits for I/O, so all 16 MB of a 16,000 x 1 KB
    // stream are written before the client reads any), which must not cut the stream measured.
    streamBufferBytes: 64 * 1024 * 1024,
    streamStallMs: 600_000,
    ...options,
  } as Parameters<typeof kit.createA2ARouter>[0]);
  const app = express();
  app.use('/agent', router);
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/agent`;
  try {
    // Warm-up: modules loaded on first use, JIT, statements, connections.
    for (const n of [200, 1000]) await stream(url, n);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const { events, taskId } = await stream(url, count);
    const wallMs = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const getTaskCpuMs: [number, number] = [0, 0];
    let artifactChars = 0;
    for (let i = 0; i < 2; i++) {
      const g0 = process.cpuUsage();
      const task = await rpc(url, 'GetTask', { id: taskId });
      const g = process.cpuUsage(g0);
      getTaskCpuMs[i] = Math.round((g.user + g.system) / 100) / 10;
      const parts = (task as { artifacts?: Array<{ parts: Array<{ text?: string }> }> }).artifacts?.[0]?.parts ?? [];
      artifactChars = parts.reduce((sum, p) => sum + (p.text?.length ?? 0), 0);
    }
    return {
      store,
      size,
      count,
      events,
      cpuPerEventUs: Math.round((cpu.user + cpu.system) / events),
      wallMs: Math.round(wallMs),
      getTaskCpuMs,
      artifactChars,
    };
  } finally {
    server.closeAllConnections();
    server.close();
    await router.close();
    await close();
  }
}

let nextId = 0;
const message = (text: string) => ({ message: { messageId: `m-${process.pid}-${nextId++}`, role: 'ROLE_USER', parts: [{ text }] } });

async function rpc(url: string, method: string, params: unknown): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await response.json()) as { result?: unknown; error?: unknown };
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

/** One SendStreamingMessage read to its end: the events read and the task's id. */
async function stream(url: string, count: number): Promise<{ events: number; taskId: string }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'a2a-version': '1.0' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: message(String(count)) }),
  });
  const decoder = new TextDecoder();
  let buffered = '';
  let events = 0;
  let taskId = '';
  let final = false;
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(bytes, { stream: true });
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const frame = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = frame.split('\n').find((line) => line.startsWith('data:'));
      if (!data) continue;
      events++;
      const result =
        (JSON.parse(data.slice(5)) as { result?: Record<string, { id?: string; taskId?: string; status?: { state: string } }> }).result ?? {};
      const task = result.task;
      if (task?.id) taskId = task.id;
      const state = result.statusUpdate?.status?.state;
      if (state === 'TASK_STATE_COMPLETED' || state === 'TASK_STATE_FAILED') final = true;
    }
  }
  if (!final) throw new Error(`the stream ended after ${events} events, without its final status`);
  return { events, taskId };
}

// ---------------------------------------------------------------------------------------------
// The runner
// ---------------------------------------------------------------------------------------------

function runChild(store: StoreId, size: number, count: number, env: NodeJS.ProcessEnv): Promise<CellResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', __filename, '--cell', `${store},${size},${count}`], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout!.on('data', (data: Buffer) => (out += data.toString()));
    child.once('exit', () => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      const failed = { store, size, count, events: 0, cpuPerEventUs: NaN, wallMs: NaN, getTaskCpuMs: [NaN, NaN] as const, artifactChars: 0 };
      resolve(line ? (JSON.parse(line.slice(7)) as CellResult) : { ...failed, error: out.slice(-500) || 'no result' });
    });
  });
}

const listArg = (argv: string[], name: string, fallback: string[]): string[] => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1].split(',') : fallback;
};

function table(results: readonly CellResult[], counts: readonly number[]): string {
  const lines = [
    `| store | chunk | ${counts.map((c) => `N=${c.toLocaleString('en-US')}`).join(' | ')} | ratio N=${counts[counts.length - 1]} / N=${counts[0]} |`,
    `|---|---|${counts.map(() => '---').join('|')}|---|`,
  ];
  const rows = new Map<string, CellResult[]>();
  for (const r of results) {
    const key = `${r.store}|${r.size}`;
    rows.set(key, [...(rows.get(key) ?? []), r]);
  }
  for (const [key, cells] of rows) {
    const [store, size] = key.split('|');
    const byCount = (c: number) => cells.find((r) => r.count === c);
    const cellText = (c: number) => {
      const r = byCount(c);
      if (!r) return '-';
      if (r.error) return `failed`;
      return `${r.cpuPerEventUs} us (${(r.wallMs / 1000).toFixed(1)} s; GetTask ${r.getTaskCpuMs[0]} / ${r.getTaskCpuMs[1]} ms)`;
    };
    const first = byCount(counts[0]);
    const last = byCount(counts[counts.length - 1]);
    const ratio = first && last && !first.error && !last.error ? (last.cpuPerEventUs / first.cpuPerEventUs).toFixed(2) : '-';
    lines.push(
      `| ${store} | ${Number(size) >= 1024 ? `${Number(size) / 1024} KB` : `${size} B`} | ${counts.map(cellText).join(' | ')} | ${ratio}x |`,
    );
  }
  return lines.join('\n');
}

async function main(argv: string[]): Promise<void> {
  const cell = argv.indexOf('--cell');
  if (cell >= 0) {
    const [store, size, count] = argv[cell + 1].split(',');
    const result = await runCell(store as StoreId, Number(size), Number(count));
    process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
    process.exit(0);
  }
  const stores = listArg(argv, '--stores', [...STORES]) as StoreId[];
  const sizes = listArg(argv, '--sizes', ['16', '1024']).map(Number);
  const counts = listArg(argv, '--counts', ['1000', '4000', '16000']).map(Number);
  const redis = stores.includes('redis') ? await startRedis() : undefined;
  const postgres = stores.includes('postgres') ? await startLocalPostgres() : undefined;
  const pgUrl = postgres && 'url' in postgres ? postgres.url : undefined;
  const env = { ...process.env, ...(redis ? { LONG_STREAM_REDIS_URL: redis.url } : {}), ...(pgUrl ? { LONG_STREAM_PG_URL: pgUrl } : {}) };
  const results: CellResult[] = [];
  try {
    for (const store of stores) {
      if (store === 'redis' && !redis) {
        console.log('redis: skipped (no redis-server on the PATH)');
        continue;
      }
      if (store === 'postgres' && !pgUrl) {
        console.log(`postgres: skipped (${postgres && 'skip' in postgres ? postgres.skip : 'not started'})`);
        continue;
      }
      for (const size of sizes) {
        for (const count of counts) {
          const result = await runChild(store, size, count, env);
          results.push(result);
          console.log(
            result.error
              ? `${store} ${size} B x ${count}: FAILED ${result.error}`
              : `${store} ${size} B x ${count}: ${result.cpuPerEventUs} us CPU/event, ${result.wallMs} ms, GetTask ${result.getTaskCpuMs.join(' / ')} ms CPU, artifact ${result.artifactChars} chars`,
          );
        }
      }
    }
  } finally {
    redis?.stop();
    if (postgres && 'stop' in postgres) postgres.stop();
  }
  const report = `# Long streams\n\nCPU per event (server and client in one process), wall time of the stream, and the CPU of a GetTask of the finished task (first read / second read).\n\n${table(results, counts)}\n`;
  const out = path.join(ROOT, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'long-stream.md'), report);
  console.log(`\n${report}`);
}

void main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
