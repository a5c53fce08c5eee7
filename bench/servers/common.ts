/**
 * Shared plumbing of the benchmark servers: the private `/__bench` control endpoints and
 * listening on an ephemeral loopback port (announced as `READY <port>` on stdout).
 */
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import express from 'express';
import type { Express } from 'express';

export interface BenchControl {
  /** Number of tasks held by the task store (undefined when the server has no store). */
  storeSize?: () => number;
  /** Drops every task held by the task store. */
  clearStore?: () => void;
  /** Extra numbers reported with every memory snapshot (live executions, event buses...). */
  stats?: () => Record<string, number>;
}

export interface MemorySnapshot {
  heapUsed: number;
  heapTotal: number;
  rss: number;
  external: number;
  arrayBuffers: number;
  storeSize: number | null;
  stats: Record<string, number>;
  /** used bytes per V8 heap space (new_space, old_space, code_space, ...). */
  spaces: Record<string, number>;
  /** Open TCP connections of the server, without the one asking for this snapshot. */
  connections: number;
}

/** The listening server (set by listen()), for its connection count. */
let httpServer: Server | undefined;

function openConnections(): Promise<number> {
  const server = httpServer;
  if (!server) return Promise.resolve(0);
  return new Promise((resolve) => server.getConnections((error, count) => resolve(error ? -1 : Math.max(0, count - 1))));
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Forces full GCs (needs --expose-gc) and lets finalizers / weak references settle in between. */
export async function settleHeap(): Promise<boolean> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== 'function') return false;
  for (let i = 0; i < 4; i += 1) {
    gc();
    await tick();
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  gc();
  return true;
}

export async function memorySnapshot(control: BenchControl): Promise<MemorySnapshot & { gc: boolean }> {
  const gc = await settleHeap();
  const mem = process.memoryUsage();
  return {
    gc,
    heapUsed: mem.heapUsed,
    heapTotal: mem.heapTotal,
    rss: mem.rss,
    external: mem.external,
    arrayBuffers: mem.arrayBuffers,
    storeSize: control.storeSize ? control.storeSize() : null,
    stats: control.stats ? control.stats() : {},
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_used_size])),
    connections: await openConnections(),
  };
}

let heapSnapshots = 0;

/**
 * Mounts the private control endpoints. Call before mounting the agent so that no A2A middleware
 * (auth, tenant, ...) sees them.
 *   POST /__bench/memory       -> forced GC, then process.memoryUsage() + store size + stats
 *   POST /__bench/clear-store  -> drops every task of the store, returns the size it had
 *   GET  /__bench/connections  -> open TCP connections, without the one asking (no GC)
 *   POST /__bench/heap-snapshot -> forced GC, then a V8 heap snapshot written to the temporary
 *                                 directory; answers its path (bench/tools/idle-heap-profile.ts)
 */
export function mountBenchControl(app: Express, control: BenchControl): void {
  const router = express.Router();
  router.post('/memory', (_req, res, next) => {
    memorySnapshot(control).then((snapshot) => res.json(snapshot), next);
  });
  router.post('/clear-store', (_req, res) => {
    const before = control.storeSize ? control.storeSize() : null;
    if (control.clearStore) control.clearStore();
    res.json({ cleared: before, supported: Boolean(control.clearStore) });
  });
  router.post('/heap-snapshot', (_req, res, next) => {
    settleHeap().then(() => {
      heapSnapshots += 1;
      const file = path.join(os.tmpdir(), `a2a-bench-${process.pid}-${heapSnapshots}.heapsnapshot`);
      res.json({ file: v8.writeHeapSnapshot(file) });
    }, next);
  });
  // Open connections (without this request's), cheaply: no GC, for polling until clients are gone.
  router.get('/connections', (_req, res, next) => {
    openConnections().then((connections) => res.json({ connections }), next);
  });
  // Server CPU time so far (µs): CPU per request is steadier than req/s on a shared machine.
  router.get('/cpu', (_req, res) => {
    const usage = process.cpuUsage();
    res.json({ cpu: usage.user + usage.system });
  });
  app.use('/__bench', router);
}

/** Listens on 127.0.0.1:0 and prints `READY <port>`; exits on SIGTERM/SIGINT, or when stdin
 * closes if BENCH_WATCH_STDIN=1 (set by the runner). */
export function listen(app: Express, name: string): void {
  const server = app.listen(0, '127.0.0.1', () => {
    httpServer = server;
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    process.stdout.write(`READY ${port}\n`);
  });
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 61_000;
  let closing = false;
  const stop = (why: string) => {
    if (closing) return;
    closing = true;
    process.stderr.write(`[${name}] stopping: ${why}\n`);
    server.close();
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 200).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  if (process.env.BENCH_WATCH_STDIN === '1') {
    // The runner keeps our stdin open as a pipe: when the runner dies, stdin ends and we must not linger.
    process.stdin.on('end', () => stop('stdin ended (runner gone)'));
    process.stdin.on('close', () => stop('stdin closed (runner gone)'));
    process.stdin.resume();
  }
  process.on('uncaughtException', (error) => {
    process.stderr.write(`[${name}] uncaught exception: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}

export function hasFlag(flag: string): boolean {
  return process.argv.includes(flag);
}
