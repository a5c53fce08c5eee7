/**
 * The CPU a database server spent (µs), read from /proc: the process (redis-server, or PostgreSQL's
 * postmaster) with its children alive now (PostgreSQL's backends) and those it reaped. Linux only.
 */
import { readdirSync, readFileSync } from 'node:fs';

const TICK_US = 10_000; // USER_HZ is 100 on Linux (getconf CLK_TCK)

/** [ppid, utime + stime, cutime + cstime] in ticks, from /proc/<pid>/stat; undefined once gone. */
function statOf(pid: number): [number, number, number] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields count from its last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return [Number(fields[1]), Number(fields[11]) + Number(fields[12]), Number(fields[13]) + Number(fields[14])];
  } catch {
    return undefined;
  }
}

/** CPU time of `root` and of its children (alive, and reaped), in µs; 0 where /proc cannot tell. */
export function processTreeCpuMicros(root: number): number {
  const own = statOf(root);
  if (!own) return 0;
  let ticks = own[1] + own[2];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === root) continue;
    const stat = statOf(pid);
    if (stat && stat[0] === root) ticks += stat[1];
  }
  return ticks * TICK_US;
}
