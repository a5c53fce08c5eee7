/**
 * examples/replicas on PostgreSQL (A2A_STORE=postgres): start.ts runs two replicas of the example
 * agent in separate processes on one database. A task started on one is read and continued on the
 * other, and SIGTERM stops both cleanly.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { rpc, userMessage } from '../helpers/http';
import { useTestPostgres } from '../helpers/postgres';

const ROOT = path.resolve(__dirname, '..', '..');
const pg = useTestPostgres();

pg.describe('examples/replicas on PostgreSQL', () => {
  it('serves one task from two processes on one PostgreSQL', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/replicas/start.ts'], {
      cwd: ROOT,
      env: { ...process.env, A2A_STORE: 'postgres', A2A_PG_URL: pg.url(), A2A_PG_SCHEMA: pg.schema, PORT_A: '0', PORT_B: '0', HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const [a, b] = await new Promise<string[]>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          const found = [...out.matchAll(/listening: (http:\/\/\S+\/agent) \(PostgreSQL/g)].map((match) => match[1]);
          if (found.length === 2) resolve(found);
        });
        child.once('exit', (code) => reject(new Error(`examples/replicas/start.ts exited (${code})`)));
      });
      const started = await rpc(a, 'SendMessage', userMessage('book a flight'));
      const task = started.body.result.task;
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect((await rpc(b, 'GetTask', { id: task.id })).body.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const continued = await rpc(b, 'SendMessage', userMessage('tuesday', { taskId: task.id }));
      expect(continued.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect((await rpc(a, 'GetTask', { id: task.id })).body.result.artifacts[0].parts[0].text).toContain('tuesday');
    } finally {
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  }, 30_000);
});
