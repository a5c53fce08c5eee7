/** `npm start`: runs the example on the in-memory store (PORT, HOST; default 127.0.0.1:3000). */
import { createApp } from './app';

const port = Number(process.env.PORT ?? 3000);
const host = process.env.HOST ?? '127.0.0.1';
const { app } = createApp();
const server = app.listen(port, host, () => {
  const address = server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  // eslint-disable-next-line no-console
  console.log(`A2A agent listening: http://${host}:${actualPort}/agent (card: http://${host}:${actualPort}/agent/.well-known/agent-card.json)`);
});
