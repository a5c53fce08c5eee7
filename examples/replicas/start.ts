/**
 * Starts two replicas of the example agent (examples/replicas/replica.ts) on one Redis (or one
 * PostgreSQL with A2A_STORE=postgres), on PORT_A and PORT_B (default 3001 and 3002), as separate
 * processes, and stops both on SIGTERM/SIGINT. Any of the two serves any request for any task:
 *
 *   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/replicas/start.ts
 *   A2A_STORE=postgres A2A_PG_URL=postgres://127.0.0.1/agent npx tsx examples/replicas/start.ts
 *
 * Prints one line per replica with its URL (`a: A2A agent listening: ...`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const replica = path.join(__dirname, 'replica.ts');
const ports = { a: process.env.PORT_A ?? '3001', b: process.env.PORT_B ?? '3002' };

const children: ChildProcess[] = Object.entries(ports).map(([name, port]) =>
  spawn(process.execPath, ['--import', 'tsx', replica], {
    env: { ...process.env, NAME: name, PORT: port },
    stdio: ['ignore', 'inherit', 'inherit'],
  }),
);

let stopping = false;
const stop = (signal: NodeJS.Signals): void => {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill(signal);
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));

// Exits once both replicas have; a replica that dies on its own takes the other one down too.
let running = children.length;
let failed = false;
for (const child of children) {
  child.once('exit', (code) => {
    if (code !== 0) failed = true;
    if (--running === 0) process.exit(failed ? 1 : 0);
    else stop('SIGTERM');
  });
}
