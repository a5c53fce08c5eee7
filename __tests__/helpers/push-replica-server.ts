/**
 * One replica with durable push on a shared Redis, for the push take-over test. Run with
 * `node --import tsx __tests__/helpers/push-replica-server.ts` and env REDIS_URL, KEY_PREFIX, NAME,
 * LEASE_TTL_MS. Prints `READY <port>`, then a JSON line per committed event
 * (`{"kind":"event","replica","taskId","event"}`) and `{"kind":"holding","taskId"}` when a turn
 * waits. Webhooks on 127.0.0.1 are allowed; retries are quick and many.
 *
 * Agent: `park` asks for input; a follow-up `work:N` publishes N progress events, then holds until
 * aborted.
 */
import express from 'express';
import { createA2ARouter, silentLogger, type AgentExecutor } from 'a2a-express-kit';
import { createRedisBackend } from 'a2a-express-kit/redis';
import { testCard } from './fixtures';

const name = process.env.NAME ?? 'replica';
const line = (value: unknown): void => void process.stdout.write(`${JSON.stringify(value)}\n`);

const agent: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'park') return events.requireInput('more?');
    const steps = Number(/^work:(\d+)$/.exec(ctx.userText)?.[1] ?? 0);
    await events.start('working');
    for (let i = 1; i <= steps; i++) await events.progress(`step ${i}`);
    line({ kind: 'holding', taskId: ctx.taskId });
    await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
  },
};

async function main(): Promise<void> {
  const backend = await createRedisBackend({
    url: process.env.REDIS_URL!,
    keyPrefix: process.env.KEY_PREFIX,
    leaseTtlMs: Number(process.env.LEASE_TTL_MS ?? 10_000),
    logger: silentLogger,
  });
  const router = createA2ARouter({
    agentCard: testCard,
    executor: agent,
    logger: silentLogger,
    ...backend.options,
    pushNotifications: { ...backend.push, allow: ['127.0.0.1'], maxAttempts: 20, retryBaseMs: 100, retryMaxMs: 200 },
    onTaskEvent: (info) => line({ kind: 'event', replica: name, taskId: info.taskId, event: info.event }),
    callContext: (req) => ({ caller: { id: req.get('x-user') ?? 'anonymous', authenticated: true }, tenant: req.get('x-tenant') }),
  });
  const app = express();
  app.use('/agent', router);
  const server = app.listen(0, '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`READY ${typeof address === 'object' && address ? address.port : 0}\n`);
  });
  process.once('SIGTERM', () => {
    void (async () => {
      await router.close({ graceMs: 100 });
      await backend.close();
      server.closeAllConnections();
      server.close(() => process.exit(0));
    })();
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
