/**
 * One replica of the example agent on a shared Redis or PostgreSQL (task store, event bus, task
 * leases): run two or more, each on its own PORT, behind any load balancer; any of them serves any
 * request for any task. `REDIS_URL` (default redis://127.0.0.1:6379), or `A2A_STORE=postgres` with
 * `A2A_PG_URL` (default postgres://127.0.0.1:5432/postgres) and `A2A_PG_SCHEMA` (default public);
 * `PORT` (default 3000), `HOST`, `NAME` (shown in the log). SIGTERM/SIGINT: the router closes,
 * then the database connections.
 *
 *   REDIS_URL=redis://127.0.0.1:6379 PORT=3001 NAME=a npx tsx examples/replicas/replica.ts
 *   A2A_STORE=postgres A2A_PG_URL=postgres://127.0.0.1/agent PORT=3002 NAME=b npx tsx examples/replicas/replica.ts
 */
import { createPostgresBackend } from 'a2a-express-kit/postgres';
import { createRedisBackend } from 'a2a-express-kit/redis';
import { createApp } from '../basic/app';

const onPostgres = process.env.A2A_STORE === 'postgres';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const name = process.env.NAME ?? `replica-${process.pid}`;

async function main(): Promise<void> {
  const backend = onPostgres
    ? await createPostgresBackend({
        connectionString: process.env.A2A_PG_URL ?? 'postgres://127.0.0.1:5432/postgres',
        schema: process.env.A2A_PG_SCHEMA,
      })
    : await createRedisBackend({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' });
  const { app, agent } = createApp(backend.options);
  const server = app.listen(port, host, () => {
    const address = server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    // eslint-disable-next-line no-console
    console.log(`${name}: A2A agent listening: http://${host}:${actualPort}/agent (${onPostgres ? 'PostgreSQL' : 'Redis'} store, bus and leases)`);
  });
  // Runs once however many signals arrive (a group signal relayed by npm or tsx can come twice).
  let stopping: Promise<void> | undefined;
  const shutdown = (): Promise<void> =>
    (stopping ??= (async () => {
      await agent.close({ graceMs: 10_000 });
      await backend.close();
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
