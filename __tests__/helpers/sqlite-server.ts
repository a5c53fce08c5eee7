/**
 * A child-process agent server on an SQLite task store, for the crash test. Run it with
 * `node --import tsx __tests__/helpers/sqlite-server.ts <file>`; it prints `READY <port>` once it
 * listens on 127.0.0.1. The agent streams STREAM_CHUNKS artifact chunks (default 500), one every
 * CHUNK_MS (default 20). The caller is the `x-user` header, the tenant the `x-tenant` header.
 */
import { createA2ARouter, silentLogger, type AgentExecutor } from 'a2a-express-kit';
import { openSqliteTaskStore } from 'a2a-express-kit/sqlite';
import { headerCallContext, runMain, serveAgent } from './child-main';
import { testCard } from './fixtures';

const file = process.argv[2];
const chunks = Number(process.env.STREAM_CHUNKS ?? 500);
const chunkMs = Number(process.env.CHUNK_MS ?? 20);

/** Resolves after `ms`, or at once when the turn is aborted. */
const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

const streamer: AgentExecutor = {
  async execute(ctx, events) {
    await events.start('Streaming...');
    for (let i = 0; i < chunks && !ctx.signal.aborted; i++) {
      await events.artifact({ artifactId: 'stream', name: 'stream', text: `chunk ${i};`, append: i > 0 });
      await pause(chunkMs, ctx.signal);
    }
    if (!ctx.signal.aborted) await events.complete('Done.');
  },
};

runMain(async () => {
  if (!file) throw new Error('usage: sqlite-server.ts <database file>');
  const taskStore = await openSqliteTaskStore({ path: file });
  const router = createA2ARouter({
    agentCard: testCard,
    executor: streamer,
    taskStore,
    logger: silentLogger,
    callContext: headerCallContext,
  });
  serveAgent(router, () => taskStore.close());
});
