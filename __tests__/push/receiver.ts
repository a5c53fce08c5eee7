/** A webhook receiver on 127.0.0.1 for the push suites: records every request, answers as told. */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly body: any;
}

/** What to do with the n-th request (0-based): a status, a redirect, or never answer. */
export type Behaviour = (index: number, received: Received) => { status: number; location?: string } | 'hang';

export interface Receiver {
  readonly url: string;
  readonly origin: string;
  /** Every request, in arrival order. */
  readonly requests: Received[];
  /** The requests answered 2xx. */
  readonly delivered: Received[];
  /** Resolves once `count` requests were answered 2xx. */
  deliveredCount(count: number): Promise<Received[]>;
  /** Resolves once `count` requests arrived. */
  requestCount(count: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(behaviour: Behaviour = () => ({ status: 200 })): Promise<Receiver> {
  const requests: Received[] = [];
  const delivered: Received[] = [];
  const waiters: Array<() => void> = [];
  const hanging: ServerResponse[] = [];
  const wake = () => {
    for (const waiter of waiters.splice(0)) waiter();
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = undefined;
      }
      const received: Received = { path: req.url ?? '', headers: req.headers, text, body };
      const index = requests.length;
      requests.push(received);
      const answer = behaviour(index, received);
      if (answer === 'hang') {
        hanging.push(res);
      } else {
        if (answer.status >= 200 && answer.status < 300) delivered.push(received);
        res.writeHead(answer.status, answer.location ? { location: answer.location } : {});
        res.end();
      }
      wake();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const until = (done: () => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => (done() ? resolve() : waiters.push(check));
      check();
    });
  return {
    url: `${origin}/hook`,
    origin,
    requests,
    delivered,
    deliveredCount: async (count) => (await until(() => delivered.length >= count), delivered),
    requestCount: async (count) => (await until(() => requests.length >= count), requests),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A receiver that refuses every request (503) until `open()`: a webhook down until the crash, up after it. */
export interface GatedReceiver extends Receiver {
  open(): void;
}

export async function startGatedReceiver(): Promise<GatedReceiver> {
  let up = false;
  const receiver = await startReceiver(() => ({ status: up ? 200 : 503 }));
  return { ...receiver, open: () => void (up = true) };
}
