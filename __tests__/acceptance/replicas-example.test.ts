/**
 * examples/replicas: start.ts runs two replicas of the example agent in separate processes on one
 * Redis. A task started on one is read and continued on the other, and SIGTERM stops both cleanly.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { rpc, userMessage } from '../helpers/http';
import { redisForTests } from '../helpers/redis';

const ROOT = path.resolve(__dirname, '..', '..');
const redis = redisForTests();

async function startReplicas(
  url: string,
): Promise<{ urls: string[]; child: ChildProcessByStdio<null, Readable, Readable>; exited: Promise<number | null> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/replicas/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, REDIS_URL: url, PORT_A: '0', PORT_B: '0', HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const urls = await new Promise<string[]>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const found = [...out.matchAll(/listening: (http:\/\/\S+\/agent)/g)].map((match) => match[1]);
      if (found.length === 2) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`examples/replicas/start.ts exited (${code})`)));
  });
  return { urls, child, exited };
}

(redis.available && (globalThis as { EXPRESS_MAJOR?: number }).EXPRESS_MAJOR === 5 ? describe : describe.skip)('examples/replicas', () => {
  afterAll(() => redis.stop());

  it('serves one task from two processes on one Redis', async () => {
    const url = await redis.url();
    const replicas = await startReplicas(url);
    const [a, b] = replicas.urls;
    try {
      const started = await rpc(a, 'SendMessage', userMessage('book a flight'));
      const task = started.body.result.task;
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect((await rpc(b, 'GetTask', { id: task.id })).body.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const continued = await rpc(b, 'SendMessage', userMessage('tuesday', { taskId: task.id }));
      expect(continued.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect((await rpc(a, 'GetTask', { id: task.id })).body.result.artifacts[0].parts[0].text).toContain('tuesday');
    } finally {
      replicas.child.kill('SIGTERM');
      expect(await replicas.exited).toBe(0);
    }
  }, 30_000);
});
