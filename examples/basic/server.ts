/**
 * `npm start`: runs the example on the in-memory store (PORT, HOST; default 127.0.0.1:3000).
 * SIGTERM or SIGINT shut it down gracefully: running turns get SHUTDOWN_GRACE_MS (default 10 s)
 * to finish, open streams end after their last event, then the process exits.
 */
import { createApp } from './app';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const graceMs = Number(process.env.SHUTDOWN_GRACE_MS ?? 10_000);
const { app, agent } = createApp();
const server = app.listen(port, host, () => {
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  // eslint-disable-next-line no-console
  console.log(`A2A agent listening: http://${host}:${actualPort}/agent (card: http://${host}:${actualPort}/agent/.well-known/agent-card.json)`);
});

async function shutdown(signal: string): Promise<void> {
  // eslint-disable-next-line no-console
  console.log(`${signal}: shutting down (grace ${graceMs} ms)`);
  await agent.close({ graceMs });
  server.close(() => process.exit(0));
  server.closeIdleConnections();
}
process.once('SIGTERM', () => void shutdown('SIGTERM'));
process.once('SIGINT', () => void shutdown('SIGINT'));
