/**
 * One replica of the example agent on a shared Redis (task store, event bus, task leases): run
 * two or more, each on its own PORT, behind any load balancer; any of them serves any request for
 * any task. `REDIS_URL` (default redis://127.0.0.1:6379), `PORT` (default 3000), `HOST`,
 * `NAME` (shown in the log). SIGTERM/SIGINT: the router closes, then the Redis connections.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 PORT=3001 NAME=a npx tsx examples/replicas/replica.ts
 *   REDIS_URL=redis://127.0.0.1:6379 PORT=3002 NAME=b npx tsx examples/replicas/replica.ts
 */
import { createRedisBackend } from 'a2a-express-kit/redis';
import { createApp } from '../basic/app';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const name = process.env.NAME ?? `replica-${process.pid}`;

async function main(): Promise<void> {
  const redis = await createRedisBackend({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
  const { app, agent } = createApp(redis.options);
  const server = app.listen(port, host, () => {
    const address = server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    // eslint-disable-next-line no-console
    console.log(`${name}: A2A agent listening: http://${host}:${actualPort}/agent (Redis store, bus and leases)`);
  });
  // Runs once however many signals arrive (a group signal relayed by npm or tsx can come twice).
  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> =>
    (stopping ??= (async () => {
      await agent.close({ graceMs: 10_000 });
      await redis.close();
      server.close(() => process.exit(0));
      server.closeIdleConnections();
    })());
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGINT', () => void shutdown());
}

main().catch((error: unknown) => {
  // eslint-disable-next-line no-console
  console.error(error);
  process.exit(1);
});
