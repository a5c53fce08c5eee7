/**
 * The client side of the idle-streams phase: parks tasks in input-required, then holds one
 * `SubscribeToTask` SSE stream open per parked task, each a raw TCP socket that sends the request,
 * reads the response head and the first event (the task), and then reads nothing more. The server
 * keeps every one of them open until the task ends or the client leaves.
 *
 * Used in the runner's process (smoke mode) or as a process of its own (full and quick runs):
 *   node --import tsx bench/idle-streams.ts '{"url":"http://127.0.0.1:PORT/"}'
 * reads one command per stdin line (`park <n>`, `read`, `open`, `close`, `exit`) and answers each with
 * `RESULT <json>` on stdout.
 */
import net from 'node:net';
import { createInterface } from 'node:readline';
import { pool, rpcClient } from './http.js';
import { RPC_HEADERS, extractTask, sendMessageBody, subscribeBody, taskIdBody } from './workloads.js';

export interface ParkResult {
  parked: number;
  failures: number;
}

export interface ReadResult {
  read: number;
  failures: number;
}

export interface OpenResult {
  opened: number;
  failures: number;
  /** The first failure, for the report. */
  firstFailure?: string;
  ms: number;
}

export interface CloseResult {
  closed: number;
  ms: number;
}

/** Streams opened at once: the server's accept backlog is 511. */
const OPEN_CONCURRENCY = 64;
const FIRST_EVENT_TIMEOUT_MS = 30_000;

/** Opens one SSE stream with `body` and resolves once its first event has arrived; then the socket is paused. */
function openStream(url: URL, body: string): Promise<net.Socket> {
  const head =
    `POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n` +
    Object.entries({ ...RPC_HEADERS, accept: 'text/event-stream', 'content-length': String(Buffer.byteLength(body)) })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    '\r\n';
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) });
    let received = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      socket.destroy();
      reject(new Error(why));
    };
    const timer = setTimeout(() => fail(`no first event within ${FIRST_EVENT_TIMEOUT_MS} ms: ${received.slice(0, 200)}`), FIRST_EVENT_TIMEOUT_MS);
    socket.setEncoding('utf8');
    socket.on('error', (error) => fail(error.message));
    socket.on('close', () => fail(`closed before the first event: ${received.slice(0, 300)}`));
    socket.on('data', (chunk: string) => {
      received += chunk;
      const headEnd = received.indexOf('\r\n\r\n');
      if (headEnd === -1) return;
      const status = received.slice(0, received.indexOf('\r\n'));
      if (!/^HTTP\/1\.1 200 /.test(status) || !/content-type: text\/event-stream/i.test(received.slice(0, headEnd))) {
        return fail(`not an SSE stream: ${received.slice(0, 300)}`);
      }
      const data = received.indexOf('data:', headEnd);
      if (data === -1 || received.indexOf('\n\n', data) === -1) return;
      // The first event must be the task itself (a JSON-RPC error would be answered as an event too).
      if (!received.includes('"task"', data) || received.includes('"error"', data))
        return fail(`unexpected first event: ${received.slice(data, data + 300)}`);
      clearTimeout(timer);
      socket.removeAllListeners('data');
      socket.removeAllListeners('close');
      socket.removeAllListeners('error');
      socket.on('error', () => {}); // a server that goes away resets the socket: nothing to do
      // Idle from now on: whatever the server writes (heartbeats) stays in the kernel's buffers.
      socket.pause();
      resolve(socket);
    });
    socket.write(head + body);
  });
}

/** Parked tasks and the idle streams held on them. */
export class IdleStreams {
  readonly #url: URL;
  #taskIds: string[] = [];
  #sockets: net.Socket[] = [];

  constructor(url: string) {
    this.#url = new URL(url);
  }

  /** Parks `n` more tasks in input-required (SendMessage "input"). */
  async park(n: number): Promise<ParkResult> {
    const client = rpcClient(this.#url.href, 16);
    let failures = 0;
    try {
      const ids = await pool(n, 16, async () => {
        const res = await client.post(sendMessageBody('input'));
        const task = extractTask(res.body);
        if (!task || !res.body.includes('TASK_STATE_INPUT_REQUIRED')) {
          failures += 1;
          return '';
        }
        return task.id;
      });
      const parked = ids.filter(Boolean);
      this.#taskIds.push(...parked);
      return { parked: parked.length, failures };
    } finally {
      client.close();
    }
  }

  /**
   * GetTask on every parked task not yet followed. A store's first read of a task may change what
   * it holds (ours drops ~160 B of strings per task on the first read): done before the baseline,
   * so that the difference the streams make is theirs alone.
   */
  async read(): Promise<ReadResult> {
    const client = rpcClient(this.#url.href, 16);
    let failures = 0;
    try {
      await pool(this.#taskIds.length, 16, async (i) => {
        const res = await client.post(taskIdBody('GetTask', this.#taskIds[i]));
        if (res.status !== 200 || !res.body.includes('"result"')) failures += 1;
      });
      return { read: this.#taskIds.length, failures };
    } finally {
      client.close();
    }
  }

  /** Opens one SubscribeToTask stream per parked task not yet followed; resolves when every one has its first event. */
  async open(): Promise<OpenResult> {
    const started = Date.now();
    const ids = this.#taskIds.splice(0);
    let failures = 0;
    let firstFailure: string | undefined;
    const sockets = await pool(ids.length, OPEN_CONCURRENCY, async (i) => {
      try {
        return await openStream(this.#url, subscribeBody(ids[i]));
      } catch (error) {
        failures += 1;
        firstFailure ??= error instanceof Error ? error.message : String(error);
        return undefined;
      }
    });
    for (const socket of sockets) if (socket) this.#sockets.push(socket);
    return { opened: this.#sockets.length, failures, ...(firstFailure ? { firstFailure } : {}), ms: Date.now() - started };
  }

  /** Closes every stream (the client leaves) and waits until the sockets are closed on this side. */
  async close(): Promise<CloseResult> {
    const started = Date.now();
    const sockets = this.#sockets.splice(0);
    await Promise.all(
      sockets.map(
        (socket) =>
          new Promise<void>((resolve) => {
            if (socket.destroyed) return resolve();
            socket.once('close', () => resolve());
            socket.destroy();
          }),
      ),
    );
    return { closed: sockets.length, ms: Date.now() - started };
  }

  /** Streams held open now. */
  get held(): number {
    return this.#sockets.length;
  }
}

/** The command loop of the stand-alone client process. */
async function cli(): Promise<void> {
  const { url } = JSON.parse(process.argv[2] ?? '{}') as { url?: string };
  if (!url) throw new Error('usage: idle-streams.ts \'{"url":"http://127.0.0.1:PORT/"}\'');
  const streams = new IdleStreams(url);
  const reply = (result: unknown) => process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
  process.stdout.write('READY\n');
  for await (const line of createInterface({ input: process.stdin })) {
    const [cmd, arg] = line.trim().split(/\s+/);
    try {
      if (cmd === 'park') reply(await streams.park(Number(arg)));
      else if (cmd === 'read') reply(await streams.read());
      else if (cmd === 'open') reply(await streams.open());
      else if (cmd === 'close') reply(await streams.close());
      else if (cmd === 'exit') break;
      else reply({ error: `unknown command ${cmd}` });
    } catch (error) {
      reply({ error: error instanceof Error ? error.message : String(error) });
    }
  }
  await streams.close();
  process.exit(0);
}

if (require.main === module) {
  cli().catch((error: unknown) => {
    process.stderr.write(`idle-streams: ${error instanceof Error ? error.stack : String(error)}\n`);
    process.exit(1);
  });
}
