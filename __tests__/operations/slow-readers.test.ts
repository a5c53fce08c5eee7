/**
 * Slow SSE readers are bounded per stream and together: a client that stops reading is cut as
 * soon as its send buffer passes streamBufferBytes (not after streamStallMs), all the streams of a
 * router together hold at most streamBufferTotalBytes (the furthest behind cut first), and a cut
 * client that resumes with Last-Event-ID misses nothing. Clients here are raw sockets that never read.
 */
import net from 'node:net';
import type { AgentExecutor } from '../../lib';
import { deferred, until, type Deferred } from '../helpers/async';
import { a2aClient } from '../helpers/bindings';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { V1, userMessage } from '../helpers/http';
import { recordingLogger } from '../push/helpers';

const EVENTS = 200;
const CHUNK = 'x'.repeat(64 * 1024);

let go: Deferred<void>;
let gate: Deferred<void>;
/** Resolved once the flood has produced every artifact (it then waits for `gate`). */
let produced: Deferred<void>;

/**
 * Once `go`, 12.8 MB of artifacts (one event per turn of the event loop, as an agent doing work
 * would), more than loopback's socket buffers take; then it waits for `gate` before completing.
 */
const flood: AgentExecutor = {
  async execute(_ctx, events) {
    await events.start();
    await go.promise;
    for (let i = 0; i < EVENTS; i++) {
      await events.artifact({ artifactId: `a${i}`, text: `${i}:${CHUNK}` });
      await new Promise((resolve) => setImmediate(resolve));
    }
    produced.resolve();
    await gate.promise;
    await events.complete('sent it all');
  },
};

/** Artifacts the reading client of the total test has received; the agent waits on it. */
let readerSeen = 0;
let readerMoved: (() => void) | undefined;

/**
 * The same flood, produced as fast as one reading client takes it: each artifact once the reader
 * has the one before. A reader reading in this process shares its event loop with the server, so
 * under load it could otherwise fall further behind than the non-readers and rightly be the one
 * cut; in step, the non-readers are always the furthest behind.
 */
const floodInStep: AgentExecutor = {
  async execute(_ctx, events) {
    await events.start();
    await go.promise;
    for (let i = 0; i < EVENTS; i++) {
      await events.artifact({ artifactId: `a${i}`, text: `${i}:${CHUNK}` });
      while (readerSeen <= i) await new Promise<void>((resolve) => (readerMoved = resolve));
    }
    await gate.promise;
    await events.complete('sent it all');
  },
};

/** Sends a streaming request on a raw socket that reads nothing of the answer. */
function nonReader(url: string, method: string, params: unknown, headers: Record<string, string> = {}): net.Socket {
  const { port } = new URL(url);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  const socket = net.connect(Number(port), '127.0.0.1');
  socket.pause();
  const head = Object.entries({ ...V1, ...headers, 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(`POST /agent HTTP/1.1\r\nHost: 127.0.0.1\r\n${head}\r\n${body}`);
  return socket;
}

/** Reads what the server sent before closing the connection. */
function readToEnd(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (data: Buffer) => chunks.push(data));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    socket.resume();
  });
}

/** The body of a raw chunked HTTP response, as far as it got (a cut one ends mid-chunk). */
function dechunk(raw: string): string {
  let at = raw.indexOf('\r\n\r\n') + 4;
  let body = '';
  while (at < raw.length) {
    const lineEnd = raw.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = parseInt(raw.slice(at, lineEnd), 16);
    if (!(size > 0)) break;
    body += raw.slice(lineEnd + 2, lineEnd + 2 + size);
    at = lineEnd + 2 + size + 2;
  }
  return body;
}

/** The SSE ids and JSON-RPC results in a raw chunked response, as far as it got (a cut one ends mid-event). */
function parseEvents(raw: string): { ids: string[]; results: { artifactUpdate?: { artifact: { artifactId: string } }; task?: { id: string } }[] } {
  const ids: string[] = [];
  const results = [];
  for (const match of dechunk(raw).matchAll(/(?:id: (\d+)\n)?data: (\{.*?\})\n\n/g)) {
    try {
      results.push(JSON.parse(match[2]).result);
      if (match[1]) ids.push(match[1]);
    } catch {
      // An event cut short: its id is not counted as received.
    }
  }
  return { ids, results };
}

describe('slow SSE readers', () => {
  let server: TestServer;
  beforeEach(() => {
    go = deferred();
    gate = deferred();
    produced = deferred();
  });
  afterEach(async () => {
    go.resolve();
    gate.resolve();
    // An agent still waiting for a reader that is gone goes on.
    readerSeen = Infinity;
    readerMoved?.();
    await server.close();
  });

  it('a client that stops reading is cut once streamBufferBytes behind, before streamStallMs; a resume with Last-Event-ID gives it what it missed', async () => {
    const logger = recordingLogger();
    server = await startAgent(flood, { logger, streamBufferBytes: 256 * 1024, streamStallMs: 600_000 });
    const socket = nonReader(server.url, 'SendStreamingMessage', userMessage('flood'));
    go.resolve();
    // Cut by its buffer while the task still runs (the stall period is ten minutes).
    await until(() => server.router.liveExecutions === 1 && server.router.liveObservers === 0, 'the non-reading stream cut', 20_000);
    expect(logger.lines.filter((l) => l.message.includes('more than streamBufferBytes behind'))).toHaveLength(1);
    const { ids, results } = parseEvents(await readToEnd(socket));
    const taskId = results[0].task!.id;
    const seen = new Set(results.flatMap((r) => (r.artifactUpdate ? [r.artifactUpdate.artifact.artifactId] : [])));
    expect(seen.size).toBeLessThan(EVENTS);

    // Resumed once the flood is over: a client reading a snapshot of megabytes in this process takes
    // nothing from its socket while it parses it, and more events arriving meanwhile would rightly
    // cut it as a non-reader (the task is still running: it waits for the gate).
    await produced.promise;
    const client = a2aClient('jsonrpc', server.url);
    const resumed = await client.open('SubscribeToTask', { id: taskId }, { headers: { 'Last-Event-ID': ids.at(-1)! } });
    gate.resolve();
    const after: any[] = [];
    for await (const item of client.events(resumed)) after.push(item.event);
    // It missed events: the task as it stands first, then the rest.
    for (const artifact of after[0].task.artifacts as { artifactId: string }[]) seen.add(artifact.artifactId);
    for (const event of after.slice(1)) if (event.artifactUpdate) seen.add(event.artifactUpdate.artifact.artifactId);
    expect(seen.size).toBe(EVENTS);
    expect(after.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('streams together hold at most streamBufferTotalBytes: the non-readers are cut, a reading client is not', async () => {
    const logger = recordingLogger();
    server = await startAgent(floodInStep, {
      logger,
      streamBufferBytes: 64 * 1024 * 1024,
      streamBufferTotalBytes: 2 * 1024 * 1024,
      streamStallMs: 600_000,
    });
    const client = a2aClient('jsonrpc', server.url);
    const taskId = (await client.call('SendMessage', { ...userMessage('flood'), configuration: { returnImmediately: true } })).result.task.id;
    readerSeen = 0;
    const response = await client.open('SubscribeToTask', { id: taskId });
    // A cut reader ends with an error here ("terminated"), failing the test.
    const reader = (async () => {
      const events: any[] = [];
      for await (const item of client.events(response)) {
        events.push(item.event ?? item);
        if (item.event?.artifactUpdate) {
          readerSeen++;
          readerMoved?.();
        }
      }
      return events;
    })();
    const sockets = [0, 1, 2].map(() => nonReader(server.url, 'SubscribeToTask', { id: taskId }));
    // The turn's own observer (the SendMessage), the reader and the three non-readers.
    await until(() => server.router.liveObservers === 5, 'four subscribers');
    go.resolve();
    // The three non-readers are cut for the total (their own bound is far away); the reader is left.
    const cutForTotal = () => logger.lines.filter((l) => l.message.includes('streamBufferTotalBytes')).length;
    await until(() => cutForTotal() === 3 && server.router.liveObservers === 2, 'three streams cut for the total', 20_000);
    expect(logger.lines.filter((l) => l.message.includes('more than streamBufferBytes behind'))).toEqual([]);
    gate.resolve();
    const events = await reader;
    // The reader was not cut: it got every artifact and the completion.
    expect(events.filter((e) => e.artifactUpdate)).toHaveLength(EVENTS);
    expect(events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(cutForTotal()).toBe(3);
    for (const socket of sockets) socket.destroy();
  });
});
