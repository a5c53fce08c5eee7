/** An agent with the inspector on, whose replies the inspector suites steer by message text, and its logged token. */
import express from 'express';
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import type { Server } from 'node:http';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import { createA2ARouter, type A2ARouter, type A2ARouterOptions, type AgentExecutor, type Logger } from '../../lib';
import { testCard } from '../helpers/fixtures';

const root = resolve(__dirname, '..', '..');
let bundle: Promise<unknown> | undefined;

/** The page bundle, built unless dist/inspector is newer than every UI source (npm test's build made it). */
export function ensureBundle(): Promise<unknown> {
  const sources = join(root, 'lib', 'inspector', 'ui');
  const newest = Math.max(...readdirSync(sources, { recursive: true }).map((f) => statSync(join(sources, String(f))).mtimeMs));
  let built = 0;
  try {
    built = statSync(join(root, 'dist', 'inspector', 'app.js')).mtimeMs;
  } catch {
    // not built yet
  }
  bundle ??= built > newest ? Promise.resolve() : promisify(execFile)(process.execPath, [join(root, 'scripts', 'build-inspector.mjs')]);
  return bundle;
}

/** A promise the test resolves: the agent waits on it where a test wants to look in between. */
export function gate(): { wait: Promise<void>; open(): void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

export const gates = { stream: gate(), push: gate() };

/**
 * `stream`: a first chunk, then (after gates.stream) the rest; `ask`: input-required, then the
 * answer; `long`: works until canceled; `xss`: markup in every part; `push`: waits for gates.push;
 * anything else: an echo artifact.
 */
export const executor: AgentExecutor = {
  async execute(ctx, events) {
    const text = ctx.userText;
    if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') return events.complete(`booked for ${text}`);
    if (text === 'ask') return events.requireInput('which day?');
    await events.start();
    if (text === 'stream') {
      await events.artifact({ artifactId: 'answer', name: 'answer', text: 'first chunk' });
      await gates.stream.wait;
      await events.artifact({ artifactId: 'answer', text: ', second chunk', append: true, lastChunk: true });
      return events.complete();
    }
    if (text === 'long') {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      return;
    }
    if (text === 'xss') {
      const markup = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
      await events.artifact({
        name: markup,
        parts: [{ text: markup }, { data: { html: markup } }, { url: 'javascript:window.__xss=3', filename: markup }],
      });
      return events.complete(markup);
    }
    if (text === 'push') await gates.push.wait;
    await events.artifact({ name: 'echo', text: `echo: ${text}` });
    return events.complete();
  },
};

export interface InspectedAgent {
  readonly origin: string;
  readonly port: number;
  readonly server: Server;
  readonly router: A2ARouter;
  /** `<origin>/agent/_inspector/#token=...` as the log printed it, with the port filled in. */
  readonly url: string;
  readonly token: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1; the inspector's token is read from the log line it writes. */
export async function startInspectedAgent(options: Partial<A2ARouterOptions> = {}): Promise<InspectedAgent> {
  await ensureBundle();
  const lines: string[] = [];
  let logged!: (line: string) => void;
  const inspectorLine = new Promise<string>((resolve) => (logged = resolve));
  const capture = (obj: object | string, msg?: string) => {
    const line = typeof obj === 'string' ? obj : (msg ?? '');
    lines.push(line);
    if (line.includes('A2A inspector on')) logged(line);
  };
  const logger: Logger = { debug: () => {}, info: () => {}, warn: capture, error: capture };
  const app = express();
  const agent = createA2ARouter({
    agentCard: testCard,
    executor,
    logger,
    inspector: true,
    pushNotifications: true,
    cancelGracePeriodMs: 2000,
    ...options,
  });
  app.use('/agent', agent);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  server.keepAliveTimeout = 0;
  const { port } = server.address() as AddressInfo;
  // Written once, on the tick after construction (when app.use has told the router its mount path).
  const line = await inspectorLine;
  expect(lines.filter((l) => l.includes('#token='))).toEqual([line]);
  const token = /#token=([\w-]+)/.exec(line)![1];
  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    port,
    server,
    router: agent,
    token,
    url: line.slice(line.indexOf('http')).replace('http://localhost:<port>', origin),
    close: async () => {
      await agent.close({ graceMs: 100 });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
