/**
 * A PostgreSQL for the PostgreSQL suites: the one at A2A_TEST_PG_URL when set, otherwise a throwaway
 * cluster (initdb + pg_ctl from `pg_config --bindir`, trust auth, loopback port, its own temp dir),
 * one for the whole jest run (started by global-setup.ts: a cluster costs about a second,
 * and two dozen files use one). Without either, the suites are skipped with one warning, except
 * under CI, which installs PostgreSQL and must run them. Each file gets its own schema, so files
 * running in parallel against one server never see each other's tables. Tests that stop and restart
 * the server start a cluster of their own (startPostgresServer).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ENV_URL = process.env.A2A_TEST_PG_URL;
/** The throwaway cluster jest's global setup started for the whole run (global-setup.ts). */
const SHARED_URL = process.env.A2A_TEST_PG_SHARED_URL;

/** The directory of initdb and pg_ctl, when PostgreSQL's server binaries are installed. */
function serverBinaries(): string | undefined {
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

const BINARIES = ENV_URL === undefined ? serverBinaries() : undefined;

/** Whether this run has a PostgreSQL to test against. */
export const postgresAvailable = ENV_URL !== undefined || BINARIES !== undefined;
if (!postgresAvailable && process.env.CI)
  throw new Error('PostgreSQL is not installed and A2A_TEST_PG_URL is not set; CI must run the PostgreSQL suites');
if (!postgresAvailable) warnOnce();

function warnOnce(): void {
  const jest = process.send ? process.ppid : process.pid;
  try {
    closeSync(openSync(join(tmpdir(), `a2a-pg-skip-warned-${jest}`), 'wx'));
  } catch {
    return;
  }
  process.stderr.write(
    '\n[a2a-express-kit tests] PostgreSQL (initdb/pg_ctl) is not installed and A2A_TEST_PG_URL is not set: the PostgreSQL suites are SKIPPED in this run\n\n',
  );
}

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

/** PostgreSQL refuses to run as root: as root, its tools run as the `postgres` user. */
function run(bin: string, tool: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const command = asRoot ? 'runuser' : join(bin, tool);
  const argv = asRoot ? ['-u', 'postgres', '--', join(bin, tool), ...args] : args;
  const result = spawnSync(command, argv, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${tool} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
}

/** A running throwaway cluster. */
export interface TestPostgresServer {
  readonly url: string;
  /** Stops the server (fast shutdown; `immediate` simulates a crash). */
  stop(mode?: 'fast' | 'immediate'): void;
  /** Starts it again on the same port and data (after stop()). */
  start(): void;
  /** Removes the data directory (after the last stop). */
  remove(): void;
  /** Sends `signal` to every process of the server (SIGSTOP / SIGCONT: a hung database, its connections open). */
  signal(signal: NodeJS.Signals): void;
}

/** Starts a cluster of its own (not A2A_TEST_PG_URL's): for tests that stop and restart the server. */
export async function startPostgresServer(): Promise<TestPostgresServer> {
  if (BINARIES === undefined) throw new Error('no PostgreSQL server binaries (pg_config --bindir)');
  const dir = mkdtempSync(join(tmpdir(), 'a2a-pg-'));
  if (process.getuid?.() === 0) {
    const { uid, gid } = postgresIds();
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  run(BINARIES, 'initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
  const port = await freePort();
  const options = `-k ${dir} -h 127.0.0.1 -p ${port} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`;
  const start = () => run(BINARIES, 'pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', 'start']);
  const stop = (mode: 'fast' | 'immediate' = 'fast') => run(BINARIES, 'pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  start();
  let running = true;
  const killOnExit = () => {
    if (running) {
      try {
        stop('immediate');
      } catch {
        // best effort at exit
      }
    }
  };
  process.once('exit', killOnExit);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: (mode) => {
      stop(mode);
      running = false;
    },
    start: () => {
      start();
      running = true;
    },
    remove: () => {
      process.removeListener('exit', killOnExit);
      rmSync(dir, { recursive: true, force: true });
    },
    signal: (signal) => {
      const postmaster = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      const children = spawnSync('pgrep', ['-P', String(postmaster)], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean)
        .map(Number);
      for (const pid of [postmaster, ...children]) process.kill(pid, signal);
    },
  };
}

function postgresIds(): { uid: number; gid: number } {
  const out = execFileSync('id', ['postgres'], { encoding: 'utf8' });
  const uid = Number(/uid=(\d+)/.exec(out)?.[1]);
  const gid = Number(/gid=(\d+)/.exec(out)?.[1]);
  if (!Number.isInteger(uid) || !Number.isInteger(gid)) throw new Error(`cannot read the postgres user's ids from: ${out}`);
  return { uid, gid };
}

export interface TestPostgres {
  /** `describe`, or `describe.skip` when there is no PostgreSQL. */
  readonly describe: jest.Describe;
  /** A schema unique to this test file (and call), for the backend's `schema` option. */
  readonly schema: string;
  /** The server's connection string (inside tests and hooks). */
  url(): string;
}

/**
 * Call once at the top of a test file: the run's shared cluster when jest's global setup started
 * one, else registers the hooks that start and stop a cluster of the file's own.
 */
export function useTestPostgres(): TestPostgres {
  let server: TestPostgresServer | undefined;
  let url: string | undefined = ENV_URL ?? SHARED_URL;
  const schema = `a2a_test_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  if (postgresAvailable && url === undefined) {
    beforeAll(async () => {
      server = await startPostgresServer();
      url = server.url;
    }, 30_000);
    afterAll(() => {
      server?.stop('immediate');
      server?.remove();
    }, 30_000);
  }
  return {
    describe: postgresAvailable ? describe : describe.skip,
    schema,
    url: () => url ?? assertNever(),
  };
}

function assertNever(): never {
  throw new Error('no PostgreSQL: the server has not started (use url() inside tests and hooks)');
}

/**
 * Records every statement sent on the connections `pool` hands out (the kit takes one per
 * statement), as `jest.spyOn(pool, 'query')` did when the kit used pool.query; until mockRestore().
 */
export function spyOnStatements(pool: PgPoolLike): jest.Mock {
  const sent = jest.fn();
  const connect = pool.connect;
  const wrapped = new WeakSet<object>();
  let active = true;
  pool.connect = function (this: PgPoolLike, ...args: unknown[]) {
    if (typeof args[0] === 'function') return connect.apply(this, args); // pool.query's own connect
    return (connect.apply(this, args) as Promise<{ query: (...q: unknown[]) => unknown }>).then((client) => {
      if (!wrapped.has(client)) {
        wrapped.add(client);
        const query = client.query;
        client.query = function (this: unknown, ...q: unknown[]) {
          if (active) sent(...q);
          return query.apply(this, q);
        };
      }
      return client;
    });
  };
  sent.mockRestore = () => {
    active = false;
    pool.connect = connect;
  };
  return sent;
}

interface PgPoolLike {
  connect: (...args: unknown[]) => unknown;
}
