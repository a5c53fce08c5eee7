/**
 * One replica for the multi-process tests: an Express app with the router on a shared Redis
 * (store, bus, leases), listening on 127.0.0.1 on a port of its own. Run with
 * `node --import tsx __tests__/helpers/replica-server.ts` and env REDIS_URL, KEY_PREFIX, NAME,
 * LEASE_TTL_MS (or PG_URL and PG_SCHEMA instead of REDIS_URL and KEY_PREFIX: on PostgreSQL). It prints `READY <port>`, then one JSON line per agent call
 * (`{"replica","hook","taskId","requestId","text"}`; a cancel's text is `running: <ctx.running>`), so a
 * test sees which process ran what, in which request's context. The caller is the `x-user` header, the tenant `x-tenant`.
 *
 * Agent behaviour by message text: `park` asks for input; `steps:N` publishes N progress events
 * 15 ms apart, then completes; `hold` works until its signal fires; `stubborn` ignores its signal
 * (it reports `aborted` when it fires) and stays silent until POST /release/<taskId>, then
 * publishes once more (reporting `late-write-refused` or `late-write-accepted`); anything else (a
 * follow-up) works 50 ms and asks for input again, naming the message. GET /gauges: what it holds
 * for tasks.
 */
import express from 'express';
import { createA2ARouter, getA2ARequestContext, silentLogger, type AgentExecutor } from 'a2a-express-kit';
import { createRedisBackend } from 'a2a-express-kit/redis';
import { createPostgresBackend } from 'a2a-express-kit/postgres';
import { testCard } from './fixtures';

const name = process.env.NAME ?? 'replica';
const report = (hook: string, taskId: string, text: string): void => {
  const requestId = getA2ARequestContext().requestId;
  process.stdout.write(`${JSON.stringify({ replica: name, hook, taskId, requestId, text })}\n`);
};
const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** The `stubborn` turns waiting for POST /release/<taskId>. */
const held = new Map<string, () => void>();

const executor: AgentExecutor = {
  async execute(ctx, events) {
    report('execute', ctx.taskId, ctx.userText);
    const text = ctx.userText;
    if (text === 'park') {
      await events.start();
      return events.requireInput('what next?');
    }
    if (text.startsWith('steps:')) {
      await events.start();
      const steps = Number(text.slice(6));
      for (let i = 1; i <= steps; i++) {
        await pause(15);
        await events.progress(`step ${i}`);
      }
      return events.complete('all steps done');
    }
    if (text === 'hold') {
      await events.start('holding');
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      // A late write after the cancel: the store refuses it (the task is CANCELED).
      await events.progress('late').catch(() => report('late-write-refused', ctx.taskId, ''));
      return;
    }
    if (text === 'stubborn') {
      await events.start('stubborn');
      ctx.signal.addEventListener('abort', () => report('aborted', ctx.taskId, ''), { once: true });
      await new Promise<void>((resolve) => held.set(ctx.taskId, resolve));
      held.delete(ctx.taskId);
      await events.progress('late').then(
        () => report('late-write-accepted', ctx.taskId, ''),
        () => report('late-write-refused', ctx.taskId, ''),
      );
      return;
    }
    await events.start();
    await pause(50);
    return events.requireInput(`handled ${text} on ${name}`);
  },
  cancel(ctx) {
    report('cancel', ctx.taskId, `running: ${ctx.running}`);
  },
};

async function main(): Promise<void> {
  const leaseTtlMs = Number(process.env.LEASE_TTL_MS ?? 10_000);
  const backend = process.env.PG_URL
    ? await createPostgresBackend({ connectionString: process.env.PG_URL, schema: process.env.PG_SCHEMA, leaseTtlMs, logger: silentLogger })
    : await createRedisBackend({ url: process.env.REDIS_URL!, keyPrefix: process.env.KEY_PREFIX, leaseTtlMs });
  const app = express();
  const router = createA2ARouter({
    agentCard: testCard,
    executor,
    logger: silentLogger,
    tracing: {},
    callContext: (req) => ({
      caller: { id: String(req.headers['x-user'] ?? 'nobody'), authenticated: true },
      tenant: String(req.headers['x-tenant'] ?? 'acme'),
    }),
    ...backend.options,
  });
  // What this replica holds for tasks right now: all 0 once every task parked or ended.
  app.get('/gauges', (_req, res) => {
    res.json({
      liveExecutions: router.liveExecutions,
      liveObservers: router.liveObservers,
      followedTasks: backend.eventBus.followedTasks,
      heldLeases: backend.taskLeases.heldCount,
    });
  });
  app.post('/release/:taskId', (req, res) => {
    const release = held.get(req.params.taskId);
    release?.();
    res.json({ released: release !== undefined });
  });
  app.use('/agent', router);
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`READY ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
