/**
 * `npm run bench` (full, ~14 min on 2 cores), `npm run bench -- --quick` (a few seconds per workload)
 * and `npm run bench -- --smoke` (< 20 s in all: exercises every server, workload and the report).
 *
 * Starts every server in its own process (bench/servers/*.ts, with --expose-gc), runs each workload
 * against each of its servers (the HTTP+JSON workloads: sdk, ours, stack) from a separate
 * load-generator process (bench/load.ts: autocannon, 50 connections, warm-up then a fixed duration),
 * in interleaved rounds (every server once per round, order alternating; a REST workload shares its
 * rounds with its JSON-RPC twin) and reports the median over rounds of each cell; then measures
 * engine memory on fresh SDK and "ours" processes. Prints a markdown report and writes <out>/latest.md and
 * <out>/latest.json.
 *
 * Options:
 *   --quick              short runs, one round, memory N = 500
 *   --smoke              a check that the benchmark works, not a measurement: every server x workload
 *                        once (no warm-up, 0.25 s measured, load generated in the runner's process),
 *                        memory N = 100 (SDK and ours side by side); the complete report is still written
 *   --rounds <n>         measured rounds per (workload, server) (default 3, quick and smoke 1)
 *   --stack-pairs <n>    extra back-to-back ours/stack runs per workload for the paired stack/ours ratio
 *                        (default 4, quick 0, smoke 1; see bench/stack-pairs.ts)
 *   --out <dir>          where latest.md / latest.json go (default bench/results)
 *   --servers a,b        subset of ceiling,sdk,ours,stack,ours-latency,ours-sqlite,ours-redis,ours-2replicas,ours-postgres,
 *                        ours-pg-2replicas (debugging;
 *                        ratios need all of them). ours-sqlite: the router on openSqliteTaskStore (a fresh temporary
 *                        file per server process); ours-redis: the router on createRedisBackend(), against a
 *                        redis-server the runner starts itself (127.0.0.1, a free port, no persistence, a temporary
 *                        directory; stopped at the end); skipped with a note when redis-server is not installed;
 *                        ours-2replicas: two ours-redis processes sharing one key prefix (one store), the load
 *                        generator's connections spread over both (JSON-RPC workloads only); skipped like ours-redis;
 *                        ours-postgres and ours-pg-2replicas: the same on createPostgresBackend(), against a throwaway
 *                        PostgreSQL cluster the runner starts itself (bench/local-postgres.ts: initdb in a temporary
 *                        directory, 127.0.0.1, a free port, durability off; stopped at the end), one schema per server
 *                        (the two replicas share theirs); skipped with a note when PostgreSQL is not installed
 *   --workloads a,b      subset of send-message,send-message-rest,send-task,send-task-rest,stream,two-turn,get-task
 *                        (a REST workload's ratio to JSON-RPC needs its JSON-RPC twin in the run)
 *   --no-memory          skip the memory phase
 *   --memory-only        skip the throughput runs
 *   --memory-n <N>       tasks per memory step (default 10000, quick 500, smoke 100)
 *   --memory-warmup <N>  warm-up requests of each kind before the memory baseline (default 2500, quick 200, smoke 20)
 *   --no-idle            skip the idle-streams phase
 *   --idle-only          only the idle-streams phase (no throughput, no engine memory)
 *   --long-stream        only the long-stream workload (bench/long-stream.ts; its own options follow)
 *   --token-streams      only the LLM-like token streams (bench/token-streams.ts; its own options follow)
 *   --slow-readers       only the heap of 11 SSE clients that never read (bench/slow-readers-heap.ts, both modes; exits 1 when issue 21's goal is missed)
 *   --idle-n <N>         idle SSE streams held open per server (default 10000, quick 1000, smoke 200)
 *   --idle-warmup <N>    streams opened and closed before the idle baseline (default 1000, quick 200, smoke 0)
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { getJson, pool, rpcClient } from './http.js';
import { median } from './median.js';
import { measureExtraPairs, pairedOverhead, pairedSection, type PairedOverhead, type StackPair } from './stack-pairs.js';
import { startLocalPostgres, type LocalPostgres } from './local-postgres.js';
import { IdleStreams, type CloseResult, type OpenResult, type ParkResult, type ReadResult } from './idle-streams.js';
import type { LoadOptions, LoadResult } from './load.js';
import type { MemorySnapshot } from './servers/common.js';
import {
  OPTIONAL_SERVERS,
  SERVERS,
  WORKLOADS,
  extractTask,
  sendMessageBody,
  taskIdBody,
  type ServerId,
  type ServerInfo,
  runsOn,
  workloadInfo,
  type WorkloadId,
  type WorkloadInfo,
} from './workloads.js';

const ROOT = path.resolve(__dirname, '..');

// ---------------------------------------------------------------------------------------------
// Configuration

type Mode = 'full' | 'quick' | 'smoke';

interface Config {
  mode: Mode;
  connections: number;
  /** Rounds per (workload, server) cell; the cell reports the median over them. */
  rounds: number;
  /** Warm-up of a cell's first round (cold JIT for that workload). */
  warmupSec: number;
  /**
   * First warm-up of the streaming workload: its path takes longer to reach steady state (ours went
   * from ~1,360 to ~650 µs/request over seven 2.5 s runs on a fresh server).
   */
  streamWarmupSec: number;
  /** Warm-up of the later rounds: the code is hot, only connections and caches need refilling. */
  roundWarmupSec: number;
  /** Measured duration of one round. */
  durationSec: number;
  /** Extra ours/stack pairs per workload, on top of the one per round (bench/stack-pairs.ts). */
  stackPairs: number;
  getTaskPool: number;
  memoryN: number;
  memoryWarmup: number;
  outDir: string;
  servers: ServerId[];
  workloads: WorkloadId[];
  memory: boolean;
  throughput: boolean;
  /**
   * Smoke mode: autocannon runs in the runner's own process instead of a fresh load-generator
   * process per run (starting one costs ~0.5-1 s, more than a smoke run measures).
   */
  inProcessLoad: boolean;
  /** Smoke mode: the SDK's and our memory phases run at the same time (each starts a fresh server). */
  concurrentMemory: boolean;
  /**
   * Smoke mode: the memory phase's fresh servers start in the background while the throughput
   * phase runs (their start-up, seconds of tsx compilation on 2 cores, would otherwise add to the run).
   */
  earlyMemoryServers: boolean;
  /** Idle SSE streams held open per server in the idle-streams phase. */
  idleN: number;
  /** Streams opened and closed (on as many parked tasks) before the idle baseline. */
  idleWarmup: number;
  idle: boolean;
  /** Smoke mode: the idle-streams phase uses the servers of the throughput phase instead of fresh ones. */
  idleOnThroughputServers: boolean;
}

/** Per mode: full (the measurement), quick (a short look for humans), smoke (does it all still work?). */
const MODE_SETTINGS: Record<
  Mode,
  Pick<
    Config,
    | 'rounds'
    | 'warmupSec'
    | 'streamWarmupSec'
    | 'roundWarmupSec'
    | 'durationSec'
    | 'stackPairs'
    | 'getTaskPool'
    | 'memoryN'
    | 'memoryWarmup'
    | 'inProcessLoad'
    | 'concurrentMemory'
    | 'earlyMemoryServers'
    | 'idleN'
    | 'idleWarmup'
    | 'idleOnThroughputServers'
  >
> = {
  // Full: 5 JSON-RPC workloads x 7 servers + 2 REST workloads x 3 servers (41 cells) x 3 rounds,
  // each round ~0.6 s of load-process start plus warm-up (1.5 s first, 0.5 s later) and 2.5 s
  // measured, + ~70 s of memory phase: ~9 min on 2 cores; + 7 workloads x 4 extra ours/stack pairs
  // (~7 s a pair): ~3 min.
  full: {
    rounds: 3,
    warmupSec: 1.5,
    streamWarmupSec: 5,
    roundWarmupSec: 0.5,
    durationSec: 2.5,
    stackPairs: 4,
    getTaskPool: 1000,
    memoryN: 10_000,
    // Enough warm-up that the JIT has settled: otherwise optimised code and its metadata, created
    // while the N tasks are processed, shows up as a constant ~100-600 KB "growth".
    memoryWarmup: 2500,
    inProcessLoad: false,
    concurrentMemory: false,
    earlyMemoryServers: false,
    idleN: 10_000,
    idleWarmup: 1000,
    idleOnThroughputServers: false,
  },
  quick: {
    rounds: 1,
    warmupSec: 0.5,
    streamWarmupSec: 0.5,
    roundWarmupSec: 0.25,
    durationSec: 1.5,
    stackPairs: 0,
    getTaskPool: 200,
    memoryN: 500,
    memoryWarmup: 200,
    inProcessLoad: false,
    concurrentMemory: false,
    earlyMemoryServers: false,
    idleN: 1000,
    idleWarmup: 200,
    idleOnThroughputServers: false,
  },
  // No warm-up and one 0.25 s load sample per cell (the load generator's sample tick: a shorter run
  // would not be shorter): 41 cells of ~0.3 s + server starts + two tiny memory phases side by
  // side, ~15 s on 2 cores. Every code path of a full run except the load process and the rounds.
  smoke: {
    rounds: 1,
    warmupSec: 0,
    streamWarmupSec: 0,
    roundWarmupSec: 0,
    durationSec: 0.25,
    stackPairs: 1,
    getTaskPool: 50,
    memoryN: 100,
    memoryWarmup: 20,
    inProcessLoad: true,
    concurrentMemory: true,
    earlyMemoryServers: true,
    idleN: 200,
    idleWarmup: 0,
    idleOnThroughputServers: true,
  },
};

function parseArgs(argv: string[]): Config {
  if (argv.includes('--quick') && argv.includes('--smoke')) throw new Error('--quick and --smoke exclude each other');
  const mode: Mode = argv.includes('--smoke') ? 'smoke' : argv.includes('--quick') ? 'quick' : 'full';
  const settings = MODE_SETTINGS[mode];
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    if (i !== -1) return argv[i + 1];
    const inline = argv.find((a) => a.startsWith(`${name}=`));
    return inline?.slice(name.length + 1);
  };
  const list = <T extends string>(name: string, all: readonly T[]): T[] => {
    const raw = value(name);
    if (!raw) return [...all];
    const picked = raw.split(',').map((s) => s.trim()) as T[];
    for (const p of picked) if (!all.includes(p)) throw new Error(`${name}: unknown value "${p}" (one of ${all.join(', ')})`);
    return picked;
  };
  const out = value('--out');
  const idleOnly = argv.includes('--idle-only');
  const rounds = value('--rounds') ? Number(value('--rounds')) : settings.rounds;
  if (!Number.isInteger(rounds) || rounds < 1) throw new Error(`--rounds: expected a positive integer, got "${value('--rounds')}"`);
  const stackPairs = value('--stack-pairs') ? Number(value('--stack-pairs')) : settings.stackPairs;
  if (!Number.isInteger(stackPairs) || stackPairs < 0) {
    throw new Error(`--stack-pairs: expected a non-negative integer, got "${value('--stack-pairs')}"`);
  }
  return {
    ...settings,
    mode,
    connections: 50,
    rounds,
    stackPairs,
    memoryN: value('--memory-n') ? Number(value('--memory-n')) : settings.memoryN,
    memoryWarmup: value('--memory-warmup') ? Number(value('--memory-warmup')) : settings.memoryWarmup,
    outDir: out ? path.resolve(out) : path.join(ROOT, 'bench', 'results'),
    servers: list(
      '--servers',
      SERVERS.map((s) => s.id),
    ),
    workloads: list(
      '--workloads',
      WORKLOADS.map((w) => w.id),
    ),
    idleN: value('--idle-n') ? Number(value('--idle-n')) : settings.idleN,
    idleWarmup: value('--idle-warmup') ? Number(value('--idle-warmup')) : settings.idleWarmup,
    memory: !argv.includes('--no-memory') && !idleOnly,
    throughput: !argv.includes('--memory-only') && !idleOnly,
    idle: !argv.includes('--no-idle'),
  };
}

// ---------------------------------------------------------------------------------------------
// Child processes

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.pid) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    for (const child of children) if (child.exitCode === null && child.pid) child.kill('SIGKILL');
    process.exit(130);
  });
}

interface RunningServer {
  info: ServerInfo;
  status: 'ok' | 'skipped' | 'failed';
  note?: string;
  url?: string;
  /** Several replicas: every replica's URL (`url` is the first). */
  urls?: string[];
  child?: ChildProcess;
  /** Several replicas: one RunningServer per process (`child` is then unset). */
  parts?: RunningServer[];
  stderr: () => string;
  /** How the process ended, once it has (a server dying mid-run is reported with this). */
  exited: () => string | undefined;
}

function tail(text: string, max = 2000): string {
  return text.length > max ? `…${text.slice(-max)}` : text;
}

/**
 * The open-file limits (soft, hard) of this process, which its children inherit; Infinity when
 * unlimited, undefined when unknown. Node cannot raise its own; a child can be started through
 * `sh -c 'ulimit -n ...'` (see withFdLimit).
 */
function fdLimits(): { soft: number; hard: number } | undefined {
  const out = spawnSync('sh', ['-c', 'ulimit -Sn; ulimit -Hn'], { encoding: 'utf8' });
  const [soft, hard] = (out.stdout ?? '')
    .trim()
    .split(/\s+/)
    .map((v) => (v === 'unlimited' ? Number.POSITIVE_INFINITY : Number(v)));
  return Number.isFinite(soft) || soft === Number.POSITIVE_INFINITY ? { soft, hard: hard ?? soft } : undefined;
}

/** `command args` started with its soft open-file limit raised to `fdLimit` (when given). */
function withFdLimit(command: string, args: string[], fdLimit: number | undefined): [string, string[]] {
  if (fdLimit === undefined) return [command, args];
  return ['sh', ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, command, ...args]];
}

async function startServer(info: ServerInfo, nodeFlags: string[] = [], fdLimit?: number, env: Record<string, string> = {}): Promise<RunningServer> {
  const child = spawn(
    ...withFdLimit(
      process.execPath,
      ['--expose-gc', ...nodeFlags, '--import', 'tsx', path.join(ROOT, 'bench', 'servers', info.script), ...info.args],
      fdLimit,
    ),
    { cwd: ROOT, env: { ...process.env, BENCH_WATCH_STDIN: '1', NODE_ENV: 'production', ...env }, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  children.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = tail(stderr + chunk, 8000);
  });
  let exited: string | undefined;
  child.on('exit', (code, signal) => {
    exited = `server process exited (code ${code}, signal ${signal})`;
  });
  const base: RunningServer = { info, status: 'failed', stderr: () => stderr, exited: () => exited, child };
  return new Promise<RunningServer>((resolve) => {
    let stdout = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve({ ...base, note: `did not start within 60 s. ${tail(stderr, 500)}` });
    }, 60_000);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout = tail(stdout + chunk, 4000); // keep draining: a full pipe would block the server
      const ready = /^READY (\d+)$/m.exec(stdout);
      const skip = /^SKIP (.*)$/m.exec(stdout);
      if (ready) {
        clearTimeout(timer);
        resolve({ ...base, status: 'ok', url: `http://127.0.0.1:${ready[1]}/` });
      } else if (skip) {
        clearTimeout(timer);
        resolve({ ...base, status: 'skipped', note: skip[1].trim() });
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ ...base, note: `exited before READY (code ${code}, signal ${signal}). ${tail(stderr, 800)}` });
    });
  });
}

/**
 * A throughput server: one process, or (info.replicas > 1) that many replicas started together on
 * one fresh Redis key prefix (BENCH_REDIS_KEY_PREFIX) or PostgreSQL schema (BENCH_PG_SCHEMA): the
 * same tasks, event streams and leases,
 * seen as one server whose `urls` are the replicas'. It is ok only when every replica is; a replica
 * that dies counts as the server dying (restartIfDead then restarts them all, on a new prefix).
 */
async function startThroughputServer(info: ServerInfo): Promise<RunningServer> {
  const n = info.replicas ?? 1;
  if (n <= 1) return startServer(info);
  const unique = `${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const shared = { BENCH_REDIS_KEY_PREFIX: `a2a-bench:${info.id}-${unique}:`, BENCH_PG_SCHEMA: `bench_replicas_${unique}` };
  const parts = await Promise.all(Array.from({ length: n }, () => startServer(info, [], undefined, shared)));
  const base = {
    info,
    parts,
    stderr: () =>
      parts
        .map((p, i) => (p.stderr() ? `[replica ${i + 1}] ${p.stderr()}` : ''))
        .filter(Boolean)
        .join('\n'),
    exited: () => {
      const i = parts.findIndex((p) => p.exited());
      return i === -1 ? undefined : `replica ${i + 1}: ${parts[i].exited()}`;
    },
  };
  const notOk = parts.findIndex((p) => p.status !== 'ok');
  if (notOk !== -1) {
    await Promise.all(parts.map((p) => stopServer(p)));
    const part = parts[notOk];
    // Without Redis (PostgreSQL) every replica says SKIP with the same reason: one note.
    return { ...base, status: part.status, note: part.status === 'skipped' ? part.note : `replica ${notOk + 1}: ${part.note ?? 'failed'}` };
  }
  const urls = parts.map((p) => p.url as string);
  return { ...base, status: 'ok', url: urls[0], urls };
}

async function stopServer(server: RunningServer): Promise<void> {
  if (server.parts) {
    await Promise.all(server.parts.map((part) => stopServer(part)));
    return;
  }
  if (server.child) await stopChild(server.child);
}

/** SIGTERM, SIGKILL after 3 s; a child that never started (no pid) or has exited is only forgotten. */
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      child.kill('SIGTERM');
    });
  }
  children.delete(child);
}

async function runLoadProcess(opts: LoadOptions): Promise<LoadResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'load.ts'), JSON.stringify(opts)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = tail(stderr + c, 4000)));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  children.delete(child);
  const line = /^RESULT (.*)$/m.exec(stdout);
  if (code !== 0 || !line) throw new Error(`load generator failed (exit ${code}): ${tail(stderr, 800)}`);
  return JSON.parse(line[1]) as LoadResult;
}

/**
 * Smoke mode: the same load generator in the runner's process. Fine for checking that every path
 * works; a measurement keeps it in a process of its own (runLoadProcess).
 */
async function runLoadInProcess(opts: LoadOptions): Promise<LoadResult> {
  const { runLoad } = await import('./load.js');
  return runLoad(opts);
}

async function control<T>(url: string, what: 'memory' | 'clear-store'): Promise<T> {
  const client = rpcClient(url, 1);
  try {
    const res = await client.post('{}', `/__bench/${what}`);
    if (res.status !== 200) throw new Error(`/__bench/${what} answered ${res.status}`);
    return JSON.parse(res.body) as T;
  } finally {
    client.close();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// The Redis of the ours-redis server

/** The runner's own redis-server, or why there is none. */
type LocalRedis = { url: string; stop: () => Promise<void>; pid: number } | { skip: string };

/** A port free on 127.0.0.1 right now (the OS picks it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * Starts `redis-server` on a free loopback port, without persistence (`--save '' --appendonly no`),
 * in a temporary directory; resolves once it accepts connections. A missing redis-server is not an
 * error: ours-redis is then skipped, with the reason in the report.
 */
async function startLocalRedis(log: (line: string) => void): Promise<LocalRedis> {
  let lastError = '';
  for (let attempt = 1; attempt <= 3; attempt += 1) {
    const port = await freePort();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-redis-'));
    const removeDir = () => rmSync(dir, { recursive: true, force: true });
    const child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'notice'],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    process.once('exit', removeDir);
    let output = '';
    const outcome = await new Promise<'ready' | { missing: string } | { failed: string }>((resolve) => {
      const timer = setTimeout(() => resolve({ failed: `not ready within 10 s: ${tail(output, 400)}` }), 10_000);
      const onData = (chunk: string) => {
        output = tail(output + chunk, 4000); // keep draining
        if (/Ready to accept connections/.test(output)) {
          clearTimeout(timer);
          resolve('ready');
        }
      };
      child.stdout?.setEncoding('utf8').on('data', onData);
      child.stderr?.setEncoding('utf8').on('data', onData);
      child.once('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        resolve(error.code === 'ENOENT' ? { missing: 'redis-server not found on PATH' } : { failed: error.message });
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({ failed: `redis-server exited (code ${code}, signal ${signal}): ${tail(output, 400)}` });
      });
    });
    const stop = async () => {
      await stopChild(child);
      removeDir();
    };
    if (outcome === 'ready') return { url: `redis://127.0.0.1:${port}`, stop, pid: child.pid! };
    await stop();
    if ('missing' in outcome) return { skip: `${outcome.missing}: install Redis to measure this server` };
    lastError = outcome.failed;
    log(`redis-server on port ${port} (attempt ${attempt}/3): ${lastError}`);
  }
  return { skip: `redis-server did not start: ${lastError}` };
}

// ---------------------------------------------------------------------------------------------
// Throughput rounds

type RoundOutcome = LoadResult | { skipped: true; note: string } | { failed: true; note: string };
const isLoadResult = (outcome: RoundOutcome): outcome is LoadResult => 'reqPerSec' in outcome;

interface ThroughputState {
  config: Config;
  running: Map<ServerId, RunningServer>;
  /** Deaths of server processes, per server, for the servers table. */
  restarts: Map<ServerId, string[]>;
  /** Workloads each server process has been warmed up on: a restarted process starts cold again. */
  warmed: WeakMap<RunningServer, Set<WorkloadId>>;
  log: (line: string) => void;
  /** The database servers' pids (redis-server, PostgreSQL's postmaster): their CPU counts with the rows on them. */
  dbPids: { redis?: number; postgres?: number };
}

/** The database server a server's rows run on, for its CPU. */
function dbPidOf(state: ThroughputState, info: ServerInfo): { dbPid?: number } {
  const pid = info.args.includes('--redis') ? state.dbPids.redis : info.args.includes('--postgres') ? state.dbPids.postgres : undefined;
  return pid === undefined ? {} : { dbPid: pid };
}

async function restartIfDead(state: ThroughputState, info: ServerInfo, workload: WorkloadId): Promise<RunningServer | undefined> {
  const server = state.running.get(info.id);
  if (server?.status !== 'ok' || !server.exited()) return server;
  const death = `${server.exited()}${server.stderr() ? `: ${tail(server.stderr(), 300)}` : ''}`;
  state.log(`${info.id}: ${death}; restarting it`);
  state.restarts.set(info.id, [...(state.restarts.get(info.id) ?? []), `(${workload} run): ${death}`]);
  await stopServer(server); // replicas: the ones still running (a fresh pair gets a fresh key prefix)
  const fresh = await startThroughputServer(info);
  state.running.set(info.id, fresh);
  if (fresh.status !== 'ok') await stopServer(fresh);
  return fresh;
}

/**
 * One measured run of one server. A server that dies (killed from outside on a shared machine, or
 * crashed) is reported and replaced by a fresh process; a run it died in is measured again once.
 */
async function measureRound(state: ThroughputState, info: ServerInfo, workload: WorkloadId, label: string): Promise<RoundOutcome> {
  const { config } = state;
  for (let attempt = 1; attempt <= 2; attempt += 1) {
    const server = await restartIfDead(state, info, workload);
    if (!server || server.status !== 'ok' || !server.url) {
      return server?.status === 'skipped'
        ? { skipped: true, note: server.note ?? 'skipped' }
        : { failed: true, note: server?.note ?? 'server not running' };
    }
    const warmed = state.warmed.get(server) ?? new Set<WorkloadId>();
    state.warmed.set(server, warmed);
    try {
      await Promise.all((server.urls ?? [server.url]).map((url) => control(url, 'clear-store')));
      const result = await (config.inProcessLoad ? runLoadInProcess : runLoadProcess)({
        url: server.url,
        ...(server.urls ? { urls: server.urls } : {}),
        workload,
        connections: config.connections,
        warmupSec: warmed.has(workload) ? config.roundWarmupSec : workload === 'stream' ? config.streamWarmupSec : config.warmupSec,
        durationSec: config.durationSec,
        getTaskPool: config.getTaskPool,
        ...(info.restBase !== undefined ? { restSendPath: `${info.restBase}/message:send` } : {}),
        ...dbPidOf(state, info),
      });
      if (server.exited() && attempt === 1) continue;
      warmed.add(workload);
      const issues = result.bad + result.errors + result.non2xx;
      state.log(
        `${workload} × ${info.id} (${label}): ${fmtMetric(workload, result)}, ${fmtInt(result.cpuMicrosPerRequest)} µs CPU/req` +
          (result.dbCpuMicrosPerRequest === undefined ? '' : ` (database ${fmtInt(result.dbCpuMicrosPerRequest)})`) +
          ', ' +
          `p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms${issues ? `, ${issues} bad/errors` : ''}` +
          (result.followUps ? `, follow-ups ${fmtInt(result.followUps.cross)} cross-replica / ${fmtInt(result.followUps.same)} same` : ''),
      );
      return result;
    } catch (error) {
      if (server.exited() && attempt === 1) continue;
      const note = [error instanceof Error ? error.message : String(error), server.exited(), tail(server.stderr(), 400)].filter(Boolean).join('; ');
      state.log(`${workload} × ${info.id} (${label}): FAILED ${note}`);
      return { failed: true, note };
    }
  }
  return { failed: true, note: 'server died during the run twice' };
}

/** Rates, CPU and latencies: median over rounds (one disturbed round cannot move it); counts: totals. */
function medianOfRounds(results: LoadResult[]): LoadResult {
  const med = (pick: (r: LoadResult) => number) => median(results.map(pick));
  const sum = (pick: (r: LoadResult) => number) => results.reduce((total, r) => total + pick(r), 0);
  const firstBad = results.find((r) => r.firstBadSample !== undefined)?.firstBadSample;
  const withFollowUps = results.filter((r) => r.followUps);
  return {
    workload: results[0].workload,
    durationSec: sum((r) => r.durationSec),
    requests: sum((r) => r.requests),
    reqPerSec: med((r) => r.reqPerSec),
    events: sum((r) => r.events),
    eventsPerSec: med((r) => r.eventsPerSec),
    latencyMs: { p50: med((r) => r.latencyMs.p50), p99: med((r) => r.latencyMs.p99), mean: med((r) => r.latencyMs.mean) },
    cpuMicrosPerRequest: med((r) => r.cpuMicrosPerRequest),
    bad: sum((r) => r.bad),
    errors: sum((r) => r.errors),
    timeouts: sum((r) => r.timeouts),
    non2xx: sum((r) => r.non2xx),
    ...(firstBad !== undefined ? { firstBadSample: firstBad } : {}),
    ...(withFollowUps.length > 0 ? { followUps: { cross: sum((r) => r.followUps?.cross ?? 0), same: sum((r) => r.followUps?.same ?? 0) } } : {}),
  };
}

function combineRounds(outcomes: RoundOutcome[]): Cell {
  const results = outcomes.filter(isLoadResult);
  const failures = outcomes.flatMap((o) => ('failed' in o ? [o.note] : []));
  if (results.length === 0) {
    const skipped = outcomes.find((o): o is { skipped: true; note: string } => 'skipped' in o);
    return skipped ?? { failed: true, note: failures.join('; ') || 'not measured' };
  }
  return { ...medianOfRounds(results), rounds: results, ...(failures.length > 0 ? { failedRounds: failures } : {}) };
}

/**
 * The workloads in groups measured together: a JSON-RPC workload with its REST twin (when both
 * run), so that their rounds interleave like the servers of one workload do; every other workload
 * alone. Groups in the order of their first workload.
 */
function workloadGroups(workloads: readonly WorkloadId[]): WorkloadId[][] {
  const groups = new Map<WorkloadId, WorkloadId[]>();
  for (const w of workloads) {
    const twin = workloadInfo(w).jsonRpcTwin;
    const root = twin && workloads.includes(twin) ? twin : w;
    const group = groups.get(root) ?? [];
    groups.set(root, group);
    if (w === root) group.unshift(w);
    else group.push(w);
  }
  return [...groups.values()];
}

/** The cells, and per workload the rounds in which both ours and stack were measured (adjacent). */
async function throughputPhase(
  state: ThroughputState,
  serverInfos: ServerInfo[],
): Promise<{ throughput: Report['throughput']; pairs: Map<WorkloadId, StackPair[]> }> {
  const { config } = state;
  const throughput: Report['throughput'] = {};
  const pairs = new Map<WorkloadId, StackPair[]>();
  for (const [index, group] of workloadGroups(config.workloads).entries()) {
    // The REST workloads run on the servers serving REST (sdk, ours, stack); their other cells stay empty.
    const infos = new Map(group.map((w) => [w, serverInfos.filter((s) => runsOn(w, s.id))]));
    const outcomes = new Map(group.map((w) => [w, new Map<ServerId, RoundOutcome[]>(infos.get(w)!.map((s) => [s.id, []]))]));
    for (let round = 0; round < config.rounds; round += 1) {
      // Every (workload of the group, server) once per round, the order alternating by round and by
      // group: drift of the shared machine is spread over all servers, and over a JSON-RPC workload
      // and its REST twin alike; none is systematically measured first.
      const cells = group.flatMap((w) => infos.get(w)!.map((info) => [w, info] as const));
      const order = (index + round) % 2 === 0 ? cells : [...cells].reverse();
      for (const [workload, info] of order) {
        outcomes
          .get(workload)!
          .get(info.id)!
          .push(await measureRound(state, info, workload, `round ${round + 1}/${config.rounds}`));
      }
    }
    for (const workload of group) {
      const servers = infos.get(workload)!;
      throughput[workload] = Object.fromEntries(servers.map((s) => [s.id, combineRounds(outcomes.get(workload)!.get(s.id) ?? [])]));
      const ours = outcomes.get(workload)!.get('ours') ?? [];
      const stack = outcomes.get(workload)!.get('stack') ?? [];
      pairs.set(
        workload,
        ours.flatMap((o, round) => {
          const s = stack[round];
          return s && isLoadResult(o) && isLoadResult(s) ? [{ ours: o, stack: s }] : [];
        }),
      );
      if (config.rounds > 1) {
        const medians = servers
          .map((s) => {
            const cell = throughput[workload][s.id];
            return isResult(cell) ? `${s.id} ${fmtMetric(workload, cell)} (${fmtInt(cell.cpuMicrosPerRequest)} µs/req)` : undefined;
          })
          .filter(Boolean);
        state.log(`${workload} medians: ${medians.join(', ')}`);
      }
    }
  }
  return { throughput, pairs };
}

// ---------------------------------------------------------------------------------------------
// Memory phase

interface MemoryPhaseResult {
  status: 'ok' | 'skipped' | 'failed';
  note?: string;
  n?: number;
  baseline?: MemorySnapshot;
  withParked?: MemorySnapshot;
  afterParkedCleared?: MemorySnapshot;
  withCancelled?: MemorySnapshot;
  afterCancelledCleared?: MemorySnapshot;
  /** Largest |difference| between two back-to-back snapshots: the measurement noise. */
  noiseBytes?: number;
  engineBytesPerParkedTask?: number;
  engineBytesPerCancelledTask?: number;
  storeBytesPerParkedTask?: number;
  storeBytesPerCancelledTask?: number;
  /** Below this many bytes per task, engine memory is reported as 0 (noise). */
  toleranceBytesPerTask?: number;
  failures?: number;
}

async function parkTasks(url: string, count: number): Promise<{ ids: string[]; failures: number }> {
  const client = rpcClient(url, 16);
  let failures = 0;
  try {
    const ids = await pool(count, 16, async () => {
      const res = await client.post(sendMessageBody('input'));
      const task = extractTask(res.body);
      if (!task || !res.body.includes('TASK_STATE_INPUT_REQUIRED')) {
        failures += 1;
        return '';
      }
      return task.id;
    });
    return { ids: ids.filter(Boolean), failures };
  } finally {
    client.close();
  }
}

async function cancelTasks(url: string, ids: string[]): Promise<number> {
  const client = rpcClient(url, 16);
  let failures = 0;
  try {
    await pool(ids.length, 16, async (i) => {
      const res = await client.post(taskIdBody('CancelTask', ids[i]));
      if (!res.body.includes('TASK_STATE_CANCELED')) failures += 1;
    });
    return failures;
  } finally {
    client.close();
  }
}

async function completeTasks(url: string, count: number): Promise<void> {
  const client = rpcClient(url, 16);
  try {
    await pool(count, 16, () => client.post(sendMessageBody('complete')));
  } finally {
    client.close();
  }
}

/**
 * Snapshot after the client connections are gone (server-side sockets are not engine state). The
 * first forced GC after a burst of requests still frees compiled code and optimisation metadata, so
 * snapshots are repeated until two consecutive ones agree within 32 KiB (at most 5).
 */
async function snapshot(url: string, noise: { max: number }): Promise<MemorySnapshot> {
  await sleep(150);
  let previous = await control<MemorySnapshot>(url, 'memory');
  for (let i = 0; i < 4; i += 1) {
    const next = await control<MemorySnapshot>(url, 'memory');
    const delta = Math.abs(next.heapUsed - previous.heapUsed);
    previous = next;
    if (delta < 32 * 1024) {
      noise.max = Math.max(noise.max, delta);
      break;
    }
  }
  return previous;
}

/** A fresh server for the memory phase. */
function startMemoryServer(info: ServerInfo): Promise<RunningServer> {
  // Without bytecode flushing: V8 otherwise drops the bytecode of functions idle for a few GCs
  // (e.g. the cancel path while tasks are being parked) and recompiles it later, which shows up as
  // ±0.5 MB of old-space noise between snapshots.
  return startServer(info, ['--no-flush-bytecode']);
}

async function memoryPhase(
  info: ServerInfo,
  config: Config,
  log: (line: string) => void,
  /** Smoke mode: its fresh server, started during the throughput phase. */
  started?: Promise<RunningServer>,
): Promise<MemoryPhaseResult> {
  const server = await (started ?? startMemoryServer(info));
  if (server.status !== 'ok' || !server.url) {
    await stopServer(server);
    return { status: server.status === 'skipped' ? 'skipped' : 'failed', note: server.note };
  }
  const url = server.url;
  const n = config.memoryN;
  try {
    // Warm-up: exercise every path once so lazily created structures are part of the baseline.
    await parkTasks(url, config.memoryWarmup);
    const warmCancel = await parkTasks(url, config.memoryWarmup);
    await cancelTasks(url, warmCancel.ids);
    await completeTasks(url, config.memoryWarmup);
    await control(url, 'clear-store');
    const noise = { max: 0 };
    const baseline = await snapshot(url, noise);

    log(`  ${info.id}: parking ${n} tasks in input-required`);
    const parked = await parkTasks(url, n);
    const withParked = await snapshot(url, noise);
    await control(url, 'clear-store');
    const afterParkedCleared = await snapshot(url, noise);

    log(`  ${info.id}: parking ${n} more tasks and cancelling them`);
    const toCancel = await parkTasks(url, n);
    const cancelFailures = await cancelTasks(url, toCancel.ids);
    const withCancelled = await snapshot(url, noise);
    await control(url, 'clear-store');
    const afterCancelledCleared = await snapshot(url, noise);

    // Compiled code (code_space) is not state: leave it out of the retained heap.
    const retained = (s: MemorySnapshot) => s.heapUsed - (s.spaces.code_space ?? 0);
    const perTask = (after: MemorySnapshot, before: MemorySnapshot, count: number) =>
      count > 0 ? (retained(after) - retained(before)) / count : Number.NaN;
    return {
      status: 'ok',
      n,
      baseline,
      withParked,
      afterParkedCleared,
      withCancelled,
      afterCancelledCleared,
      noiseBytes: noise.max,
      engineBytesPerParkedTask: perTask(afterParkedCleared, baseline, parked.ids.length),
      engineBytesPerCancelledTask: perTask(afterCancelledCleared, afterParkedCleared, toCancel.ids.length),
      storeBytesPerParkedTask: perTask(withParked, afterParkedCleared, parked.ids.length),
      storeBytesPerCancelledTask: perTask(withCancelled, afterCancelledCleared, toCancel.ids.length),
      // JIT metadata (feedback, optimised code) still moves old space by ~±100 KB between phases,
      // i.e. ~±10 B/task at N = 10,000; any real per-task retention (a Map entry with an id
      // string is already ~80 B) is well above 32 B.
      toleranceBytesPerTask: Math.max(32, (2 * noise.max) / n),
      failures: parked.failures + toCancel.failures + cancelFailures,
    };
  } catch (error) {
    return { status: 'failed', note: `${error instanceof Error ? error.message : String(error)} ${tail(server.stderr(), 500)}` };
  } finally {
    await stopServer(server);
  }
}

// ---------------------------------------------------------------------------------------------
// Idle-streams phase

/** ceiling: a bare Express handler holding the response open, the floor of what a held response costs. */
const IDLE_SERVERS = ['ceiling', 'sdk', 'ours'] as const;

/** What an idle-streams client does: in the runner's process (smoke) or in a process of its own. */
interface IdleDriver {
  park(n: number): Promise<ParkResult>;
  read(): Promise<ReadResult>;
  open(): Promise<OpenResult>;
  close(): Promise<CloseResult>;
  dispose(): Promise<void>;
}

function inProcessIdleDriver(url: string): IdleDriver {
  const streams = new IdleStreams(url);
  return {
    park: (n) => streams.park(n),
    read: () => streams.read(),
    open: () => streams.open(),
    close: () => streams.close(),
    dispose: async () => {
      await streams.close();
    },
  };
}

/** bench/idle-streams.ts in a process of its own, driven one command per line. */
async function childIdleDriver(url: string, fdLimit: number | undefined): Promise<IdleDriver> {
  const child = spawn(
    ...withFdLimit(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', 'idle-streams.ts'), JSON.stringify({ url })], fdLimit),
    { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
  );
  children.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr = tail(stderr + c, 4000)));
  const waiting: Array<{ resolve: (line: string) => void; reject: (error: Error) => void }> = [];
  let ready!: () => void;
  let failed!: (error: Error) => void;
  const started = new Promise<void>((resolve, reject) => {
    ready = resolve;
    failed = reject;
  });
  let buffered = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let nl: number;
    while ((nl = buffered.indexOf('\n')) !== -1) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line === 'READY') ready();
      else if (line.startsWith('RESULT ')) waiting.shift()?.resolve(line.slice(7));
    }
  });
  child.on('exit', (code, signal) => {
    children.delete(child);
    const error = new Error(`idle-streams client exited (code ${code}, signal ${signal}): ${tail(stderr, 500)}`);
    failed(error);
    for (const w of waiting.splice(0)) w.reject(error);
  });
  await started;
  const command = <T>(line: string): Promise<T> =>
    new Promise<string>((resolve, reject) => {
      waiting.push({ resolve, reject });
      child.stdin?.write(`${line}\n`);
    }).then((json) => {
      const result = JSON.parse(json) as T & { error?: string };
      if (result.error) throw new Error(`idle-streams client: ${result.error}`);
      return result;
    });
  return {
    park: (n) => command<ParkResult>(`park ${n}`),
    read: () => command<ReadResult>('read'),
    open: () => command<OpenResult>('open'),
    close: () => command<CloseResult>('close'),
    dispose: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.stdin?.end('exit\n');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface IdlePhaseResult {
  status: 'ok' | 'skipped' | 'failed';
  note?: string;
  /** Streams asked for, and held open (after failures). */
  requested?: number;
  n?: number;
  baseline?: MemorySnapshot;
  withStreams?: MemorySnapshot;
  afterClose?: MemorySnapshot;
  /** Growth of the used heap without code space, per open stream. */
  heapBytesPerStream?: number;
  rssBytesPerStream?: number;
  /** Heap still held after every client left, per stream that was open: ≈ 0 without a leak. */
  heapLeftPerStream?: number;
  /** Below this (B/stream), what is left is reported as noise. */
  toleranceBytesPerStream?: number;
  noiseBytes?: number;
  openMs?: number;
  closeMs?: number;
  failures?: number;
  firstFailure?: string;
}

/**
 * A snapshot once the server has no connection left but the one asking (waits at most 10 s).
 * Settled (repeated until two agree) unless `quick` (smoke mode: one forced-GC snapshot is enough
 * to show that the path works, and each costs several full GCs).
 */
async function idleSnapshot(url: string, noise: { max: number }, quick: boolean, quiet: boolean): Promise<MemorySnapshot> {
  const deadline = Date.now() + 10_000;
  while (quiet && (await getJson<{ connections: number }>(url, '/__bench/connections')).connections > 0 && Date.now() < deadline) await sleep(50);
  return quick ? control<MemorySnapshot>(url, 'memory') : snapshot(url, noise);
}

/**
 * One server: warm-up (streams opened and closed), N tasks parked and read once, snapshot; one idle
 * SubscribeToTask stream per parked task, snapshot; every client leaves, snapshot. The tasks stay
 * parked throughout, so the differences are the streams alone.
 */
async function idlePhase(
  info: ServerInfo,
  config: Config,
  n: number,
  fdLimit: number | undefined,
  log: (line: string) => void,
  /** Smoke mode: the server of the throughput phase, still running (no process to start). */
  reuse?: RunningServer,
): Promise<IdlePhaseResult> {
  const server = reuse ?? (await startServer(info, ['--no-flush-bytecode'], fdLimit));
  if (server.status !== 'ok' || !server.url) {
    if (!reuse) await stopServer(server);
    return { status: server.status === 'skipped' ? 'skipped' : 'failed', note: server.note };
  }
  const url = server.url;
  let driver: IdleDriver | undefined;
  try {
    driver = config.inProcessLoad ? inProcessIdleDriver(url) : await childIdleDriver(url, fdLimit);
    // Warm-up: every path of a stream once, so lazily created structures are part of the baseline.
    if (config.idleWarmup > 0) {
      await driver.park(config.idleWarmup);
      await driver.open();
      await driver.close();
    }
    await control(url, 'clear-store');
    const parked = await driver.park(n);
    // Read once: a store's first read of a task may change what it holds (not the streams' doing).
    const read = await driver.read();
    const noise = { max: 0 };
    const quick = config.mode === 'smoke';
    const baseline = await idleSnapshot(url, noise, quick, true);
    log(`  idle ${info.id}: opening ${parked.parked} streams`);
    const opened = await driver.open();
    const withStreams = await idleSnapshot(url, noise, quick, false);
    const closed = await driver.close();
    const afterClose = await idleSnapshot(url, noise, quick, true);
    const retained = (s: MemorySnapshot) => s.heapUsed - (s.spaces.code_space ?? 0);
    const count = opened.opened;
    const per = (delta: number) => (count > 0 ? delta / count : Number.NaN);
    return {
      status: 'ok',
      requested: n,
      n: count,
      baseline,
      withStreams,
      afterClose,
      heapBytesPerStream: per(retained(withStreams) - retained(baseline)),
      rssBytesPerStream: per(withStreams.rss - baseline.rss),
      heapLeftPerStream: per(retained(afterClose) - retained(baseline)),
      toleranceBytesPerStream: Math.max(32, (2 * noise.max) / Math.max(1, count)),
      noiseBytes: noise.max,
      openMs: opened.ms,
      closeMs: closed.ms,
      failures: parked.failures + read.failures + opened.failures,
      ...(opened.firstFailure ? { firstFailure: opened.firstFailure } : {}),
    };
  } catch (error) {
    return { status: 'failed', note: `${error instanceof Error ? error.message : String(error)} ${tail(server.stderr(), 500)}` };
  } finally {
    await driver?.dispose().catch(() => undefined);
    if (!reuse) await stopServer(server);
  }
}

/** N capped by the open-file limit: each side of a stream holds one socket (plus ~100 other files). */
function idleStreamCount(requested: number): { n: number; fdLimit?: number; note?: string } {
  const needed = requested + 256;
  const limits = fdLimits();
  if (!limits || limits.soft >= needed) return { n: requested };
  if (limits.hard >= needed) return { n: requested, fdLimit: needed };
  const n = Math.max(0, limits.hard - 256);
  return {
    n,
    fdLimit: limits.hard,
    note: `capped at ${n} streams by the open-file limit (ulimit -Hn ${limits.hard}); raise it for N = ${requested}`,
  };
}

// ---------------------------------------------------------------------------------------------
// Report

/** A (workload, server) cell: medians over its rounds, with the rounds themselves. */
type CellResult = LoadResult & { rounds: LoadResult[]; failedRounds?: string[] };
type Cell = CellResult | { skipped: true; note: string } | { failed: true; note: string };
const isResult = (cell: Cell | undefined): cell is CellResult => !!cell && 'reqPerSec' in cell;
const hasIssues = (cell: LoadResult) => cell.bad + cell.errors + cell.non2xx > 0;

interface Target {
  id: string;
  description: string;
  /** Throughput ratio (or bytes for memory targets): decides `met`. */
  measured: number | null;
  threshold: string;
  met: boolean | null;
  note?: string;
  /** The same comparison from server CPU per request (inverse ratio: > 1 means the first is cheaper). */
  cpuMeasured?: number | null;
  cpuNote?: string;
}

function metric(workload: WorkloadId, cell: Cell | undefined): number | null {
  if (!isResult(cell)) return null;
  return workload === 'stream' ? cell.eventsPerSec : cell.reqPerSec;
}

function cpuMetric(cell: Cell | undefined): number | null {
  return isResult(cell) && Number.isFinite(cell.cpuMicrosPerRequest) ? cell.cpuMicrosPerRequest : null;
}

function ratio(a: number | null, b: number | null): number | null {
  return a !== null && b !== null && b > 0 ? a / b : null;
}

interface PairRatios {
  oursVsCeiling: number | null;
  oursVsSdk: number | null;
  stackVsOurs: number | null;
  /** ours-latency / ours: what a store answering in 1-5 ms per call costs (expected far below 1). */
  latencyVsOurs: number | null;
  /** ours-sqlite / ours: the router on the SQLite store (a file on disk) instead of the in-memory one. */
  sqliteVsOurs: number | null;
  /** ours-redis / ours: the router on the Redis backend (store, event bus, leases over loopback TCP). */
  redisVsOurs: number | null;
  /** ours-2replicas / ours-redis: the same Redis store served by two processes instead of one. */
  twoReplicasVsRedis: number | null;
  /** ours-postgres / ours: the router on the PostgreSQL backend (store, event bus, leases over loopback TCP). */
  postgresVsOurs: number | null;
  /** ours-pg-2replicas / ours-postgres: the same PostgreSQL schema served by two processes instead of one. */
  twoReplicasVsPostgres: number | null;
  /** REST workloads: ours over REST / ours over JSON-RPC (the JSON-RPC twin workload, same run); else null. */
  restVsJsonRpc: number | null;
}

/**
 * ours/ceiling, ours/SDK, stack/ours, ours-latency/ours, ours-sqlite/ours, ours-redis/ours, ours-2replicas/ours-redis,
 * ours-postgres/ours and ours-pg-2replicas/ours-postgres of `value` in workload `w`, and for a REST
 * workload ours(w)/ours(its JSON-RPC twin); inverted for a cost, so > 1 always favours the first.
 */
function pairRatios(w: WorkloadId, value: (w: WorkloadId, s: ServerId) => number | null, cost = false): PairRatios {
  const r = (a: [WorkloadId, ServerId], b: [WorkloadId, ServerId]) => (cost ? ratio(value(...b), value(...a)) : ratio(value(...a), value(...b)));
  const twin = workloadInfo(w).jsonRpcTwin;
  return {
    oursVsCeiling: r([w, 'ours'], [w, 'ceiling']),
    oursVsSdk: r([w, 'ours'], [w, 'sdk']),
    stackVsOurs: r([w, 'stack'], [w, 'ours']),
    latencyVsOurs: r([w, 'ours-latency'], [w, 'ours']),
    sqliteVsOurs: r([w, 'ours-sqlite'], [w, 'ours']),
    redisVsOurs: r([w, 'ours-redis'], [w, 'ours']),
    twoReplicasVsRedis: r([w, 'ours-2replicas'], [w, 'ours-redis']),
    postgresVsOurs: r([w, 'ours-postgres'], [w, 'ours']),
    twoReplicasVsPostgres: r([w, 'ours-pg-2replicas'], [w, 'ours-postgres']),
    restVsJsonRpc: twin ? r([w, 'ours'], [twin, 'ours']) : null,
  };
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim();
/** Text safe inside a markdown table cell. */
const mdCell = (text: string) => oneLine(text).replace(/\|/g, '\\|');
const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');
const fmtRatio = (r: number | null) => (r === null ? 'n/a' : `${r.toFixed(2)}×`);
const fmtBytes = (b: number | undefined) => (b === undefined || Number.isNaN(b) ? 'n/a' : `${b.toFixed(1)} B`);
const fmtMiB = (b: number | undefined) => (b === undefined ? 'n/a' : `${(b / 1048576).toFixed(1)} MiB`);
const fmtMetric = (workload: WorkloadId, r: LoadResult) =>
  workload === 'stream' ? `${fmtInt(r.eventsPerSec)} events/s` : `${fmtInt(r.reqPerSec)} req/s`;

function buildTargets(
  throughput: Record<string, Record<string, Cell>>,
  memory: Record<string, MemoryPhaseResult>,
  idle: Record<string, IdlePhaseResult>,
  workloads: WorkloadId[],
  mode: Config['mode'],
  servers: Record<string, { status: string; note?: string }> = {},
  stackPaired: Record<string, PairedOverhead> = {},
): Target[] {
  const m = (w: WorkloadId, s: ServerId) => metric(w, throughput[w]?.[s]);
  const cpu = (w: WorkloadId, s: ServerId) => cpuMetric(throughput[w]?.[s]);
  const hasBad = (w: WorkloadId, ...servers: ServerId[]): boolean =>
    servers.some((s) => {
      const cell = throughput[w]?.[s];
      return isResult(cell) && hasIssues(cell);
    });
  /** (workload a, server a) over (workload b, server b) ≥ min, or > min when `ahead`. */
  const compare = (
    id: string,
    description: string,
    [wa, a]: [WorkloadId, ServerId],
    [wb, b]: [WorkloadId, ServerId],
    min: number,
    ahead = false,
  ): Target => {
    const r = ratio(m(wa, a), m(wb, b));
    return {
      id,
      description,
      measured: r,
      threshold: `${ahead ? '>' : '≥'} ${min.toFixed(2)}×`,
      met: r === null ? null : ahead ? r > min : r >= min,
      ...(hasBad(wa, a) || hasBad(wb, b) ? { note: 'bad responses or errors during the run: ratio not trustworthy' } : {}),
      ...(r === null ? { note: 'not measured in this run' } : {}),
      cpuMeasured: ratio(cpu(wb, b), cpu(wa, a)),
    };
  };
  const check = (id: string, description: string, w: WorkloadId, a: ServerId, b: ServerId, min: number, ahead = false): Target =>
    compare(id, description, [w, a], [w, b], min, ahead);
  const targets: Target[] = [
    check('message-vs-ceiling', 'SendMessage → Message: ours / bare Express', 'send-message', 'ours', 'ceiling', 0.9),
    check('message-vs-sdk', 'SendMessage → Message: ours / official SDK', 'send-message', 'ours', 'sdk', 1.3),
    check('task-vs-sdk', 'SendMessage → completed Task: ours / official SDK', 'send-task', 'ours', 'sdk', 1.8),
    check('stream-vs-sdk', 'Streaming events/s: ours / official SDK', 'stream', 'ours', 'sdk', 2),
    // The HTTP+JSON binding: ahead of the SDK's REST handler, and within 5 % of our own JSON-RPC.
    check('rest-message-vs-sdk', 'REST SendMessage → Message: ours / official SDK (its REST handler)', 'send-message-rest', 'ours', 'sdk', 1, true),
    check('rest-task-vs-sdk', 'REST SendMessage → completed Task: ours / official SDK (its REST handler)', 'send-task-rest', 'ours', 'sdk', 1, true),
    compare(
      'rest-message-vs-jsonrpc',
      'SendMessage → Message: ours over REST / ours over JSON-RPC',
      ['send-message-rest', 'ours'],
      ['send-message', 'ours'],
      0.95,
    ),
    compare(
      'rest-task-vs-jsonrpc',
      'SendMessage → completed Task: ours over REST / ours over JSON-RPC',
      ['send-task-rest', 'ours'],
      ['send-task', 'ours'],
      0.95,
    ),
  ];
  // The durable stores: what a completed Task costs on SQLite (a file), on Redis and on PostgreSQL (loopback TCP).
  for (const [id, description, server, min] of [
    ['sqlite-task-vs-ours', 'SendMessage → completed Task: ours on SQLite / ours in memory', 'ours-sqlite', 0.7],
    ['redis-task-vs-ours', 'SendMessage → completed Task: ours on Redis / ours in memory', 'ours-redis', 0.5],
    ['postgres-task-vs-ours', 'SendMessage → completed Task: ours on PostgreSQL / ours in memory', 'ours-postgres', 0.5],
  ] as const) {
    const target = check(id, description, 'send-task', server, 'ours', min);
    const status = servers[server];
    if (target.measured === null && status && status.status !== 'ok')
      target.note = `${server} ${status.status}${status.note ? `: ${status.note}` : ''}`;
    targets.push(target);
  }
  // Stack overhead, the worst workload; on CPU (ours µs / stack µs) its own worst workload.
  const worstOf = (ratioOf: (w: WorkloadId) => number | null) =>
    workloads
      .map((w) => ({ w, r: ratioOf(w) }))
      .filter((x): x is { w: WorkloadId; r: number } => x.r !== null)
      .reduce<{ w: WorkloadId; r: number } | undefined>((a, b) => (a === undefined || b.r < a.r ? b : a), undefined);
  // Paired (median of back-to-back ratios) where measured, else the ratio of the cells' medians.
  const worst = worstOf((w) => stackPaired[w]?.ratio ?? ratio(m(w, 'stack'), m(w, 'ours')));
  const worstCpu = worstOf((w) => {
    const paired = stackPaired[w]?.cpuRatio;
    return paired !== undefined && Number.isFinite(paired) ? paired : ratio(cpu(w, 'ours'), cpu(w, 'stack'));
  });
  if (!worst) {
    targets.push({
      id: 'stack-overhead',
      description: 'Full middleware stack ≤ 10 % slower than router alone (worst workload)',
      measured: null,
      threshold: '≥ 0.90×',
      met: null,
      note: 'stack variant not measured (see servers)',
    });
  } else {
    targets.push({
      id: 'stack-overhead',
      description: 'Full middleware stack ≤ 10 % slower than router alone (worst workload)',
      measured: worst.r,
      threshold: '≥ 0.90×',
      met: worst.r >= 0.9,
      note: `worst: ${worst.w}${stackPaired[worst.w] ? `, median of ${stackPaired[worst.w].pairs} back-to-back pairs` : ''}`,
      cpuMeasured: worstCpu?.r ?? null,
      ...(worstCpu ? { cpuNote: `worst: ${worstCpu.w}` } : {}),
    });
  }
  const ours = memory.ours;
  for (const [id, key, label] of [
    ['memory-parked', 'engineBytesPerParkedTask', 'parked (input-required)'],
    ['memory-cancelled', 'engineBytesPerCancelledTask', 'cancelled while parked'],
  ] as const) {
    const value = ours?.status === 'ok' ? ours[key] : undefined;
    const tolerance = ours?.toleranceBytesPerTask ?? 32;
    targets.push({
      id,
      description: `Engine memory per ${label} task, outside the store`,
      measured: value ?? null,
      threshold: `0 B (noise tolerance ${tolerance.toFixed(1)} B/task)`,
      met: value === undefined ? null : value <= tolerance,
      ...(value === undefined
        ? { note: 'memory phase not run for ours' }
        : mode !== 'full'
          ? { note: `${mode} mode, small N: indicative only` }
          : value < -tolerance
            ? { note: 'the heap shrank by more than the tolerance: measurement drift, rerun' }
            : {}),
    });
  }
  const idleOurs = idle.ours;
  const left = idleOurs?.status === 'ok' ? idleOurs.heapLeftPerStream : undefined;
  const idleTolerance = idleOurs?.toleranceBytesPerStream ?? 32;
  targets.push({
    id: 'idle-streams-released',
    description: 'Heap left after every idle SSE stream closed (ours), per stream',
    measured: left ?? null,
    threshold: `0 B (noise tolerance ${idleTolerance.toFixed(1)} B/stream)`,
    met: left === undefined ? null : left <= idleTolerance,
    ...(left === undefined
      ? { note: 'idle-streams phase not run for ours' }
      : mode !== 'full'
        ? { note: `${mode} mode, small N: indicative only` }
        : {}),
  });
  return targets;
}

function methodText(meta: Report['meta']): string {
  const rounds = meta.rounds;
  const warmup =
    meta.warmupSec === 0 && meta.roundWarmupSec === 0 && meta.streamWarmupSec === 0
      ? 'no warm-up'
      : (rounds > 1 ? `${meta.warmupSec} s warm-up in round 1, ${meta.roundWarmupSec} s in later rounds` : `${meta.warmupSec} s warm-up`) +
        (meta.streamWarmupSec !== meta.warmupSec ? ` (streaming: ${meta.streamWarmupSec} s first)` : '');
  return rounds > 1
    ? `${rounds} interleaved rounds per cell (${warmup}; ${meta.durationSec} s measured per round), medians of rounds`
    : `1 round per cell (${warmup} + ${meta.durationSec} s measured)`;
}

/** Workloads × servers table of one metric, with the three ratio columns. */
function comparisonTable(
  servers: readonly ServerInfo[],
  workloads: readonly WorkloadInfo[],
  ratios: Record<string, PairRatios>,
  format: (w: WorkloadInfo, cell: CellResult) => string,
  report: Report,
): string[] {
  const lines = [
    `| Workload | ${servers.map((s) => s.id).join(' | ')} | ours/ceiling | ours/SDK | stack/ours | ours-latency/ours | sqlite/ours | redis/ours | 2replicas/redis | postgres/ours | pg-2replicas/postgres |`,
    `|---|${servers.map(() => '---:').join('|')}|---:|---:|---:|---:|---:|---:|---:|---:|---:|`,
  ];
  for (const w of workloads) {
    const row = report.throughput[w.id] ?? {};
    const cells = servers.map((s) => {
      const cell = row[s.id];
      if (cell === undefined) return '–'; // not run on this server (the REST workloads: sdk, ours, stack)
      if (!isResult(cell)) return 'skipped' in cell ? 'skipped' : 'failed';
      return `${format(w, cell)}${hasIssues(cell) ? ' ⚠' : ''}`;
    });
    const r = ratios[w.id];
    lines.push(
      `| ${w.title} | ${cells.join(' | ')} | ${fmtRatio(r?.oursVsCeiling ?? null)} | ${fmtRatio(r?.oursVsSdk ?? null)} | ` +
        `${fmtRatio(r?.stackVsOurs ?? null)} | ${fmtRatio(r?.latencyVsOurs ?? null)} | ` +
        `${fmtRatio(r?.sqliteVsOurs ?? null)} | ${fmtRatio(r?.redisVsOurs ?? null)} | ${fmtRatio(r?.twoReplicasVsRedis ?? null)} | ` +
        `${fmtRatio(r?.postgresVsOurs ?? null)} | ${fmtRatio(r?.twoReplicasVsPostgres ?? null)} |`,
    );
  }
  return lines;
}

/** The two-replica rows: on Redis (ours-2replicas) and on PostgreSQL (ours-pg-2replicas). */
const TWO_REPLICAS = {
  redis: {
    id: 'ours-2replicas',
    single: 'ours-redis',
    flag: '--redis',
    db: '`redis-server` and the same key prefix',
    dbName: 'Redis',
    ratio: '2replicas/redis',
  },
  postgres: {
    id: 'ours-pg-2replicas',
    single: 'ours-postgres',
    flag: '--postgres',
    db: 'PostgreSQL cluster and the same schema',
    dbName: 'PostgreSQL',
    ratio: 'pg-2replicas/postgres',
  },
} as const;

/** What a two-replica row is, how its load is spread, and why its ratio is not a scaling factor here. */
function twoReplicasNote(report: Report, workloads: readonly WorkloadInfo[], pair: (typeof TWO_REPLICAS)[keyof typeof TWO_REPLICAS]): string[] {
  const st = report.servers[pair.id];
  const twoTurn = report.throughput['two-turn']?.[pair.id];
  const followUps = isResult(twoTurn) ? twoTurn.followUps : undefined;
  const crossText =
    followUps && followUps.cross + followUps.same > 0
      ? ` In this run ${((100 * followUps.cross) / (followUps.cross + followUps.same)).toFixed(1)} % of the measured follow-ups ` +
        `crossed replicas (${fmtInt(followUps.cross)} of ${fmtInt(followUps.cross + followUps.same)}).`
      : '';
  const twoTurnText = workloads.some((w) => w.id === 'two-turn')
    ? ' Two-turn: each follow-up goes to the other replica than the one that parked its task (a task parked there, primed ' +
      'before the run, is taken from a queue; when none is waiting, one of its own replica).' +
      crossText
    : '';
  return [
    `\`${pair.id}\` is two \`${pair.single}\` processes (\`ours.ts ${pair.flag}\`) on the same ${pair.db}: ` +
      'one task store, event bus and lease table, as replicas behind a load balancer. The load generator spreads its ' +
      `${report.meta.connections} connections over both (autocannon's multi-URL mode, half each, one latency histogram); ` +
      `server CPU per request is the two processes' CPU and the ${pair.dbName} server's, summed. JSON-RPC workloads only. GetTask: ` +
      'the tasks are created through the first replica and read through both.' +
      twoTurnText +
      ` ${pair.ratio}: the same ${pair.dbName} store served by two processes instead of one.` +
      ` ⚠ On this ${report.meta.cpus}-core machine the two replicas, the ${pair.dbName} server and the load generator share the cores, ` +
      `so the ratio shows what the second replica costs (two event loops and their ${pair.dbName} round trips competing for the same ` +
      `cores), not how replicas scale: that needs a core per replica, and more for ${pair.dbName} and the load.` +
      (st && st.status !== 'ok' ? ` ${pair.id}: ${st.status}${st.note ? ` (${oneLine(st.note)})` : ''}.` : ''),
    '',
  ];
}

/**
 * The HTTP+JSON rows side by side with the SDK's REST handler and with our JSON-RPC rows of the
 * same message (the twin workload, measured in the same rounds).
 */
function restMarkdown(report: Report, workloads: readonly WorkloadInfo[]): string[] {
  const rest = workloads.filter((w) => w.binding === 'rest');
  if (rest.length === 0) return [];
  const lines = ['### HTTP+JSON (REST) binding', ''];
  lines.push(
    '`POST <mount>/message:send` with `{"message": …}`, `A2A-Version: 1.0` and `Content-Type: application/a2a+json`; a ' +
      'response counts as good only if it is 2xx, `application/a2a+json` and the expected `{"message"}` or completed ' +
      '`{"task"}` (an error body counts as bad). `sdk` is `@a2a-js/sdk`\'s `restHandler` (mounted at `/rest`, in front of ' +
      'its JSON-RPC handler), `ours` and `stack` the same router as for JSON-RPC. The JSON-RPC column is ours on the ' +
      'JSON-RPC workload sending the same message, measured in the same rounds as the REST cells (interleaved); ' +
      "`bench/tools/instructions.sh` counts the two bindings' instructions per request, steadier still.",
  );
  lines.push('');
  lines.push(
    '| Workload | sdk REST | ours REST | stack REST | ours JSON-RPC | ours/SDK (REST) | ours REST / JSON-RPC | CPU µs/req: sdk REST · ours REST · ours JSON-RPC | CPU-based ours/SDK | CPU-based REST / JSON-RPC |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const w of rest) {
    const twin = w.jsonRpcTwin;
    const cellOf = (wl: WorkloadId | undefined, s: ServerId) => (wl ? report.throughput[wl]?.[s] : undefined);
    const rate = (wl: WorkloadId | undefined, s: ServerId) => {
      const cell = cellOf(wl, s);
      if (cell === undefined) return '–';
      if (!isResult(cell)) return 'skipped' in cell ? 'skipped' : 'failed';
      return `${fmtInt(cell.reqPerSec)}${hasIssues(cell) ? ' ⚠' : ''}`;
    };
    const cpuOf = (wl: WorkloadId | undefined, s: ServerId) => {
      const value = cpuMetric(cellOf(wl, s));
      return value === null ? '–' : fmtInt(value);
    };
    const r = report.ratios[w.id];
    const c = report.cpuRatios[w.id];
    lines.push(
      `| ${w.title} | ${rate(w.id, 'sdk')} | ${rate(w.id, 'ours')} | ${rate(w.id, 'stack')} | ${rate(twin, 'ours')} | ` +
        `${fmtRatio(r?.oursVsSdk ?? null)} | ${fmtRatio(r?.restVsJsonRpc ?? null)} | ` +
        `${cpuOf(w.id, 'sdk')} · ${cpuOf(w.id, 'ours')} · ${cpuOf(twin, 'ours')} | ${fmtRatio(c?.oursVsSdk ?? null)} | ${fmtRatio(c?.restVsJsonRpc ?? null)} |`,
    );
  }
  lines.push('');
  lines.push("Targets: ours ahead of the SDK's REST handler (> 1.00×), and ≥ 0.95× our JSON-RPC rows (see Targets).");
  lines.push('');
  return lines;
}

function markdown(report: Report, config: Config): string {
  const lines: string[] = [];
  const servers = SERVERS.filter((s) => config.servers.includes(s.id));
  const workloads = WORKLOADS.filter((w) => config.workloads.includes(w.id));
  lines.push('# a2a-express-kit benchmark');
  lines.push('');
  lines.push(
    `${report.meta.date} · ${report.meta.mode} mode · Node ${report.meta.node} · ${report.meta.cpus} × ${report.meta.cpuModel} · ` +
      `autocannon ${report.meta.connections} connections · ${methodText(report.meta)} · ` +
      (report.meta.mode === 'smoke'
        ? "every server in its own process, the load generator in the runner's"
        : 'every server and the load generator in separate processes') +
      ` on 127.0.0.1 · total ${report.meta.totalSec.toFixed(0)} s`,
  );
  lines.push('');
  lines.push(
    'Absolute numbers drift on a shared machine; compare the ratios (all measured in the same run, servers interleaved).' +
      (report.meta.mode === 'quick' ? ' **Quick mode**: short, barely warmed runs; a quick look, not a measurement.' : '') +
      (report.meta.mode === 'smoke'
        ? ` **Smoke mode**: every cell ran once for ${report.meta.durationSec} s with the load generator in the runner's process; ` +
          'it shows that every server, workload and report section works. The numbers mean nothing.'
        : ''),
  );
  lines.push('');
  lines.push('## Servers');
  lines.push('');
  lines.push('| Id | Server | Status |');
  lines.push('|---|---|---|');
  for (const s of servers) {
    const st = report.servers[s.id];
    lines.push(`| ${s.id} | ${s.title} | ${st?.status ?? 'n/a'}${st?.note ? `: ${mdCell(st.note)}` : ''} |`);
  }
  lines.push('');
  lines.push('## Throughput');
  lines.push('');
  lines.push(
    'req/s = requests / duration of a measured run' +
      (report.meta.rounds > 1 ? `, median of the ${report.meta.rounds} rounds` : '') +
      ' (streaming: SSE events/s); ratios compare the same metric.',
  );
  lines.push('');
  lines.push(
    ...comparisonTable(
      servers,
      workloads,
      report.ratios,
      (w, cell) => `${fmtInt(metric(w.id, cell) ?? 0)}${w.unit === 'events' ? ' ev/s' : ''}`,
      report,
    ),
  );
  lines.push('');
  lines.push(...restMarkdown(report, workloads));
  if (servers.some((s) => s.id === 'ours-latency')) {
    const cells = workloads.map((w) => report.throughput[w.id]?.['ours-latency']).filter(isResult);
    const requests = cells.reduce((n, c) => n + c.requests, 0);
    const issues = cells.reduce((n, c) => n + c.bad + c.errors + c.non2xx, 0);
    lines.push(
      '`ours-latency` is `ours` with its in-memory store behind `withLatency()` from `a2a-express-kit/testing`: every ' +
        'store call (get, create, update, list) waits a random 1-5 ms, part before and part after the call, as a store ' +
        "across a network would. A wait costs no CPU: with 50 connections one request's waits overlap with the others' " +
        'work, so throughput drops most where a request waits for many store calls one after another (streaming: a write ' +
        'per event) and little where it makes one or two (a Message reply makes none); each request still takes longer ' +
        '(see the latencies). The column shows what a slow store costs, and that with 50 concurrent connections and ' +
        'versioned (compare-and-set) writes every request is still answered correctly: ' +
        (cells.length === 0
          ? 'not measured in this run.'
          : issues === 0
            ? `0 bad responses or errors in ${fmtInt(requests)} measured requests.`
            : `⚠ ${fmtInt(issues)} bad responses or errors in ${fmtInt(requests)} measured requests (see below).`),
    );
    lines.push('');
  }
  const durable = servers.filter((s) => s.id === 'ours-sqlite' || s.id === 'ours-redis' || s.id === 'ours-postgres');
  if (durable.length > 0) {
    const status = durable
      .map((s) => {
        const st = report.servers[s.id];
        return st && st.status !== 'ok' ? ` ${s.id}: ${st.status}${st.note ? ` (${oneLine(st.note)})` : ''}.` : '';
      })
      .join('');
    lines.push(
      '`ours-sqlite` is `ours` on `openSqliteTaskStore()` from `a2a-express-kit/sqlite` (better-sqlite3, a fresh file in a ' +
        'temporary directory per server process, default settings); `ours-redis` is `ours` on `createRedisBackend({ url, keyPrefix })` ' +
        'from `a2a-express-kit/redis` spread into the router (task store, event bus and task leases), against a ' +
        "`redis-server` the runner starts on 127.0.0.1 without persistence (`--save '' --appendonly no`); `ours-postgres` is " +
        '`ours` on `createPostgresBackend({ connectionString, schema })` from `a2a-express-kit/postgres` (default pool of 10), ' +
        'against a throwaway PostgreSQL cluster the runner starts on 127.0.0.1 with durability off (`fsync`, `synchronous_commit` ' +
        'and `full_page_writes` off), a schema per server process. Their store is ' +
        "not cleared between rounds, and their CPU per request adds the database server's (redis-server's, or the PostgreSQL " +
        "cluster's processes', read from /proc) to the Node process's: what the deployment pays for. " +
        'sqlite/ours, redis/ours and postgres/ours: what a durable store costs next to the in-memory one ' +
        '(targets: completed Task ≥ 0.70× on SQLite, ≥ 0.50× on Redis and on PostgreSQL).' +
        status,
    );
    lines.push('');
  }
  for (const pair of Object.values(TWO_REPLICAS)) if (servers.some((s) => s.id === pair.id)) lines.push(...twoReplicasNote(report, workloads, pair));
  lines.push(
    'Server CPU per request (µs, median of rounds; lower is better). Server process CPU time (user + system), with the ' +
      "database server's for the Redis and PostgreSQL rows, during the measured run / requests completed; streaming: per request of 12 events. Ratio columns are inverse CPU " +
      'ratios (ours/ceiling = ceiling µs ÷ ours µs), so > 1 means the first is cheaper, as for throughput. Steadier than ' +
      'req/s on a shared machine, and not capped by the load generator sharing the cores.',
  );
  lines.push('');
  lines.push(...comparisonTable(servers, workloads, report.cpuRatios, (_w, cell) => fmtInt(cpuMetric(cell) ?? Number.NaN), report));
  lines.push('');
  lines.push('Latency p50 / p99 (ms, median of rounds):');
  lines.push('');
  lines.push(`| Workload | ${servers.map((s) => s.id).join(' | ')} |`);
  lines.push(`|---|${servers.map(() => '---:').join('|')}|`);
  for (const w of workloads) {
    const row = report.throughput[w.id] ?? {};
    const cells = servers.map((s) => {
      const cell = row[s.id];
      return isResult(cell) ? `${cell.latencyMs.p50} / ${cell.latencyMs.p99}` : '–';
    });
    lines.push(`| ${w.title} | ${cells.join(' | ')} |`);
  }
  const problems: string[] = [];
  for (const w of workloads) {
    for (const s of servers) {
      const cell = report.throughput[w.id]?.[s.id];
      if (isResult(cell) && hasIssues(cell)) {
        problems.push(
          `- ⚠ ${s.id} / ${w.id}: ${cell.bad} bad responses, ${cell.errors} connection errors, ${cell.non2xx} non-2xx (all rounds)` +
            (cell.firstBadSample ? ` (first: \`${cell.firstBadSample.replace(/`/g, "'").slice(0, 160)}\`)` : ''),
        );
      } else if (cell && !isResult(cell) && 'failed' in cell) {
        problems.push(`- ✗ ${s.id} / ${w.id}: ${oneLine(cell.note)}`);
      }
      if (isResult(cell) && cell.failedRounds) {
        problems.push(`- ✗ ${s.id} / ${w.id}: ${cell.failedRounds.length} round(s) failed, median of the others: ${oneLine(cell.failedRounds[0])}`);
      }
    }
  }
  if (problems.length > 0) {
    lines.push('');
    lines.push(...problems);
  }
  lines.push('');
  lines.push(...pairedSection(report.stackPaired ?? {}, (w) => workloadInfo(w).title));
  lines.push('## Targets');
  lines.push('');
  lines.push('| Target | Measured | CPU-based | Threshold | Result |');
  lines.push('|---|---:|---:|---|---|');
  for (const t of report.targets) {
    const measured = t.measured === null ? 'n/a' : t.id.startsWith('memory') || t.id.startsWith('idle') ? fmtBytes(t.measured) : fmtRatio(t.measured);
    const cpuBased = t.cpuMeasured === undefined ? '–' : `${fmtRatio(t.cpuMeasured)}${t.cpuNote ? ` (${t.cpuNote})` : ''}`;
    const result = t.met === null ? '– not measured' : t.met ? '✅ met' : '❌ missed';
    lines.push(`| ${t.description} | ${measured} | ${cpuBased} | ${t.threshold} | ${result}${t.note ? ` (${t.note})` : ''} |`);
  }
  lines.push('');
  lines.push(
    'Measured: the throughput ratio (medians of rounds; the stack overhead: the paired median above), which decides the result. CPU-based: the same comparison ' +
      'on server CPU per request (inverse ratio, > 1 = the first is cheaper); shown for reference, not judged.',
  );
  lines.push('');
  lines.push('## Memory');
  lines.push('');
  lines.push(
    `Fresh server process; warm-up; store cleared; forced GC (\`--expose-gc\`). Then N tasks parked in input-required, ` +
      `store cleared, N more parked and cancelled, store cleared. Engine bytes/task = growth of the used heap ` +
      `(without code space) that survives clearing the store, i.e. state held outside the store, divided by N.` +
      (report.meta.mode !== 'full'
        ? ` ${report.meta.mode === 'quick' ? 'Quick' : 'Smoke'} mode: N is small, so constant JIT noise dominates; indicative only.`
        : ''),
  );
  lines.push('');
  lines.push(
    '| Server | N | Engine B/task, parked | Engine B/task, cancelled | Store B/task (parked / cancelled) | Heap noise | RSS with N parked | RSS at end | Engine objects after (parked / cancelled) |',
  );
  lines.push('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const id of ['sdk', 'ours'] as const) {
    const r = report.memory[id];
    if (!r) continue;
    if (r.status !== 'ok') {
      lines.push(`| ${id} | – | ${r.status}${r.note ? `: ${mdCell(r.note).slice(0, 300)}` : ''} | | | | | | |`);
      continue;
    }
    const objects = (snap: MemorySnapshot | undefined) =>
      snap
        ? Object.entries(snap.stats)
            .map(([k, v]) => `${k}=${v}`)
            .join(', ') || 'n/a'
        : 'n/a';
    lines.push(
      `| ${id} | ${fmtInt(r.n ?? 0)} | ${fmtBytes(r.engineBytesPerParkedTask)} | ${fmtBytes(r.engineBytesPerCancelledTask)} | ` +
        `${fmtBytes(r.storeBytesPerParkedTask)} / ${fmtBytes(r.storeBytesPerCancelledTask)} | ${fmtInt(r.noiseBytes ?? 0)} B | ` +
        `${fmtMiB(r.withParked?.rss)} | ${fmtMiB(r.afterCancelledCleared?.rss)} | ${objects(r.afterParkedCleared)} / ${objects(r.afterCancelledCleared)} |`,
    );
    if (r.failures) lines.push(`| | ⚠ ${r.failures} park/cancel requests did not give the expected state | | | | | | | |`);
  }
  lines.push('');
  lines.push(
    "Engine objects: `liveExecutions` is `router.liveExecutions` (ours); `eventBuses` counts the SDK's " +
      '`DefaultExecutionEventBusManager` entries (kept for input-required tasks, and never released for a task ' +
      'cancelled while parked).',
  );
  lines.push('');
  lines.push(...idleMarkdown(report));
  return lines.join('\n');
}

function idleMarkdown(report: Report): string[] {
  const lines: string[] = [];
  const ids = IDLE_SERVERS.filter((id) => report.idle[id]);
  if (ids.length === 0) return lines;
  lines.push('## Idle streams');
  lines.push('');
  lines.push(
    `Fresh server process; warm-up (streams opened and closed); N tasks parked in input-required and read once (GetTask); forced GC. Then one ` +
      '`SubscribeToTask` SSE stream per parked task, held open by a client that reads the response head and the first ' +
      'event (the task) and nothing more; then every client leaves. Heap B/stream = growth of the used heap (without code ' +
      'space) with the N streams open, divided by N; RSS likewise. Left after close = used heap once every client has ' +
      'left, minus the baseline, per stream: ≈ 0 when nothing leaks. `ceiling` is a bare Express handler that writes one ' +
      "event and holds the response: the floor (Node's socket, HTTP parser, request and response)." +
      (report.meta.idleNote ? ` ⚠ ${report.meta.idleNote}.` : '') +
      (report.meta.mode === 'quick' ? ' Quick mode: N is small; indicative only.' : '') +
      (report.meta.mode === 'smoke'
        ? " Smoke mode: on the throughput phase's servers (no fresh process), N is small; the numbers mean nothing."
        : ''),
  );
  lines.push('');
  lines.push(
    '| Server | N | Heap B/stream | RSS B/stream | Left after close | Heap: baseline → open → closed | Connections open / after | Objects open / after |',
  );
  lines.push('|---|---:|---:|---:|---:|---|---|---|');
  const stats = (snap: MemorySnapshot | undefined) =>
    snap
      ? Object.entries(snap.stats)
          .map(([k, v]) => `${k}=${v}`)
          .join(', ') || '–'
      : 'n/a';
  for (const id of ids) {
    const r = report.idle[id];
    if (r.status !== 'ok') {
      lines.push(`| ${id} | – | ${r.status}${r.note ? `: ${mdCell(r.note).slice(0, 300)}` : ''} | | | | | |`);
      continue;
    }
    const left = r.heapLeftPerStream ?? Number.NaN;
    const leftText = Math.abs(left) <= (r.toleranceBytesPerStream ?? 32) ? `${fmtBytes(left)} (≈ 0)` : `⚠ ${fmtBytes(left)}`;
    lines.push(
      `| ${id} | ${fmtInt(r.n ?? 0)} | ${fmtInt(r.heapBytesPerStream ?? Number.NaN)} B | ${fmtInt(r.rssBytesPerStream ?? Number.NaN)} B | ${leftText} | ` +
        `${fmtMiB(r.baseline?.heapUsed)} → ${fmtMiB(r.withStreams?.heapUsed)} → ${fmtMiB(r.afterClose?.heapUsed)} | ` +
        `${r.withStreams?.connections ?? 'n/a'} / ${r.afterClose?.connections ?? 'n/a'} | ${stats(r.withStreams)} / ${stats(r.afterClose)} |`,
    );
    if (r.failures)
      lines.push(
        `| | ⚠ ${r.failures} streams did not open${r.firstFailure ? ` (first: ${mdCell(r.firstFailure).slice(0, 200)})` : ''} | | | | | | |`,
      );
  }
  lines.push('');
  const ours = report.idle.ours;
  const ceiling = report.idle.ceiling;
  if (ours?.status === 'ok' && ceiling?.status === 'ok') {
    lines.push(
      `Ours above the floor: ${fmtInt((ours.heapBytesPerStream ?? 0) - (ceiling.heapBytesPerStream ?? 0))} B of heap per stream ` +
        "(the subscription, the SSE writer, the request's A2A context and the parsed request). " +
        'Where it goes: `bench/tools/idle-heap-profile.ts` (heap snapshots, objects by constructor).',
    );
    lines.push('');
  }
  lines.push(
    'Objects: `liveObservers` (ours) counts task subscribers and stream observers; `busListeners` (SDK) the listeners on its ' +
      'event buses, one per open subscription. Both must fall back once the clients leave.',
  );
  lines.push('');
  return lines;
}

interface Report {
  meta: {
    date: string;
    mode: Mode;
    node: string;
    cpus: number;
    cpuModel: string;
    connections: number;
    rounds: number;
    warmupSec: number;
    roundWarmupSec: number;
    streamWarmupSec: number;
    durationSec: number;
    memoryN: number;
    /** Idle SSE streams per server (0: phase not run). */
    idleN: number;
    idleNote?: string;
    totalSec: number;
    versions: Record<string, string>;
  };
  servers: Record<string, { status: string; note?: string }>;
  throughput: Record<string, Record<string, Cell>>;
  /** Throughput ratios of the medians. */
  ratios: Record<string, PairRatios>;
  /** Inverse ratios of the median server CPU per request (> 1: the first is cheaper). */
  cpuRatios: Record<string, PairRatios>;
  /** stack/ours from back-to-back pairs (bench/stack-pairs.ts): the stack-overhead target's measure. */
  stackPaired: Record<string, PairedOverhead>;
  targets: Target[];
  memory: Record<string, MemoryPhaseResult>;
  idle: Record<string, IdlePhaseResult>;
}

function version(pkg: string): string {
  try {
    const json = JSON.parse(readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version?: string };
    return json.version ?? '?';
  } catch {
    return '?';
  }
}

// ---------------------------------------------------------------------------------------------
// Main

/** `--long-stream` or `--token-streams` [its options]: that workload alone (bench/<name>.ts), in its own process. */
function runWorkloadScript(name: 'long-stream' | 'token-streams', argv: string[]): Promise<number> {
  const rest = argv.filter((arg) => arg !== `--${name}`);
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench', `${name}.ts`), ...rest], { stdio: 'inherit' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

/** `--slow-readers`: bench/slow-readers-heap.ts in its burst and per-turn modes, each in its own process. */
async function runSlowReaders(): Promise<number> {
  let failed = 0;
  for (const mode of ['burst', 'turns']) {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', path.join(ROOT, 'bench', 'slow-readers-heap.ts'), mode], {
      stdio: 'inherit',
    });
    failed += await new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  }
  return failed > 0 ? 1 : 0;
}

async function main(): Promise<number> {
  if (process.argv.includes('--long-stream')) return runWorkloadScript('long-stream', process.argv.slice(2));
  if (process.argv.includes('--token-streams')) return runWorkloadScript('token-streams', process.argv.slice(2));
  if (process.argv.includes('--slow-readers')) return runSlowReaders();
  const config = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const log = (line: string) => process.stderr.write(`${line}\n`);
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(0)}s`;
  log(`bench: ${config.mode} mode, servers ${config.servers.join(', ')}, workloads ${config.workloads.join(', ')}`);

  const serverInfos = config.throughput ? SERVERS.filter((s) => config.servers.includes(s.id)) : [];
  if (!config.throughput) config.workloads = [];
  const running = new Map<ServerId, RunningServer>();
  // ours-redis and ours-2replicas run on a redis-server of our own, started first (its URL goes to the
  // servers in BENCH_REDIS_URL; each server has its own key prefix, the two replicas share theirs).
  let localRedis: LocalRedis | undefined;
  if (serverInfos.some((s) => s.args.includes('--redis'))) {
    localRedis = await startLocalRedis(log);
    delete process.env.BENCH_REDIS_URL;
    delete process.env.BENCH_REDIS_SKIP;
    if ('url' in localRedis) process.env.BENCH_REDIS_URL = localRedis.url;
    else process.env.BENCH_REDIS_SKIP = localRedis.skip;
    log(`[${elapsed()}] redis-server: ${'url' in localRedis ? localRedis.url : `none (${localRedis.skip}); the Redis servers are skipped`}`);
  }
  // ours-postgres and ours-pg-2replicas: a throwaway PostgreSQL cluster of our own, the same way (BENCH_PG_URL).
  let localPostgres: LocalPostgres | undefined;
  if (serverInfos.some((s) => s.args.includes('--postgres'))) {
    localPostgres = await startLocalPostgres();
    delete process.env.BENCH_PG_URL;
    delete process.env.BENCH_PG_SKIP;
    if ('url' in localPostgres) process.env.BENCH_PG_URL = localPostgres.url;
    else process.env.BENCH_PG_SKIP = localPostgres.skip;
    log(
      `[${elapsed()}] PostgreSQL: ${'url' in localPostgres ? localPostgres.url : `none (${localPostgres.skip}); the PostgreSQL servers are skipped`}`,
    );
  }
  // Started together (nothing is measured yet): tsx start-up of five processes one after another
  // would take several seconds.
  const startedServers = await Promise.all(serverInfos.map((info) => startThroughputServer(info)));
  for (const [i, info] of serverInfos.entries()) {
    const server = startedServers[i];
    running.set(info.id, server);
    const at = server.urls ? server.urls.join(' and ') : server.url;
    log(`[${elapsed()}] ${info.id}: ${server.status}${at ? ` at ${at}` : ''}${server.note ? ` (${server.note})` : ''}`);
    if (server.status !== 'ok') await stopServer(server);
  }

  const memoryIds = config.memory ? (['sdk', 'ours'] as const).filter((id) => config.servers.includes(id)) : [];
  const memoryServers = new Map<'sdk' | 'ours', Promise<RunningServer>>(
    config.earlyMemoryServers ? memoryIds.map((id) => [id, startMemoryServer(SERVERS.find((s) => s.id === id) as ServerInfo)]) : [],
  );

  const state: ThroughputState = {
    config,
    running,
    restarts: new Map(),
    warmed: new WeakMap(),
    log: (line) => log(`[${elapsed()}] ${line}`),
    dbPids: {
      ...(localRedis && 'pid' in localRedis ? { redis: localRedis.pid } : {}),
      ...(localPostgres && 'pid' in localPostgres ? { postgres: localPostgres.pid } : {}),
    },
  };
  const { throughput, pairs } = await throughputPhase(state, serverInfos);
  const pairable = (id: ServerId) => running.get(id)?.status === 'ok';
  if (config.stackPairs > 0 && pairable('ours') && pairable('stack')) {
    const infoOf = (id: ServerId) => serverInfos.find((s) => s.id === id) as ServerInfo;
    const extra = await measureExtraPairs(config.workloads, config.stackPairs, async (server, workload, label) => {
      const outcome = await measureRound(state, infoOf(server), workload, label);
      return isLoadResult(outcome) ? outcome : undefined;
    });
    for (const [workload, more] of extra) pairs.set(workload, [...(pairs.get(workload) ?? []), ...more]);
  }
  const stackPaired: Record<string, PairedOverhead> = {};
  for (const w of config.workloads) {
    const paired = pairedOverhead(pairs.get(w) ?? []);
    if (paired) stackPaired[w] = paired;
  }
  // Smoke mode: the idle-streams phase runs on the throughput servers, which are still running
  // (starting three more processes would double the smoke run); a measurement starts fresh ones.
  const stopRunning = () => Promise.all([...running.values()].map((server) => stopServer(server)));
  const reuseForIdle = config.idleOnThroughputServers && config.idle;
  if (!reuseForIdle) await stopRunning();

  const memory: Record<string, MemoryPhaseResult> = {};
  const jobs: Array<() => Promise<void>> = [];
  if (config.memory) {
    const measureMemory = async (id: 'sdk' | 'ours') => {
      const info = SERVERS.find((s) => s.id === id) as ServerInfo;
      log(`[${elapsed()}] memory phase: ${id}, N = ${config.memoryN}`);
      memory[id] = await memoryPhase(info, config, log, memoryServers.get(id));
      const r = memory[id];
      log(
        `[${elapsed()}] memory ${id}: ${r.status}` +
          (r.status === 'ok'
            ? ` engine ${fmtBytes(r.engineBytesPerParkedTask)}/parked, ${fmtBytes(r.engineBytesPerCancelledTask)}/cancelled, RSS ${fmtMiB(r.withParked?.rss)}`
            : ` ${r.note ?? ''}`),
      );
    };
    jobs.push(...memoryIds.map((id) => () => measureMemory(id)));
  }
  const idle: Record<string, IdlePhaseResult> = {};
  const idleCount = idleStreamCount(config.idleN);
  if (config.idle) {
    if (idleCount.note) log(`idle streams: ${idleCount.note}`);
    const measureIdle = async (id: 'ceiling' | 'sdk' | 'ours') => {
      const info = SERVERS.find((s) => s.id === id) as ServerInfo;
      log(`[${elapsed()}] idle-streams phase: ${id}, N = ${idleCount.n}`);
      const reuse = reuseForIdle ? running.get(id) : undefined;
      idle[id] = await idlePhase(info, config, idleCount.n, idleCount.fdLimit, log, reuse?.status === 'ok' && !reuse.exited() ? reuse : undefined);
      const r = idle[id];
      log(
        `[${elapsed()}] idle ${id}: ${r.status}` +
          (r.status === 'ok'
            ? ` ${fmtBytes(r.heapBytesPerStream)} heap/stream, ${fmtBytes(r.rssBytesPerStream)} RSS/stream, ` +
              `${fmtBytes(r.heapLeftPerStream)}/stream left after close, ${r.n} streams${r.failures ? `, ${r.failures} failures` : ''}`
            : ` ${r.note ?? ''}`),
      );
    };
    jobs.push(...IDLE_SERVERS.filter((id) => config.servers.includes(id)).map((id) => () => measureIdle(id)));
  }
  // Smoke mode: all side by side (each has a fresh server); a measurement: one after the other.
  if (config.concurrentMemory) await Promise.all(jobs.map((job) => job()));
  else for (const job of jobs) await job();
  if (reuseForIdle) await stopRunning();
  if (localRedis && 'stop' in localRedis) await localRedis.stop();
  if (localPostgres && 'stop' in localPostgres) localPostgres.stop();

  const ratios: Report['ratios'] = {};
  const cpuRatios: Report['cpuRatios'] = {};
  for (const w of config.workloads) {
    ratios[w] = pairRatios(w, (wl, s) => metric(wl, throughput[wl]?.[s]));
    cpuRatios[w] = pairRatios(w, (wl, s) => cpuMetric(throughput[wl]?.[s]), true);
  }

  const servers: Report['servers'] = Object.fromEntries(
    serverInfos.map((s) => {
      const r = running.get(s.id);
      const died = state.restarts.get(s.id);
      const note = [r?.note, died ? `restarted after dying ${died.join('; ')}` : undefined].filter(Boolean).join('; ');
      return [s.id, { status: r?.status ?? 'failed', ...(note ? { note } : {}) }];
    }),
  );
  const report: Report = {
    meta: {
      date: new Date().toISOString(),
      mode: config.mode,
      node: process.version,
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown CPU',
      connections: config.connections,
      rounds: config.rounds,
      warmupSec: config.warmupSec,
      roundWarmupSec: config.roundWarmupSec,
      streamWarmupSec: config.streamWarmupSec,
      durationSec: config.durationSec,
      memoryN: config.memoryN,
      idleN: config.idle ? idleCount.n : 0,
      ...(config.idle && idleCount.note ? { idleNote: idleCount.note } : {}),
      totalSec: (Date.now() - started) / 1000,
      versions: {
        express: version('express'),
        '@a2a-js/sdk': version('@a2a-js/sdk'),
        autocannon: version('autocannon'),
      },
    },
    servers,
    throughput,
    ratios,
    cpuRatios,
    stackPaired,
    targets: buildTargets(throughput, memory, idle, config.workloads, config.mode, servers, stackPaired),
    memory,
    idle,
  };

  const md = markdown(report, config);
  mkdirSync(config.outDir, { recursive: true });
  writeFileSync(path.join(config.outDir, 'latest.md'), md);
  writeFileSync(path.join(config.outDir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${md}\n`);
  log(`bench: done in ${elapsed()}; wrote ${path.relative(process.cwd(), path.join(config.outDir, 'latest.md'))} and latest.json`);

  // The benchmark itself must work: a required server that failed (not a skipped optional variant),
  // or a workload that could not run, is an error. Missed targets are not.
  const broken =
    [...running.values()].some((s) => s.status === 'failed' || (s.status === 'skipped' && !OPTIONAL_SERVERS.includes(s.info.id))) ||
    Object.values(throughput).some((row) => Object.values(row).some((cell) => 'failed' in cell || 'failedRounds' in cell)) ||
    Object.values(memory).some((r) => r.status !== 'ok') ||
    Object.values(idle).some((r) => r.status !== 'ok');
  return broken ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`bench failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  },
);
