/**
 * examples/replicas: two replicas of the example agent in separate processes on one Redis. A task
 * started on one is read and continued on the other, and both shut down cleanly on SIGTERM.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { rpc, userMessage } from '../helpers/http';
import { redisForTests } from '../helpers/redis';

const ROOT = path.resolve(__dirname, '..', '..');
const redis = redisForTests();

async function startReplica(name: string, url: string): Promise<{ url: string; child: ChildProcessByStdio<null, Readable, Readable>; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/replicas/replica.ts'], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: url, PORT: '0', HOST: '127.0.0.1', NAME: name },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /listening: (http:\/\/\S+\/agent)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`replica ${name} exited (${code})`)));
  });
  return { url: base, child, exited };
}

(redis.available && (globalThis as { EXPRESS_MAJOR?: number }).EXPRESS_MAJOR === 5 ? describe : describe.skip)('examples/replicas', () => {
  afterAll(() => redis.stop());

  it('serves one task from two processes on one Redis', async () => {
    const url = await redis.url();
    const [a, b] = await Promise.all([startReplica('a', url), startReplica('b', url)]);
    try {
      const started = await rpc(a.url, 'SendMessage', userMessage('book a flight'));
      const task = started.body.result.task;
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect((await rpc(b.url, 'GetTask', { id: task.id })).body.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const continued = await rpc(b.url, 'SendMessage', userMessage('tuesday', { taskId: task.id }));
      expect(continued.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect((await rpc(a.url, 'GetTask', { id: task.id })).body.result.artifacts[0].parts[0].text).toContain('tuesday');
    } finally {
      a.child.kill('SIGTERM');
      b.child.kill('SIGTERM');
      expect(await a.exited).toBe(0);
      expect(await b.exited).toBe(0);
    }
  }, 30_000);
});
