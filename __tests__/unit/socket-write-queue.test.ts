/**
 * Probe of the Node internal lib/internals/socket-write-queue.ts reads (`_handle.writeQueueSize`),
 * over a loopback HTTP response: a Node release that changes it fails here by name and version,
 * where the SSE writer would quietly fall back to its stall timer.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { sentByHandle, unsentInHandle } from '../../lib/internals/socket-write-queue';

/** Throws naming the module and the Node release when a relied-on internal no longer holds. */
function probe(what: string, holds: boolean): void {
  if (!holds) {
    throw new Error(
      `lib/internals/socket-write-queue.ts relies on "${what}", which no longer holds on Node ${process.version}: ` +
        'a private part of net.Socket changed; update the module for this release (lib/http/sse.ts tells stalled SSE clients apart with it).',
    );
  }
}

const CHUNK = Buffer.alloc(64 * 1024, 'x');
/** Far more than loopback's kernel buffers hold (a few MB): the handle must be holding bytes by then. */
const MAX_WRITTEN = 256 * 1024 * 1024;

describe(`Node ${process.version}'s socket write queue (_handle.writeQueueSize)`, () => {
  let server: http.Server;
  let client: net.Socket | undefined;

  afterEach(async () => {
    client?.destroy();
    client = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('counts what a client that stopped reading has not taken, and nothing once it has read it all', async () => {
    const responded = new Promise<http.ServerResponse>((resolve) => {
      server = http.createServer((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.flushHeaders();
        resolve(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const socket = (client = net.connect(port, '127.0.0.1'));
    await once(socket, 'connect');
    socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    socket.pause(); // reads into its buffer until full, then stops reading: the kernel's buffers fill
    const res = await responded;

    const idle = unsentInHandle(res);
    probe('a connected socket has a _handle whose writeQueueSize is a number (0 with nothing written)', idle === 0);

    let written = 0;
    let held = 0;
    while (written < MAX_WRITTEN && held === 0) {
      res.write(CHUNK);
      written += CHUNK.length;
      // A response's writes reach the socket's handle when it uncorks, after this turn (as the SSE
      // writer's are, which it reads a turn later too).
      await new Promise(setImmediate);
      held = unsentInHandle(res) ?? -1;
    }
    probe(`writeQueueSize grows once the kernel takes no more (wrote ${written} bytes to a client that reads nothing; saw ${held})`, held > 0);

    const stalled = sentByHandle(res) ?? -1;
    await new Promise(setImmediate);
    probe(
      `_bytesDispatched minus writeQueueSize (what the kernel took) stays put while the client reads nothing (saw ${stalled}, then ${sentByHandle(res)})`,
      stalled > 0 && sentByHandle(res) === stalled,
    );

    socket.resume();
    await once(res, 'drain');
    probe(`what the kernel took grows once the client reads (saw ${stalled}, then ${sentByHandle(res)})`, (sentByHandle(res) ?? -1) > stalled);
    const drained = unsentInHandle(res);
    probe(`writeQueueSize is 0 once the client has read everything (saw ${drained})`, drained === 0);

    res.socket!.destroy();
    await once(res.socket!, 'close');
    probe('a closed socket reads as unknown (undefined), without throwing', unsentInHandle(res) === undefined);
  });
});
