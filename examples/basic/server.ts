/**
 * `npm start`: runs the example (PORT, HOST; default 127.0.0.1:3000) on the task store A2A_STORE
 * names: `sqlite` (the default; the file A2A_SQLITE_FILE, default ./data/a2a-tasks.sqlite),
 * `memory`, or `redis` (REDIS_URL). SIGTERM or SIGINT shut it down gracefully: running turns get
 * SHUTDOWN_GRACE_MS (default 10 s) to finish, open streams end after their last event, the store
 * is closed, then the process exits.
 */
import type { A2ARouterOptions } from 'a2a-express-kit';
import { createApp } from './app';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const graceMs = Number(process.env.SHUTDOWN_GRACE_MS ?? 10_000);

/** The router options that pick the store (and, for Redis, the bus and leases), and how to close them. */
interface Backend {
  readonly options: Pick<A2ARouterOptions, 'taskStore' | 'eventBus' | 'taskLeases'>;
  readonly label: string;
  close(): Promise<void>;
}

async function openBackend(kind: string): Promise<Backend> {
  switch (kind) {
    case 'sqlite': {
      // Loaded here, so `A2A_STORE=memory` runs without better-sqlite3 installed.
      const { openSqliteTaskStore } = await import('a2a-express-kit/sqlite');
      const file = process.env.A2A_SQLITE_FILE ?? './data/a2a-tasks.sqlite';
      const taskStore = await openSqliteTaskStore({ path: file });
      return { options: { taskStore }, label: `sqlite (${file})`, close: () => taskStore.close() };
    }
    case 'memory':
      // The library's default store: tasks live as long as the process.
      return { options: {}, label: 'memory (tasks are lost on restart)', close: async () => {} };
    case 'redis': {
      // Several replicas share one Redis: its store, event bus and task leases.
      const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
      const { createRedisBackend } = await import('a2a-express-kit/redis');
      const backend = await createRedisBackend({ url });
      return { options: backend.options, label: `redis (${url})`, close: () => backend.close() };
    }
    default:
      throw new Error(`A2A_STORE must be sqlite, memory or redis, got "${kind}"`);
  }
}

async function main(): Promise<void> {
  const backend = await openBackend(process.env.A2A_STORE ?? 'sqlite');
  const { app, agent } = createApp(backend.options);
  const server = app.listen(port, host, () => {
    const address = server.address();
    const actualPort = typeof address === 'object' && address ? address.port : port;
    // eslint-disable-next-line no-console
    console.log(`Task store: ${backend.label}`);
    // eslint-disable-next-line no-console
    console.log(`A2A agent listening: http://${host}:${actualPort}/agent (card: http://${host}:${actualPort}/agent/.well-known/agent-card.json)`);
  });

  // npm and tsx relay a group signal, so the process may get SIGTERM twice: shutdown runs once,
  // and a listener stays registered so a second signal never falls back to Node's default (exit).
  let stopping: Promise<void> | undefined;
  const shutdown = (signal: string): Promise<void> =>
    (stopping ??= (async () => {
      // eslint-disable-next-line no-console
      console.log(`${signal}: shutting down (grace ${graceMs} ms)`);
      await agent.close({ graceMs });
      // After the router: its last writes (settled turns) go to the store before it closes.
      await backend.close();
      server.close(() => process.exit(0));
      server.closeIdleConnections();
    })());
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  // eslint-disable-next-line no-console
  console.error(error);
  process.exit(1);
});
