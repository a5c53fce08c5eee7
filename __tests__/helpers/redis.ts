/**
 * A Redis for the Redis suites: the one at A2A_TEST_REDIS_URL when set, otherwise a redis-server
 * child on a free loopback port (no persistence, its own temp dir), shared by the tests of one file
 * and stopped after them. Without either, the suites are skipped with one warning, except under CI,
 * which installs redis-server and must run them. Each file gets its own key prefix, so files running
 * in parallel against one server never see each other's keys.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, delimiter, join } from 'node:path';
import type { RedisClient } from '../../lib/backends/redis/redis-client';

const ENV_URL = process.env.A2A_TEST_REDIS_URL;
const BINARY = (process.env.PATH ?? '')
  .split(delimiter)
  .map((dir) => join(dir, 'redis-server'))
  .find((path) => existsSync(path));

/** Whether this run has a Redis to test against. */
export const redisAvailable = ENV_URL !== undefined || BINARY !== undefined;
if (!redisAvailable && process.env.CI)
  throw new Error('redis-server is not installed and A2A_TEST_REDIS_URL is not set; CI must run the Redis suites');
if (!redisAvailable) warnOnce();

/**
 * One warning per jest run, not per file: written past jest's console (which drops the output of a
 * file whose tests are all skipped), and claimed through a marker file named after the jest process.
 */
function warnOnce(): void {
  const jest = process.send ? process.ppid : process.pid; // a worker's parent, or jest in band
  try {
    closeSync(openSync(join(tmpdir(), `a2a-redis-skip-warned-${jest}`), 'wx'));
  } catch {
    return; // another file of this run warned already
  }
  process.stderr.write(
    '\n[a2a-express-kit tests] redis-server is not on PATH and A2A_TEST_REDIS_URL is not set: the Redis suites are SKIPPED in this run\n\n',
  );
}

/** A free loopback port (closed again at once; redis-server binds it right after). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Started {
  readonly url: string;
  /** Sends `signal` to the redis-server child (SIGSTOP / SIGCONT to pause and resume it). */
  signal(signal: NodeJS.Signals): void;
  stop(): Promise<void>;
}

async function startServer(binary: string): Promise<Started> {
  const dir = mkdtempSync(join(tmpdir(), 'a2a-redis-'));
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'];
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const started = await new Promise<boolean>((resolve) => {
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) resolve(true);
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', () => resolve(false));
    });
    if (started) {
      const killOnExit = () => child.kill('SIGKILL');
      process.once('exit', killOnExit);
      return {
        url: `redis://127.0.0.1:${port}`,
        signal: (signal) => void child.kill(signal),
        stop: async () => {
          process.removeListener('exit', killOnExit);
          await stopChild(child);
          rmSync(dir, { recursive: true, force: true });
        },
      };
    }
    // Another process took the port between freePort() and the bind: try another.
    if (attempt >= 3 || !output.includes('Address already in use')) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`redis-server did not start:\n${output}`);
    }
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGCONT'); // a paused server would not act on SIGTERM
    child.kill('SIGTERM');
  });
}

/** A Redis server for one test file: started on the first url(), stopped by stop(). */
export interface RedisForTests {
  /** False when the suites should be skipped (no redis-server, no A2A_TEST_REDIS_URL, not CI). */
  readonly available: boolean;
  /** The server's URL, starting it on the first call. */
  url(): Promise<string>;
  /** Stops the server this started (not one at A2A_TEST_REDIS_URL). */
  stop(): Promise<void>;
  /** Whether signal() can reach the server: false for the one at A2A_TEST_REDIS_URL. */
  readonly signalable: boolean;
  /** Sends `signal` to the redis-server child this started (after url()). */
  signal(signal: NodeJS.Signals): Promise<void>;
}

export function redisForTests(): RedisForTests {
  let started: Promise<Started> | undefined;
  return {
    available: redisAvailable,
    url: async () => {
      if (ENV_URL !== undefined) return ENV_URL;
      if (BINARY === undefined) throw new Error('no Redis for this run (check `available` first)');
      started ??= startServer(BINARY);
      return (await started).url;
    },
    stop: async () => {
      const server = started;
      started = undefined;
      if (server) await (await server).stop();
    },
    signalable: ENV_URL === undefined && BINARY !== undefined,
    signal: async (signal) => {
      if (started === undefined) throw new Error('no redis-server child to signal (use a started one, not A2A_TEST_REDIS_URL)');
      (await started).signal(signal);
    },
  };
}

export interface TestRedis {
  /** `describe`, or `describe.skip` when there is no Redis. */
  readonly describe: jest.Describe;
  /** Unique to this test file. */
  readonly keyPrefix: string;
  /** The server's URL (inside tests and hooks). */
  url(): string;
  /** A connected client, closed after the file's tests. */
  connect(): Promise<RedisClient>;
  /** The server this file started, to pause (SIGSTOP) and resume (SIGCONT) it; undefined with A2A_TEST_REDIS_URL. */
  readonly child: { signal(signal: NodeJS.Signals): Promise<void> } | undefined;
}

/** Call once at the top of a test file: registers the hooks that start and stop the server. */
export function useTestRedis(): TestRedis {
  const server = redisForTests();
  let url: string | undefined;
  const clients: RedisClient[] = [];
  const keyPrefix = `a2a-test:${basename(expect.getState().testPath ?? 'unknown')}:${randomUUID().slice(0, 8)}:`;
  if (redisAvailable) {
    beforeAll(async () => {
      url = await server.url();
    }, 20_000);
    afterAll(async () => {
      await Promise.all(clients.splice(0).map((client) => (client.isOpen ? client.close() : undefined)));
      await server.stop();
    }, 20_000);
  }
  const urlNow = () => url ?? assertNever();
  return {
    describe: redisAvailable ? describe : describe.skip,
    keyPrefix,
    url: urlNow,
    child: server.signalable ? { signal: (signal) => server.signal(signal) } : undefined,
    connect: async () => {
      // Loaded on first use: the node-redis client costs ~0.3 s per test file that loads it.
      const client = (await import('redis')).createClient({ url: urlNow() });
      client.on('error', () => {}); // a failing command rejects; reconnect noise is not a test result
      await client.connect();
      clients.push(client);
      return client;
    },
  };
}

function assertNever(): never {
  throw new Error('no Redis: the server has not started (use url() inside tests and hooks)');
}
