/**
 * Heap and RSS with SSE clients that never read (issue: "11 such clients: heap 11.5 -> 88 MB").
 * Each of N raw sockets starts a SendStreamingMessage whose agent streams ~6.5 MB (100 artifact
 * events of 64 KB) and never reads a byte. Prints the server's heap and RSS before, while the clients
 * are still connected, and after they leave. Loopback only.
 *
 *   node --expose-gc --import tsx bench/tools/non-reading-clients.ts [clients=11] [streamBufferBytes]
 * (streamStallMs is 2 s here, to keep the run short; the default is 10 s.)
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib/index.js';

const clients = Number(process.argv[2] ?? 11);
const bufferBytes = process.argv[3] ? Number(process.argv[3]) : undefined;
const stallMs = 2_000;
const chunk = 'x'.repeat(64 * 1024);
let finished = 0;
const executor: AgentExecutor = {
  async execute(_ctx, events) {
    await events.start();
    for (let i = 0; i < 100; i++) await events.artifact({ artifactId: 'a', text: `${i}${chunk}` });
    await events.complete();
    finished++;
  },
};
const card = {
  name: 'flood',
  description: 'streams a lot',
  version: '1',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 's', name: 's', description: 's', tags: ['t'] }],
};
const agent = createA2ARouter({
  agentCard: card,
  executor,
  logger: { ...silentLogger, warn: (...a: unknown[]) => console.log('WARN', JSON.stringify(a)) },
  ...(bufferBytes ? { streamBufferBytes: bufferBytes } : {}),
  streamStallMs: stallMs,
});
const app = express();
app.use('/agent', agent);
const gc = (globalThis as { gc?: () => void }).gc!;
const mb = (n: number) => `${(n / 1048576).toFixed(1)} MB`;
const snapshot = (label: string) => {
  gc();
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  console.log(`${label.padEnd(34)} heap ${mb(heapUsed).padStart(9)}  rss ${mb(rss).padStart(9)}`);
};

const server = app.listen(0, '127.0.0.1', async () => {
  const { port } = server.address() as AddressInfo;
  snapshot('before');
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'SendStreamingMessage',
    params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'go' }] } },
  });
  const sockets = Array.from({ length: clients }, () => {
    const socket = net.connect(port, '127.0.0.1');
    socket.pause();
    socket.write(
      `POST /agent HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    return socket;
  });
  while (finished < clients) await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setTimeout(resolve, 200));
  snapshot(`${clients} non-reading clients connected`);
  await new Promise((resolve) => setTimeout(resolve, stallMs + 500));
  snapshot(`same, after streamStallMs (${stallMs} ms)`);
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => setTimeout(resolve, 300));
  snapshot('after they left');
  console.log(`liveExecutions ${agent.liveExecutions}, liveObservers ${agent.liveObservers}`);
  server.close();
  process.exit(0);
});
