/**
 * Ours: `createA2ARouter` with the in-memory store. With `--stack`, the full middleware stack runs in
 * front of it (tracing, auth with a pre-verified bearer, tenant, security headers). With `--latency`,
 * the store sits behind `withLatency` from `a2a-express-kit/testing` (every store call waits a random
 * 1-5 ms, as a store across a network would): what a slow store costs, and that nothing breaks.
 * With `--sqlite`, the store is `openSqliteTaskStore` from `a2a-express-kit/sqlite` on a fresh file in
 * a temporary directory (removed at exit). With `--redis`, the router runs on `createRedisBackend()`
 * from `a2a-express-kit/redis` (task store, event bus and task leases, spread via `...backend.options`)
 * against the Redis at BENCH_REDIS_URL (the runner starts its own redis-server), under the key prefix
 * BENCH_REDIS_KEY_PREFIX when set (the replicas of ours-2replicas share one), else one of its own;
 * without BENCH_REDIS_URL it prints `SKIP <reason>` (BENCH_REDIS_SKIP, when set) instead of `READY`.
 * With `--postgres`, the same on `createPostgresBackend()` from `a2a-express-kit/postgres` against
 * BENCH_PG_URL, in the schema BENCH_PG_SCHEMA (the replicas of ours-pg-2replicas share one) or one of
 * its own; without BENCH_PG_URL it prints `SKIP <reason>` (BENCH_PG_SKIP).
 * With `--traces`, the router's `traces` option is on: an SDK tracer provider (async-local-storage
 * context, a batch processor whose exporter drops the spans) records every span the kit starts,
 * as an app exporting to a collector would, less the export itself.
 *
 * It loads the built package from dist/ (run `npm run build` first; `npm run bench` does), or from
 * the directory in BENCH_KIT_DIST (a build of another revision, e.g. to compare before/after a change).
 * Prints `READY <port>` when listening.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import express from 'express';
import type { Express, Request, RequestHandler } from 'express';
import { hasFlag, listen, mountBenchControl } from './common.js';
import { BENCH_BEARER, BENCH_TENANT_HEADER, STREAM_PROGRESS_UPDATES } from '../workloads.js';

type Kit = typeof import('../../lib/index.js');
type Testing = typeof import('../../lib/testing/index.js');
type Sqlite = typeof import('../../lib/sqlite.js');
type Redis = typeof import('../../lib/redis.js');
type Postgres = typeof import('../../lib/postgres.js');
type TaskStore = import('../../lib/testing/index.js').TaskStore;

interface BenchEvents {
  reply(text: string): Promise<void>;
  start(text?: string): Promise<void>;
  progress(text: string): Promise<void>;
  requireInput(text: string): Promise<void>;
  complete(text?: string): Promise<void>;
}

interface BenchContext {
  userText: string;
  task: unknown;
}

const executor = {
  // Same contract as the SDK server's cancelTask: a parked task has no running work, so the agent
  // publishes CANCELED right away.
  async cancel(_ctx: unknown, events: { canceled(text?: string): Promise<void> }): Promise<void> {
    await events.canceled();
  },
  async execute(ctx: BenchContext, events: BenchEvents): Promise<void> {
    if (ctx.task) {
      // Follow-up on a parked task (turn 2 of the two-turn workload).
      await events.complete('done');
      return;
    }
    switch (ctx.userText) {
      case 'message':
        await events.reply('pong');
        return;
      case 'stream':
        await events.start();
        for (let i = 0; i < STREAM_PROGRESS_UPDATES; i += 1) await events.progress(`step ${i + 1}`);
        await events.complete('done');
        return;
      case 'input':
        await events.start();
        await events.requireInput('need more input');
        return;
      default:
        await events.start();
        await events.complete('done');
    }
  },
};

const agentCard = {
  name: 'bench agent (a2a-express-kit)',
  description: 'Benchmark agent',
  version: '1.0.0',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'bench', name: 'bench', description: 'benchmark skill', tags: ['bench'] }],
};

/**
 * The full middleware stack, in the kit's documented order (security → tracing → auth → tenant):
 * helmet headers + body limit, request id / trace context, a bearer accepted by a verifier that
 * does no crypto (we measure the plumbing, not JWT verification), tenant from a header.
 */
function buildStack(kit: Kit): RequestHandler[] {
  const expected = `Bearer ${BENCH_BEARER}`;
  const user = kit.fromVerify((req: Request) =>
    req.headers.authorization === expected ? { id: 'bench-user', claims: { sub: 'bench-user' } } : false,
  );
  return [kit.a2aSecurity(), kit.a2aTracing(), kit.a2aAuth({ user }), kit.a2aTenant({ from: (req: Request) => req.get(BENCH_TENANT_HEADER) })];
}

async function main(): Promise<void> {
  // The built package (npm run bench builds it first): what users run, not the TypeScript sources.
  const distDir = process.env.BENCH_KIT_DIST;
  const distFile = (name: string) => (distDir ? pathToFileURL(path.resolve(distDir, name)).href : `../../dist/${name}`);
  const distPath = distFile('index.mjs');
  const kit = (await import(distPath)) as Kit;
  const taskStore = new kit.InMemoryTaskStore();
  const stack = hasFlag('--stack') ? buildStack(kit) : [];
  let routerStore: TaskStore = taskStore;
  if (hasFlag('--latency')) {
    // The built `a2a-express-kit/testing` entry, like the kit itself. Size and clear still go to the
    // inner store: the control endpoints must not wait.
    const testingPath = distFile('testing.mjs');
    const testing = (await import(testingPath)) as Testing;
    routerStore = testing.withLatency(taskStore, { minMs: 1, maxMs: 5 });
  }
  let storeOptions: Record<string, unknown> = { taskStore: routerStore };
  let variant = hasFlag('--stack') ? 'ours+stack' : hasFlag('--latency') ? 'ours+latency' : 'ours';
  /** The in-memory store's size and clear (the control endpoints); none for the durable stores. */
  let control: { storeSize?: () => number; clearStore?: () => void } = {
    storeSize: () => taskStore.size,
    clearStore: () => taskStore.clear(),
  };
  if (hasFlag('--sqlite')) {
    // A fresh database file per server process, in a directory of its own (the -wal/-shm files go there too).
    const dir = mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-sqlite-'));
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
    const sqlite = (await import(distFile('sqlite.mjs'))) as Sqlite;
    storeOptions = { taskStore: await sqlite.openSqliteTaskStore({ path: path.join(dir, 'tasks.db') }) };
    variant = 'ours+sqlite';
    control = {};
  } else if (hasFlag('--redis')) {
    const url = process.env.BENCH_REDIS_URL;
    if (!url) {
      process.stdout.write(`SKIP ${process.env.BENCH_REDIS_SKIP || 'no Redis to run on (BENCH_REDIS_URL not set)'}\n`);
      return;
    }
    const redis = (await import(distFile('redis.mjs'))) as Redis;
    // A prefix of its own per process (a restarted server never sees an earlier one's keys), or the
    // one in BENCH_REDIS_KEY_PREFIX: the replicas of ours-2replicas share theirs (the same tasks).
    const keyPrefix = process.env.BENCH_REDIS_KEY_PREFIX || `a2a-bench:${process.pid.toString(36)}-${Math.random().toString(36).slice(2, 8)}:`;
    const backend = await redis.createRedisBackend({ url, keyPrefix });
    storeOptions = { ...backend.options };
    variant = 'ours+redis';
    control = {};
  } else if (hasFlag('--postgres')) {
    const url = process.env.BENCH_PG_URL;
    if (!url) {
      process.stdout.write(`SKIP ${process.env.BENCH_PG_SKIP || 'no PostgreSQL to run on (BENCH_PG_URL not set)'}\n`);
      return;
    }
    const postgres = (await import(distFile('postgres.mjs'))) as Postgres;
    // A schema of its own per process, or the one the replicas of ours-pg-2replicas share.
    const schema = process.env.BENCH_PG_SCHEMA || `bench_${process.pid.toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
    const backend = await postgres.createPostgresBackend({ connectionString: url, schema });
    storeOptions = { ...backend.options };
    variant = 'ours+postgres';
    control = {};
  }
  const traces = hasFlag('--traces') ? await benchTraces() : undefined;
  if (traces) variant += '+traces';
  const router = kit.createA2ARouter({
    agentCard,
    executor: executor as never,
    ...(storeOptions as { taskStore: TaskStore }),
    ...(traces ? { traces } : {}),
    // The inspector's cost when on (its per-request path check and engine listener; nobody opens it).
    ...(hasFlag('--inspector') ? { inspector: true, logger: { debug() {}, info() {}, warn() {}, error: console.error } } : {}),
  });

  const app: Express = express();
  mountBenchControl(app, {
    ...control,
    // liveObservers: blocking sends, streams and task subscribers (each idle stream is one).
    stats: () => ({ liveExecutions: router.liveExecutions, ...(router.liveObservers === undefined ? {} : { liveObservers: router.liveObservers }) }),
  });
  if (stack.length > 0) app.use('/', ...stack);
  app.use('/', router);
  listen(app, variant);
}

/** The `traces` option of `--traces`: the OpenTelemetry SDK recording every span, exporting none. */
async function benchTraces() {
  const api = await import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks');
  const { BasicTracerProvider, BatchSpanProcessor } = await import('@opentelemetry/sdk-trace-base');
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const dropAll = { export: (_spans: unknown[], done: (result: { code: 0 }) => void) => done({ code: 0 }), shutdown: async () => {} };
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropAll)] });
  return { api, tracer: provider.getTracer('a2a-express-kit') };
}

main().catch((error: unknown) => {
  process.stderr.write(`ours: startup failed (is dist/ built?): ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
