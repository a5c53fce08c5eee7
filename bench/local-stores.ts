/** The stores the single-process bench scripts (long-stream, token-streams) run the kit on, and the redis-server they start. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const STORES = ['memory', 'sqlite', 'redis', 'postgres'] as const;
export type StoreId = (typeof STORES)[number];

/** Router options for `store` (the kit from lib/ through tsx), and how to close it; `name` prefixes keys, schemas and files. */
export async function kitStore(
  store: StoreId,
  name: string,
  urls: { redis?: string; postgres?: string },
): Promise<{ options: Record<string, unknown>; close: () => Promise<void> }> {
  if (store === 'sqlite') {
    const { openSqliteTaskStore } = await import('../lib/sqlite.js');
    const dir = mkdtempSync(path.join(os.tmpdir(), `a2a-${name}-`));
    const taskStore = await openSqliteTaskStore({ path: path.join(dir, 'tasks.sqlite') });
    return {
      options: { taskStore },
      close: async () => {
        await taskStore.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  if (store === 'redis') {
    const { createRedisBackend } = await import('../lib/redis.js');
    const backend = await createRedisBackend({ url: urls.redis!, keyPrefix: `${name}${process.pid}:` });
    return { options: { ...backend.options }, close: () => backend.close() };
  }
  if (store === 'postgres') {
    const { createPostgresBackend } = await import('../lib/postgres.js');
    const backend = await createPostgresBackend({ connectionString: urls.postgres!, schema: `${name}_${process.pid}` });
    return { options: { ...backend.options }, close: () => backend.close() };
  }
  return { options: {}, close: async () => {} };
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/** A redis-server on a free loopback port without persistence; undefined when none is installed. */
export async function startRedis(): Promise<{ url: string; pid: number; stop: () => void } | undefined> {
  if (spawnSync('which', ['redis-server']).status !== 0) return undefined;
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stdout!.on('data', (data: Buffer) => {
      seen += data.toString();
      if (seen.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code})`)));
  });
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid!,
    stop: () => {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
