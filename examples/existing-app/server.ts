/**
 * `npx tsx examples/existing-app/server.ts`: runs the example (PORT, HOST; default 127.0.0.1:3001)
 * and prints a DEV-ONLY token for alice, signed with the dev secret, to try it with curl.
 */
import { createApp } from './app';
import { DEV_JWT_SECRET, signDevToken } from './auth';

const port = Number(process.env.PORT ?? 3001);
const host = process.env.HOST ?? '127.0.0.1';
const { app } = createApp();
const server = app.listen(port, host, async () => {
  const address = server.address();
  const base = `http://${host}:${typeof address === 'object' && address ? address.port : port}`;
  const token = await signDevToken({ sub: 'alice', name: 'Alice' }, DEV_JWT_SECRET);
  /* eslint-disable no-console */
  console.log(`A2A agent listening: ${base}/agent (public card: ${base}/.well-known/agent-card.json)`);
  console.log(`DEV ONLY, signed with the dev secret, valid 1h: a token for alice:\n${token}\n`);
  console.log(
    `curl -s ${base}/agent -H 'Authorization: Bearer ${token}' -H 'X-Tenant-Id: acme' ` +
      `-H 'Content-Type: application/json' -H 'A2A-Version: 1.0' ` +
      `-d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"file an expense"}]}}}'`,
  );
  /* eslint-enable no-console */
});
