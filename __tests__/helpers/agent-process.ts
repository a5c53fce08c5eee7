/**
 * Starts a child-process agent server (see child-main.ts) and reads what it prints: `READY <port>`,
 * then one JSON line per thing the test waits for (committed events, a turn holding, ...).
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';

const ROOT = path.resolve(__dirname, '..', '..');

export interface AgentProcess<Line> {
  /** The agent's mount: http://127.0.0.1:<port>/agent. */
  readonly url: string;
  /** Every JSON line printed so far, in order. */
  readonly lines: Line[];
  readonly process: ChildProcessByStdio<null, Readable, Readable>;
  readonly exited: Promise<NodeJS.Signals | number | null>;
  /** Resolves once a line matching `match` was printed. */
  printed(match: (line: Line) => boolean): Promise<void>;
}

/** Runs `node --import tsx <script> ...args` from the repository root; resolves once it printed READY. */
export function startAgentProcess<Line>(
  script: string,
  options: { readonly label: string; readonly args?: readonly string[]; readonly env?: Readonly<Record<string, string>> },
): Promise<AgentProcess<Line>> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...(options.args ?? [])], {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const lines: Line[] = [];
  const waiters = new Set<() => void>();
  return new Promise((resolve, reject) => {
    let buffer = '';
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      buffer += text;
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        const ready = /^READY (\d+)$/.exec(line);
        if (ready) {
          resolve({
            url: `http://127.0.0.1:${ready[1]}/agent`,
            lines,
            process: child,
            exited,
            printed: (match) =>
              new Promise<void>((done) => {
                const check = () => (lines.some(match) ? (waiters.delete(check), done()) : undefined);
                waiters.add(check);
                check();
              }),
          });
        } else if (line.startsWith('{')) {
          lines.push(JSON.parse(line) as Line);
          for (const waiter of [...waiters]) waiter();
        }
      }
    });
    void exited.then((how) => reject(new Error(`${options.label} exited (${String(how)}) before READY: ${err}`)));
  });
}

/** SIGKILLs every one still running and waits for it (afterAll). */
export async function killAll(started: readonly AgentProcess<unknown>[]): Promise<void> {
  for (const child of started) {
    if (child.process.exitCode === null && child.process.signalCode === null) {
      child.process.kill('SIGKILL');
      await child.exited;
    }
  }
}
