/**
 * `npx tsx examples/push/server.ts`: the report agent on PORT (default 3000) with its background
 * worker. Start the receiver first (`npx tsx examples/push/receiver.ts`), then send a message
 * with an inline push config: the command is printed at start-up. SIGTERM or SIGINT shut down
 * gracefully.
 */
import { createApp } from './app';

const port = Number(process.env.PORT ?? 3000);
const receiverUrl = process.env.RECEIVER_URL ?? 'http://127.0.0.1:4000/hook';
const token = process.env.RECEIVER_TOKEN ?? 'example-token';

const { app, close } = createApp({
  // eslint-disable-next-line no-console
  log: (message) => console.warn(`[worker] ${message}`),
});
const server = app.listen(port, '127.0.0.1', () => {
  const body = {
    message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'the history of the bicycle' }] },
    configuration: { returnImmediately: true, taskPushNotificationConfig: { url: receiverUrl, token } },
  };
  // eslint-disable-next-line no-console
  console.log(
    `Report agent listening: http://127.0.0.1:${port}/agent\nTry:\n  curl -s http://127.0.0.1:${port}/agent/message:send -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' -d '${JSON.stringify(body)}'`,
  );
});

// Runs once however many signals arrive (npm and tsx relay a group signal: SIGTERM can come twice).
let stopping: Promise<void> | undefined;
const shutdown = (signal: string): Promise<void> =>
  (stopping ??= (async () => {
    // eslint-disable-next-line no-console
    console.log(`${signal}: shutting down`);
    await close();
    server.close(() => process.exit(0));
    server.closeIdleConnections();
  })());
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
