/**
 * A child-process agent server with push notifications on the durable SQLite stores, for the push
 * crash test. Run it with `node --import tsx __tests__/helpers/push-sqlite-server.ts <file>`; it
 * prints `READY <port>` once it listens on 127.0.0.1, then a JSON line per committed event
 * (`{"kind":"event","taskId","event"}`, in commit order) and `{"kind":"holding","taskId"}` when a turn
 * waits. Webhooks on 127.0.0.1 are allowed; retries are quick and many (RETRY_MS, default 100).
 *
 * Agent: `park` asks for input; a follow-up `work:N` publishes N progress events, then holds until
 * aborted (the process is killed meanwhile).
 */
import express from 'express';
import type { AddressInfo } from 'node:net';
import { createA2ARouter, silentLogger, type AgentExecutor } from 'a2a-express-kit';
import { openSqliteTaskStore, sqlitePushStores } from 'a2a-express-kit/sqlite';
import { testCard } from './fixtures';

const file = process.argv[2];
const retryMs = Number(process.env.RETRY_MS ?? 100);
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
  if (!file) throw new Error('usage: push-sqlite-server.ts <database file>');
  const taskStore = await openSqliteTaskStore({ path: file });
  const router = createA2ARouter({
    agentCard: testCard,
    executor: agent,
    taskStore,
    logger: silentLogger,
    pushNotifications: { ...sqlitePushStores(taskStore), allow: ['127.0.0.1'], maxAttempts: 20, retryBaseMs: retryMs, retryMaxMs: retryMs * 2 },
    onTaskEvent: (info) => line({ kind: 'event', taskId: info.taskId, event: info.event }),
    callContext: (req) => ({ caller: { id: req.get('x-user') ?? 'anonymous', authenticated: true }, tenant: req.get('x-tenant') }),
  });
  const app = express();
  app.use('/agent', router);
  const server = app.listen(0, '127.0.0.1', () => {
    process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () => {
    void (async () => {
      await router.close({ graceMs: 100 });
      await taskStore.close();
      server.closeAllConnections();
      server.close(() => process.exit(0));
    })();
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
