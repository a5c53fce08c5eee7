/** Minimal keep-alive JSON-RPC client for the untimed parts of the benchmark (setup, memory phase). */
import http from 'node:http';
import { RPC_HEADERS } from './workloads.js';

export interface RpcClient {
  post(body: string, path?: string): Promise<{ status: number; body: string }>;
  close(): void;
}

export function rpcClient(baseUrl: string, maxSockets = 16): RpcClient {
  const url = new URL(baseUrl);
  // `timeout`: without it Node's Agent ignores the server's Keep-Alive hint and may reuse a socket
  // the server is closing that instant (ECONNRESET); idle sockets are dropped after 2 s instead.
  const agent = new http.Agent({ keepAlive: true, maxSockets, timeout: 2_000 });
  return {
    post(body: string, path = url.pathname) {
      return new Promise((resolve, reject) => {
        const req = http.request(
          {
            host: url.hostname,
            port: url.port,
            path,
            method: 'POST',
            agent,
            headers: { ...RPC_HEADERS, 'content-length': Buffer.byteLength(body) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
            res.on('error', reject);
          },
        );
        req.setTimeout(30_000, () => req.destroy(new Error(`request to ${baseUrl} timed out`)));
        req.on('error', reject);
        req.end(body);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

/** GET `path` on `baseUrl` (fresh connection, nothing pooled) and parse the JSON answer. */
export function getJson<T>(baseUrl: string, path: string): Promise<T> {
  const url = new URL(path, baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error(`GET ${url.pathname} answered ${res.statusCode}: ${body.slice(0, 200)}`));
        try {
          resolve(JSON.parse(body) as T);
        } catch (error) {
          reject(error);
        }
      });
      res.on('error', reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error(`GET ${url.href} timed out`)));
    req.on('error', reject);
  });
}

/** Runs `task(i)` for i in [0, count) with at most `concurrency` in flight; results in order. */
export async function pool<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next;
      next += 1;
      results[i] = await task(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}
