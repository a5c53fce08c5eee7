/**
 * A webhook receiver cannot hold the server's connections: each delivery is bounded in bytes read
 * and in time from connect to the end of the answer, counts against the per-host limit until its
 * socket is closed, and router.close() closes them all. Receivers here are raw TCP servers on
 * loopback that count the connections open to them at every moment.
 */
import net from 'node:net';
import { deferred, until, type Deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { a2aClient } from '../helpers/bindings';
import { userMessage } from '../helpers/http';
import { pushAgent } from './helpers';

/** 'normal': a short 200; 'trickle': 200 then a byte every 20 ms, never done; 'endless': 200 and an endless chunked body. */
type Answer = 'normal' | 'trickle' | 'endless';

interface CountingReceiver {
  readonly url: string;
  /** Connections open now (the server has seen neither their end nor an error). */
  readonly open: number;
  /** The most connections ever open at once. */
  readonly peak: number;
  /** Requests read to their end. */
  readonly requests: number;
  close(): Promise<void>;
}

async function startCountingReceiver(answer: Answer): Promise<CountingReceiver> {
  const sockets = new Set<net.Socket>();
  let peak = 0;
  let requests = 0;
  const respond = (socket: net.Socket): void => {
    if (answer === 'normal') {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok');
      return;
    }
    if (answer === 'trickle') {
      socket.write('HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n');
      const timer = setInterval(() => socket.write('x'), 20);
      socket.once('close', () => clearInterval(timer));
      return;
    }
    socket.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n');
    const chunk = `10000\r\n${'z'.repeat(0x10000)}\r\n`;
    const pump = (): void => {
      while (!socket.destroyed && socket.write(chunk));
    };
    socket.on('drain', pump);
    pump();
  };
  const server = net.createServer((socket) => {
    sockets.add(socket);
    peak = Math.max(peak, sockets.size);
    const gone = (): void => {
      sockets.delete(socket);
      socket.destroy();
    };
    socket.on('end', gone);
    socket.on('error', gone);
    socket.on('close', gone);
    let seen = '';
    let answered = false;
    socket.on('data', (data: Buffer) => {
      if (answered) return;
      seen += data.toString('latin1');
      const head = seen.indexOf('\r\n\r\n');
      if (head < 0) return;
      const length = Number(/content-length: *(\d+)/i.exec(seen.slice(0, head))?.[1] ?? 0);
      if (seen.length < head + 4 + length) return;
      answered = true;
      requests++;
      respond(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    get open() {
      return sockets.size;
    },
    get peak() {
      return peak;
    },
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

let gate: Deferred<void>;
const PER_HOST = 4;

/** Starts `tasks` tasks that each report (working, two artifact chunks, completed) to `url`. */
async function reportTasks(server: TestServer, url: string, tasks: number): Promise<void> {
  const client = a2aClient('jsonrpc', server.url);
  await Promise.all(
    Array.from({ length: tasks }, () =>
      client.call('SendMessage', { ...userMessage('report'), configuration: { returnImmediately: true, taskPushNotificationConfig: { url } } }),
    ),
  );
}

describe('push delivery bounds', () => {
  let server: TestServer | undefined;
  let receiver: CountingReceiver | undefined;
  beforeEach(() => {
    gate = deferred();
  });
  afterEach(async () => {
    gate.resolve();
    await server?.router.close({ graceMs: 0 });
    await server?.close();
    await receiver?.close();
    server = receiver = undefined;
  });

  it('a receiver that trickles its answer holds at most maxInFlightPerHost connections, and none once each delivery deadline passed', async () => {
    receiver = await startCountingReceiver('trickle');
    server = await startAgent(
      pushAgent(() => gate),
      { pushNotifications: { allow: ['127.0.0.1'], timeoutMs: 150, maxInFlightPerHost: PER_HOST } },
    );
    await reportTasks(server, receiver.url, 8);
    // Every event is delivered (the status counts), each connection cut at its deadline.
    await until(() => receiver!.requests >= 8 * 4 && server!.router.livePushDeliveries === 0, 'deliveries done', 20_000);
    await until(() => receiver!.open === 0, 'connections closed');
    expect(receiver.peak).toBeLessThanOrEqual(PER_HOST);
    expect(receiver.peak).toBeGreaterThan(1);
  });

  it('a receiver that answers an endless body is read a few bytes, then its connection is closed', async () => {
    receiver = await startCountingReceiver('endless');
    server = await startAgent(
      pushAgent(() => gate),
      { pushNotifications: { allow: ['127.0.0.1'], timeoutMs: 60_000, maxInFlightPerHost: PER_HOST } },
    );
    await reportTasks(server, receiver.url, 8);
    // Cut by bytes, not by the (distant) deadline.
    await until(() => receiver!.requests >= 8 * 4 && server!.router.livePushDeliveries === 0, 'deliveries done', 20_000);
    await until(() => receiver!.open === 0, 'connections closed');
    expect(receiver.peak).toBeLessThanOrEqual(PER_HOST);
  });

  it('router.close() closes the connections of deliveries still reading an answer', async () => {
    receiver = await startCountingReceiver('trickle');
    server = await startAgent(
      pushAgent(() => gate),
      { pushNotifications: { allow: ['127.0.0.1'], timeoutMs: 60_000, maxInFlightPerHost: PER_HOST } },
    );
    await reportTasks(server, receiver.url, 8);
    await until(() => receiver!.open === PER_HOST, 'every slot held by a trickling answer');
    await server.router.close({ graceMs: 0 });
    expect(server.router.livePushDeliveries).toBe(0);
    await until(() => receiver!.open === 0, 'connections closed by close()');
    expect(receiver.peak).toBeLessThanOrEqual(PER_HOST);
  });

  it('a receiver answering normally gets every delivery, within the same bound', async () => {
    receiver = await startCountingReceiver('normal');
    server = await startAgent(
      pushAgent(() => gate),
      { pushNotifications: { allow: ['127.0.0.1'], maxInFlightPerHost: PER_HOST } },
    );
    await reportTasks(server, receiver.url, 8);
    await until(() => receiver!.requests >= 8 * 4 && server!.router.livePushDeliveries === 0, 'deliveries done', 20_000);
    await until(() => receiver!.open === 0, 'connections closed');
    expect(receiver.peak).toBeLessThanOrEqual(PER_HOST);
  });
});
