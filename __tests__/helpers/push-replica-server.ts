/**
 * One replica with durable push on a shared Redis, for the push take-over test. Run with
 * `node --import tsx __tests__/helpers/push-replica-server.ts` and env REDIS_URL, KEY_PREFIX, NAME,
 * LEASE_TTL_MS (or PG_URL and PG_SCHEMA instead of REDIS_URL and KEY_PREFIX: on PostgreSQL). Prints `READY <port>`, then a JSON line per committed event
 * (`{"kind":"event","replica","taskId","event"}`) and `{"kind":"holding","taskId"}` when a turn
 * waits. Webhooks on 127.0.0.1 are allowed; retries are quick and many.
 *
 * Agent: parkThenWorkAgent (child-main.ts); with env RESUME, its resume() is resumeThenComplete.
 */
import { createA2ARouter, silentLogger } from 'a2a-express-kit';
import { createRedisBackend } from 'a2a-express-kit/redis';
import { createPostgresBackend } from 'a2a-express-kit/postgres';
import { headerCallContext, printLine, pushAgent, runMain, serveAgent } from './child-main';
import { testCard } from './fixtures';

const name = process.env.NAME ?? 'replica';

runMain(async () => {
  const leaseTtlMs = Number(process.env.LEASE_TTL_MS ?? 10_000);
  const backend = process.env.PG_URL
    ? await createPostgresBackend({ connectionString: process.env.PG_URL, schema: process.env.PG_SCHEMA, leaseTtlMs, logger: silentLogger })
    : await createRedisBackend({ url: process.env.REDIS_URL!, keyPrefix: process.env.KEY_PREFIX, leaseTtlMs, logger: silentLogger });
  const router = createA2ARouter({
    agentCard: testCard,
    executor: pushAgent(),
    logger: silentLogger,
    ...backend.options,
    pushNotifications: { ...backend.push, allow: ['127.0.0.1'], maxAttempts: 20, retryBaseMs: 100, retryMaxMs: 200 },
    onTaskEvent: (info) => printLine({ kind: 'event', replica: name, taskId: info.taskId, event: info.event }),
    callContext: headerCallContext,
  });
  serveAgent(router, () => backend.close());
});
