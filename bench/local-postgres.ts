/**
 * The benchmark's own throwaway PostgreSQL (the ours-postgres rows and the long-stream postgres
 * cells): a cluster made with initdb in a temporary directory, started with pg_ctl on a free
 * loopback port, stopped and removed at the end. A missing PostgreSQL is not an error: the rows are
 * skipped with the reason.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { freePort } from './local-stores.js';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A running cluster (`pid`: its postmaster, whose children are the backends: see db-cpu.ts), or why there is none. */
export type LocalPostgres = { readonly url: string; readonly stop: () => void; readonly pid: number } | { readonly skip: string };

/**
 * Durability off (fsync, synchronous_commit, full_page_writes), as the Redis rows run without
 * persistence: the rows measure the kit's work per request, not the disk's.
 */
const SETTINGS = '-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200';

function binaries(): string | undefined {
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return existsSync(path.join(dir, 'initdb')) && existsSync(path.join(dir, 'pg_ctl')) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** PostgreSQL refuses to run as root: as root its tools run as the `postgres` user. */
function run(bin: string, tool: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const result = asRoot
    ? spawnSync('runuser', ['-u', 'postgres', '--', path.join(bin, tool), ...args], { encoding: 'utf8' })
    : spawnSync(path.join(bin, tool), args, { encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`${tool} failed (${result.status ?? result.error?.message}): ${`${result.stdout}${result.stderr}`.trim().slice(-400)}`);
}

export async function startLocalPostgres(): Promise<LocalPostgres> {
  const bin = binaries();
  if (!bin) return { skip: 'PostgreSQL server binaries not found (pg_config --bindir): install PostgreSQL to measure this server' };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'a2a-bench-pg-'));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    if (process.getuid?.() === 0) {
      const ids = execFileSync('id', ['postgres'], { encoding: 'utf8' });
      chownSync(dir, Number(/uid=(\d+)/.exec(ids)?.[1]), Number(/gid=(\d+)/.exec(ids)?.[1]));
    }
    const data = path.join(dir, 'data');
    run(bin, 'initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    const port = await freePort();
    run(bin, 'pg_ctl', ['-D', data, '-o', `-k ${dir} -h 127.0.0.1 -p ${port} ${SETTINGS}`, '-l', path.join(dir, 'log'), '-w', 'start']);
    let stopped = false;
    const stop = () => {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', stop);
      try {
        run(bin, 'pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        remove();
      }
    };
    process.once('exit', stop);
    const pid = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop, pid };
  } catch (error) {
    remove();
    return { skip: `PostgreSQL did not start: ${error instanceof Error ? error.message : String(error)}` };
  }
}
