/**
 * One process per SQLite file: a second process refuses to open a file another one serves (naming
 * the backends for replicas) and leaves its running task alone; after the holder's `kill -9`, a
 * restart opens the file at once and settles the task.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqliteTaskStore } from 'a2a-express-kit/sqlite';
import { killAll, startAgentProcess, type AgentProcess } from '../helpers/agent-process';
import { openStream, rpc, sseFrames, userMessage } from '../helpers/http';

const SERVER = path.join('__tests__', 'helpers', 'sqlite-server.ts');
const HEADERS = { 'x-user': 'lock-user', 'x-tenant': 'lock-tenant' };
// Long enough that the task is still running when the second process tries the file.
const startServer = (file: string) =>
  startAgentProcess<never>(SERVER, { label: 'sqlite server', args: [file], env: { CHUNK_MS: '50', STREAM_CHUNKS: '100000' } });

describe('one process per SQLite file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'a2a-sqlite-lock-'));
  const started: AgentProcess<never>[] = [];
  afterAll(async () => {
    await killAll(started);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a streamed task on `server` and resolves with its id once its first chunk arrived. */
  async function runningTask(server: AgentProcess<never>): Promise<string> {
    const response = await openStream(server.url, 'SendStreamingMessage', userMessage('stream please'), { headers: HEADERS });
    for await (const frame of sseFrames(response)) {
      const result = frame.data === undefined ? undefined : (JSON.parse(frame.data).result as any);
      if (result?.artifactUpdate) return result.artifactUpdate.taskId as string;
    }
    throw new Error('the stream ended before its first chunk');
  }

  it('a second process refuses the file; the first one keeps its running task', async () => {
    const file = path.join(dir, 'shared.sqlite');
    const first = await startServer(file);
    started.push(first);
    const taskId = await runningTask(first);

    const second = startServer(file);
    void second.then(
      (opened) => started.push(opened),
      () => undefined,
    ); // killed by afterAll if it did open
    await expect(second).rejects.toThrow(
      `SqliteTaskStore: ${file} is in use by another process. A SQLite file serves one process (its start-up settles every unfinished task as its own); for several replicas use Redis (a2a-express-kit/redis) or PostgreSQL (a2a-express-kit/postgres)`,
    );
    const reply = await rpc(first.url, 'GetTask', { id: taskId }, { headers: HEADERS });
    expect(reply.body.result.status.state).toBe('TASK_STATE_WORKING');
    // And this (the jest) process, a third one.
    await expect(openSqliteTaskStore({ path: file })).rejects.toThrow('is in use by another process');
  }, 30_000);

  it('after kill -9, a restart opens the file at once and settles the task', async () => {
    const file = path.join(dir, 'restart.sqlite');
    const first = await startServer(file);
    started.push(first);
    const taskId = await runningTask(first);
    first.process.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');

    const second = await startServer(file);
    started.push(second);
    const reply = await rpc(second.url, 'GetTask', { id: taskId }, { headers: HEADERS });
    expect(reply.body.result.status.state).toBe('TASK_STATE_FAILED');
    second.process.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 30_000);

  it('a process reopens a file it closed, and two stores of one process share the file', async () => {
    const file = path.join(dir, 'reopen.sqlite');
    const one = await openSqliteTaskStore({ path: file });
    const two = await openSqliteTaskStore({ path: file });
    await one.close();
    await two.close();
    const again = await openSqliteTaskStore({ path: file });
    await again.close();
  });
});
