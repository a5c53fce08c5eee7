/**
 * Ours: `createA2ARouter` with the in-memory store. With `--stack`, the full middleware stack runs in
 * front of it (tracing, auth with a pre-verified bearer, tenant, security headers).
 *
 * Prints `READY <port>` when listening, or `SKIP <reason>` and exits 0 when the requested variant
 * cannot be built with the current lib (e.g. the middlewares are not exported yet).
 */
import express from 'express';
import type { Express, Request, RequestHandler } from 'express';
import { hasFlag, listen, mountBenchControl } from './common.js';
import { BENCH_BEARER, BENCH_TENANT_HEADER, STREAM_PROGRESS_UPDATES } from '../workloads.js';

type Lib = Record<string, unknown>;

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

function skip(reason: string): never {
  process.stdout.write(`SKIP ${reason.replace(/\s+/g, ' ')}\n`);
  process.exit(0);
}

function factory(lib: Lib, name: string): (...args: unknown[]) => unknown {
  const value = lib[name];
  if (typeof value !== 'function') skip(`${name} is not exported from lib/index.ts yet`);
  return value as (...args: unknown[]) => unknown;
}

function asHandlers(value: unknown, name: string): RequestHandler[] {
  const list = Array.isArray(value) ? value.flat() : [value];
  if (!list.every((h) => typeof h === 'function')) skip(`${name}(...) did not return Express middleware`);
  return list as RequestHandler[];
}

/**
 * The full middleware stack, in the kit's documented order (security → tracing → auth → tenant):
 * helmet headers + body limit, request id / trace context, a bearer accepted by a verifier that
 * does no crypto (we measure the plumbing, not JWT verification), tenant from a header.
 */
function buildStack(lib: Lib): RequestHandler[] {
  const security = factory(lib, 'a2aSecurity');
  const tracing = factory(lib, 'a2aTracing');
  const auth = factory(lib, 'a2aAuth');
  const tenant = factory(lib, 'a2aTenant');
  const fromVerify = factory(lib, 'fromVerify');
  const expected = `Bearer ${BENCH_BEARER}`;
  try {
    const user = fromVerify((req: Request) =>
      req.headers.authorization === expected ? { id: 'bench-user', claims: { sub: 'bench-user' } } : false,
    );
    return [
      ...asHandlers(security(), 'a2aSecurity'),
      ...asHandlers(tracing(), 'a2aTracing'),
      ...asHandlers(auth({ user }), 'a2aAuth'),
      ...asHandlers(tenant({ from: (req: Request) => req.headers[BENCH_TENANT_HEADER] }), 'a2aTenant'),
    ];
  } catch (error) {
    skip(`could not build the middleware stack: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function main(): Promise<void> {
  let lib: Lib;
  try {
    lib = (await import('../../lib/index.js')) as unknown as Lib;
  } catch (error) {
    skip(`lib/index.ts cannot be loaded: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  }
  const createA2ARouter = factory(lib, 'createA2ARouter');
  const InMemoryTaskStore = lib.InMemoryTaskStore as (new () => { size?: number; clear?: () => void }) | undefined;
  if (typeof InMemoryTaskStore !== 'function') skip('InMemoryTaskStore is not exported from lib/index.ts yet');
  const taskStore = new InMemoryTaskStore();
  const stack = hasFlag('--stack') ? buildStack(lib) : [];

  const router = createA2ARouter({ agentCard, executor, taskStore }) as RequestHandler & { liveExecutions?: number };

  const app: Express = express();
  mountBenchControl(app, {
    storeSize: () => (typeof taskStore.size === 'number' ? taskStore.size : -1),
    clearStore: typeof taskStore.clear === 'function' ? () => taskStore.clear?.() : undefined,
    stats: () => ({ liveExecutions: typeof router.liveExecutions === 'number' ? router.liveExecutions : -1 }),
  });
  if (stack.length > 0) app.use('/', ...stack);
  app.use('/', router);
  listen(app, hasFlag('--stack') ? 'ours+stack' : 'ours');
}

main().catch((error: unknown) => {
  skip(`startup failed: ${error instanceof Error ? error.message : String(error)}`);
});
