/**
 * `npm start` as a process: a group SIGTERM, or one relayed twice, must not cut
 * the graceful shutdown. A stream open on a running turn still ends with the task's final state,
 * and the process exits 0 instead of dying by the second signal.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { until } from '../helpers/async';

const ROOT = path.resolve(__dirname, '..', '..');

interface Started {
  readonly baseUrl: string;
  readonly pid: number;
  readonly exited: Promise<NodeJS.Signals | number | null>;
  signal(name: NodeJS.Signals): void;
}

/** The example as `node --import tsx` runs it, or as `npm start` in a process group of its own (signalled as a group). */
function startExample(how: 'node' | 'npm start'): Promise<Started> {
  const [command, args] = how === 'node' ? [process.execPath, ['--import', 'tsx', 'examples/basic/server.ts']] : ['npm', ['start']];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', A2A_STORE: 'memory', SHUTDOWN_GRACE_MS: '10000' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: how === 'npm start',
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      const listening = /listening: (http:\/\/127\.0\.0\.1:\d+)\/agent/.exec(out);
      if (listening)
        resolve({
          baseUrl: listening[1],
          pid: child.pid!,
          exited,
          signal: (name) => (how === 'node' ? child.kill(name) : process.kill(-child.pid!, name)),
        });
    });
    void exited.then((how) => reject(new Error(`the example exited (${String(how)}) before listening: ${err}`)));
  });
}

/** Whether a process of the group led by `pid` still runs. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
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
    const example = await startExample('node');
    const stream = await openCountStream(example.baseUrl);
    await stream.first; // the turn is running
    example.signal('SIGTERM');
    example.signal('SIGTERM');
    const events = (await stream.all) as Array<{ result?: { statusUpdate?: { status: { state: string } } } }>;
    const last = events.at(-1)?.result?.statusUpdate?.status.state;
    expect(last).toBe('TASK_STATE_COMPLETED');
    expect(await example.exited).toBe(0);
  }, 30_000);

  it('`npm start` survives a group SIGTERM (npm, its shell and node all get it): the stream ends with the final state, then the group is gone', async () => {
    const example = await startExample('npm start');
    const stream = await openCountStream(example.baseUrl);
    await stream.first;
    example.signal('SIGTERM');
    const events = (await stream.all) as Array<{ result?: { statusUpdate?: { status: { state: string } } } }>;
    expect(events.at(-1)?.result?.statusUpdate?.status.state).toBe('TASK_STATE_COMPLETED');
    // npm itself dies of the signal (its way); the example, no tsx wrapper between, finishes and exits.
    await example.exited;
    await until(() => !groupAlive(example.pid), 'the example process exits');
  }, 30_000);
});
