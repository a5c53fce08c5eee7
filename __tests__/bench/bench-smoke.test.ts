/**
 * Keeps the benchmark from rotting: runs `bench/run.ts --smoke` end to end (real server processes,
 * real autocannon load on 127.0.0.1, every server x workload once for 0.25 s, a tiny memory phase;
 * ~15 s) into a temporary directory, and checks that it produced a complete report. Never asserts on
 * timings or targets: those depend on the machine (and smoke numbers mean nothing).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const WORKLOADS = ['send-message', 'send-message-rest', 'send-task', 'send-task-rest', 'stream', 'two-turn', 'get-task'];
// ours-redis and ours-2replicas need a redis-server on the machine, ours-postgres and ours-pg-2replicas PostgreSQL:
// without one they are skipped, with a note.
const SERVERS = [
  'ceiling',
  'sdk',
  'ours',
  'stack',
  'ours-latency',
  'ours-sqlite',
  'ours-redis',
  'ours-2replicas',
  'ours-postgres',
  'ours-pg-2replicas',
];
const REQUIRED_SERVERS = ['ceiling', 'sdk', 'ours', 'ours-latency', 'ours-sqlite'];
/** The HTTP+JSON workloads run on these servers only (the SDK's REST handler, ours, ours + stack). */
const REST_WORKLOADS = ['send-message-rest', 'send-task-rest'];
const REST_SERVERS = ['sdk', 'ours', 'stack'];
const RATIO_KEYS = [
  'latencyVsOurs',
  'oursVsCeiling',
  'oursVsSdk',
  'postgresVsOurs',
  'redisVsOurs',
  'restVsJsonRpc',
  'sqliteVsOurs',
  'stackVsOurs',
  'twoReplicasVsPostgres',
  'twoReplicasVsRedis',
];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runSmokeBench(outDir: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'run.ts'), '--smoke', '--out', outDir], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('bench smoke mode', () => {
  let outDir: string;
  let run: Run;

  beforeAll(async () => {
    outDir = mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-'));
    run = await runSmokeBench(outDir);
  }, 120_000);

  afterAll(() => {
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('exits 0 and prints the markdown report', () => {
    if (run.code !== 0) throw new Error(`bench exited ${run.code}\n${run.stderr.slice(-4000)}`);
    expect(run.stdout).toContain('# a2a-express-kit benchmark');
    expect(run.stdout).toContain('## Targets');
    expect(run.stdout).toContain('## Memory');
    expect(run.stdout).toContain('ours-latency/ours');
    expect(run.stdout).toContain('sqlite/ours');
    expect(run.stdout).toContain('redis/ours');
    expect(run.stdout).toContain('2replicas/redis');
    expect(run.stdout).toContain('postgres/ours');
    expect(run.stdout).toContain('pg-2replicas/postgres');
    expect(run.stdout).toContain('### HTTP+JSON (REST) binding');
  });

  it('writes latest.md and latest.json to --out, not to bench/results', () => {
    expect(existsSync(path.join(outDir, 'latest.md'))).toBe(true);
    expect(existsSync(path.join(outDir, 'latest.json'))).toBe(true);
    expect(readFileSync(path.join(outDir, 'latest.md'), 'utf8')).toContain('## Throughput');
  });

  it('has an entry for every workload and server', () => {
    const report = JSON.parse(readFileSync(path.join(outDir, 'latest.json'), 'utf8'));
    expect(report.meta.mode).toBe('smoke');
    for (const workload of WORKLOADS) {
      for (const server of SERVERS) {
        const cell = report.throughput?.[workload]?.[server];
        if (REST_WORKLOADS.includes(workload) && !REST_SERVERS.includes(server)) {
          // Not run there: no cell at all.
          expect({ workload, server, present: cell !== undefined }).toEqual({ workload, server, present: false });
          continue;
        }
        if (REST_WORKLOADS.includes(workload) && server !== 'stack') {
          // The REST wiring (paths, mount, media types): every answer was the expected one.
          expect({ workload, server, bad: cell.bad, non2xx: cell.non2xx }).toEqual({ workload, server, bad: 0, non2xx: 0 });
        }
        expect({ workload, server, present: cell !== undefined }).toEqual({ workload, server, present: true });
        expect(cell.failed).toBeUndefined();
        if (REQUIRED_SERVERS.includes(server) || !cell.skipped) {
          // A measurement, whatever its value.
          expect(typeof cell.reqPerSec).toBe('number');
          expect(typeof cell.latencyMs.p50).toBe('number');
        } else {
          // The optional variants (middleware stack, Redis without a redis-server) may be skipped, with a reason.
          expect(typeof cell.note).toBe('string');
        }
      }
      expect(report.ratios[workload]).toBeDefined();
      expect(Object.keys(report.ratios[workload]).sort()).toEqual(RATIO_KEYS);
      expect(Object.keys(report.cpuRatios[workload]).sort()).toEqual(RATIO_KEYS);
      // REST / JSON-RPC (ours) is a ratio of two measured cells; the other workloads have none.
      if (REST_WORKLOADS.includes(workload)) {
        expect(typeof report.ratios[workload].restVsJsonRpc).toBe('number');
        expect(typeof report.ratios[workload].oursVsSdk).toBe('number');
      } else {
        expect(report.ratios[workload].restVsJsonRpc).toBeNull();
      }
    }
    for (const server of REQUIRED_SERVERS) expect(report.servers[server].status).toBe('ok');
    expect(report.targets.length).toBeGreaterThanOrEqual(13);
    // The stack overhead from back-to-back pairs: the round's pair and smoke's one extra pair.
    if (report.servers.stack.status === 'ok') {
      for (const workload of WORKLOADS) expect({ workload, pairs: report.stackPaired[workload]?.pairs }).toEqual({ workload, pairs: 2 });
      expect(report.targets.find((t: { id: string }) => t.id === 'stack-overhead').note).toMatch(/median of 2 back-to-back pairs/);
    }
    // ours-redis: measured, or skipped with the reason (no redis-server on this machine).
    const redis = report.servers['ours-redis'];
    expect(['ok', 'skipped']).toContain(redis.status);
    if (redis.status === 'skipped') expect(typeof redis.note).toBe('string');
  });

  it.each([
    ['Redis', 'ours-2replicas', 'ours-redis', 'twoReplicasVsRedis'],
    ['PostgreSQL', 'ours-pg-2replicas', 'ours-postgres', 'twoReplicasVsPostgres'],
  ])('runs two replicas on one %s: JSON-RPC workloads only, follow-ups across replicas, or skipped with a note', (_db, id, single, ratioKey) => {
    const report = JSON.parse(readFileSync(path.join(outDir, 'latest.json'), 'utf8'));
    const replicas = report.servers[id];
    expect(['ok', 'skipped']).toContain(replicas.status);
    // Skipped exactly when the one-process row is (both need the runner's database server).
    expect(replicas.status).toBe(report.servers[single].status);
    if (replicas.status === 'skipped') {
      expect(typeof replicas.note).toBe('string');
      return;
    }
    // The cross-replica wiring (a shared key prefix, tasks read and continued on the other replica):
    // every answer was the expected one. Not a speed.
    for (const workload of ['two-turn', 'get-task']) {
      const cell = report.throughput[workload][id];
      expect({ workload, bad: cell.bad, errors: cell.errors, non2xx: cell.non2xx }).toEqual({ workload, bad: 0, errors: 0, non2xx: 0 });
    }
    const followUps = report.throughput['two-turn'][id].followUps;
    expect(typeof followUps?.cross).toBe('number');
    expect(typeof followUps?.same).toBe('number');
    expect(typeof report.ratios['get-task'][ratioKey]).toBe('number');
  });

  it('judges the durable-store targets: completed Task on SQLite ≥ 0.7× and on Redis and PostgreSQL ≥ 0.5× the in-memory store', () => {
    const report = JSON.parse(readFileSync(path.join(outDir, 'latest.json'), 'utf8'));
    const byId = new Map<string, { measured: unknown; threshold: string; met: unknown; note?: string }>(
      report.targets.map((t: { id: string }) => [t.id, t]),
    );
    const sqlite = byId.get('sqlite-task-vs-ours');
    expect(sqlite?.threshold).toBe('≥ 0.70×');
    expect(typeof sqlite?.measured).toBe('number');
    expect(typeof report.ratios['send-task'].sqliteVsOurs).toBe('number');
    const redis = byId.get('redis-task-vs-ours');
    expect(redis?.threshold).toBe('≥ 0.50×');
    if (report.servers['ours-redis'].status === 'ok') {
      expect(typeof redis?.measured).toBe('number');
      expect(typeof report.ratios['send-task'].redisVsOurs).toBe('number');
    } else {
      expect(redis?.measured).toBeNull();
      expect(redis?.note).toContain('ours-redis skipped');
    }
    const postgres = byId.get('postgres-task-vs-ours');
    expect(postgres?.threshold).toBe('≥ 0.50×');
    if (report.servers['ours-postgres'].status === 'ok') {
      expect(typeof postgres?.measured).toBe('number');
      expect(typeof report.ratios['send-task'].postgresVsOurs).toBe('number');
    } else {
      expect(postgres?.measured).toBeNull();
      expect(postgres?.note).toContain('ours-postgres skipped');
    }
  });

  it("judges the HTTP+JSON targets: ahead of the SDK's REST handler, ≥ 0.95× our JSON-RPC", () => {
    const report = JSON.parse(readFileSync(path.join(outDir, 'latest.json'), 'utf8'));
    const byId = new Map<string, { measured: unknown; threshold: string; met: unknown }>(report.targets.map((t: { id: string }) => [t.id, t]));
    for (const [id, threshold] of [
      ['rest-message-vs-sdk', '> 1.00×'],
      ['rest-task-vs-sdk', '> 1.00×'],
      ['rest-message-vs-jsonrpc', '≥ 0.95×'],
      ['rest-task-vs-jsonrpc', '≥ 0.95×'],
    ]) {
      const target = byId.get(id);
      expect({ id, threshold: target?.threshold }).toEqual({ id, threshold });
      // Measured (a number) and judged (met or missed), whatever the value: smoke numbers mean nothing.
      expect(typeof target?.measured).toBe('number');
      expect(typeof target?.met).toBe('boolean');
    }
  });

  it('ran the memory phase for the official SDK and for ours', () => {
    const report = JSON.parse(readFileSync(path.join(outDir, 'latest.json'), 'utf8'));
    for (const server of ['sdk', 'ours']) {
      const memory = report.memory[server];
      expect(memory.status).toBe('ok');
      expect(typeof memory.engineBytesPerParkedTask).toBe('number');
      expect(typeof memory.engineBytesPerCancelledTask).toBe('number');
      expect(memory.withParked.rss).toBeGreaterThan(0);
    }
  });

  it('ran the idle-streams phase for the ceiling, the official SDK and ours', () => {
    const report = JSON.parse(readFileSync(path.join(outDir, 'latest.json'), 'utf8'));
    for (const server of ['ceiling', 'sdk', 'ours']) {
      expect(report.idle[server].status).toBe('ok');
      expect(typeof report.idle[server].heapBytesPerStream).toBe('number');
    }
  });
});

describe('bench token streams', () => {
  it('runs every store installed, and no stream loses an event (CI: all four)', async () => {
    const outDir = mkdtempSync(path.join(os.tmpdir(), 'a2a-token-streams-'));
    try {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          path.join(ROOT, 'bench', 'run.ts'),
          '--token-streams',
          '--streams',
          '4',
          '--chunks',
          '3',
          '--interval-ms',
          '1',
          '--out',
          outDir,
        ],
        { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      child.stdout.resume();
      expect({ code: await new Promise((resolve) => child.once('exit', resolve)), stderr }).toEqual({ code: 0, stderr: '' });
      const report = readFileSync(path.join(outDir, 'token-streams.md'), 'utf8');
      const rows = report.split('\n').filter((line) => /^\| (memory|sqlite|redis|postgres) \|/.test(line));
      expect(rows.map((row) => row.split('|')[1].trim())).toEqual(
        process.env.CI ? ['memory', 'sqlite', 'redis', 'postgres'] : expect.arrayContaining(['memory', 'sqlite']),
      );
      for (const row of rows) expect(row.split('|').at(-2)!.trim()).toBe('0'); // streams lost
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
  }, 120_000);
});
