/**
 * `npm start` as a process: a group SIGTERM relayed twice (npm and tsx both pass it on) must not cut
 * the graceful shutdown. A stream open on a running turn still ends with the task's final state,
 * and the process exits 0 instead of dying by the second signal.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

interface Started {
  readonly baseUrl: string;
  readonly exited: Promise<NodeJS.Signals | number | null>;
  signal(name: NodeJS.Signals): void;
}

function startExample(): Promise<Started> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/basic/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', A2A_STORE: 'memory', SHUTDOWN_GRACE_MS: '10000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      const listening = /listening: (http:\/\/127\.0\.0\.1:\d+)\/agent/.exec(out);
      if (listening) resolve({ baseUrl: listening[1], exited, signal: (name) => child.kill(name) });
    });
    void exited.then((how) => reject(new Error(`the example exited (${String(how)}) before listening: ${err}`)));
  });
}

/** SSE `data:` payloads of a JSON-RPC stream, as they arrive; resolves `first` on the first one. */
async function openCountStream(baseUrl: string): Promise<{ first: Promise<void>; all: Promise<unknown[]> }> {
  const response = await fetch(`${baseUrl}/agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'a2a-version': '1.0', accept: 'text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'SendStreamingMessage',
      params: { message: { messageId: 'm-count', role: 'ROLE_USER', parts: [{ text: 'count slowly' }] } },
    }),
  });
  let markFirst!: () => void;
  const first = new Promise<void>((resolve) => (markFirst = resolve));
  const all = (async () => {
    const events: unknown[] = [];
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').find((line) => line.startsWith('data:'));
        if (data) {
          events.push(JSON.parse(data.slice(5)));
          markFirst();
        }
      }
    }
    return events;
  })();
  return { first, all };
}

describe('examples/basic server process', () => {
  it('shuts down once on a doubled SIGTERM: the open stream ends with the final state and the process exits 0', async () => {
    const example = await startExample();
    const stream = await openCountStream(example.baseUrl);
    await stream.first; // the turn is running
    example.signal('SIGTERM');
    example.signal('SIGTERM');
    const events = (await stream.all) as Array<{ result?: { statusUpdate?: { status: { state: string } } } }>;
    const last = events.at(-1)?.result?.statusUpdate?.status.state;
    expect(last).toBe('TASK_STATE_COMPLETED');
    expect(await example.exited).toBe(0);
  }, 30_000);
});
