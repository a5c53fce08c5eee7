/**
 * A child-process agent server with push notifications on the durable SQLite stores, for the push
 * crash test. Run it with `node --import tsx __tests__/helpers/push-sqlite-server.ts <file>`; it
 * prints `READY <port>` once it listens on 127.0.0.1, then a JSON line per committed event
 * (`{"kind":"event","taskId","event"}`, in commit order) and `{"kind":"holding","taskId"}` when a turn
 * waits. Webhooks on 127.0.0.1 are allowed; retries are quick and many (RETRY_MS, default 100).
 *
 * Agent: parkThenWorkAgent (child-main.ts); with env RESUME, its resume() is resumeThenComplete.
 */
import { createA2ARouter, silentLogger } from 'a2a-express-kit';
import { openSqliteTaskStore, sqlitePushStores } from 'a2a-express-kit/sqlite';
import { headerCallContext, printLine, pushAgent, runMain, serveAgent } from './child-main';
import { testCard } from './fixtures';

const file = process.argv[2];
const retryMs = Number(process.env.RETRY_MS ?? 100);

runMain(async () => {
  if (!file) throw new Error('usage: push-sqlite-server.ts <database file>');
  const taskStore = await openSqliteTaskStore({ path: file });
  const router = createA2ARouter({
    agentCard: testCard,
    executor: pushAgent(),
    taskStore,
    logger: silentLogger,
    pushNotifications: { ...sqlitePushStores(taskStore), allow: ['127.0.0.1'], maxAttempts: 20, retryBaseMs: retryMs, retryMaxMs: retryMs * 2 },
    onTaskEvent: (info) => printLine({ kind: 'event', taskId: info.taskId, event: info.event }),
    callContext: headerCallContext,
  });
  serveAgent(router, () => taskStore.close());
});
