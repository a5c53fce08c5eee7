/**
 * Crash safety of SQLite's appended chunks in a long stream: a server streaming 20,000 chunks with no
 * pause is SIGKILLed after the client read 3,000, with a GetTask in between (a read folds the chunk
 * rows it joined into one, so appends after it land on a compacted artifact). After a restart on the
 * same file every chunk the client received is stored, in order, once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Task } from 'a2a-express-kit';
import { killAll, startAgentProcess, type AgentProcess } from '../helpers/agent-process';
import { openStream, rpc, sseFrames, userMessage } from '../helpers/http';

const SERVER = path.join('__tests__', 'helpers', 'sqlite-server.ts');
const HEADERS = { 'x-user': 'crash-user', 'x-tenant': 'crash-tenant' };
const CHUNKS = 20_000;

const startServer = (file: string) =>
  startAgentProcess<never>(SERVER, { label: 'sqlite server', args: [file], env: { CHUNK_MS: '0', STREAM_CHUNKS: String(CHUNKS) } });

const texts = (task: Task): string[] =>
  (task.artifacts ?? []).find((a) => a.artifactId === 'stream')?.parts.map((p) => ('text' in p ? p.text : '')) ?? [];

describe('SqliteTaskStore across a SIGKILL in a long stream', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'a2a-sqlite-long-crash-'));
  const file = path.join(dir, 'tasks.sqlite');
  const started: AgentProcess<never>[] = [];
  afterAll(async () => {
    await killAll(started);
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every chunk the client received, including those appended after a read compacted the artifact', async () => {
    const first = await startServer(file);
    started.push(first);
    const response = await openStream(first.url, 'SendStreamingMessage', userMessage('stream please'), { headers: HEADERS });
    let taskId: string | undefined;
    const received: string[] = [];
    let readMidway: string[] | undefined;
    try {
      for await (const frame of sseFrames(response)) {
        if (frame.data === undefined) continue;
        const result = JSON.parse(frame.data).result as any;
        taskId ??= result.task?.id ?? result.statusUpdate?.taskId ?? result.artifactUpdate?.taskId;
        for (const part of result.artifactUpdate?.artifact.parts ?? []) received.push(part.text as string);
        if (received.length === 1_000 && readMidway === undefined) {
          const midway = await rpc(first.url, 'GetTask', { id: taskId }, { headers: HEADERS });
          readMidway = texts(midway.body.result as Task);
        }
        if (received.length === 3_000) first.process.kill('SIGKILL');
      }
    } catch {
      // The connection dies with the process: what was read so far is what the client saw.
    }
    expect(await first.exited).toBe('SIGKILL');
    expect(readMidway!.length).toBeGreaterThanOrEqual(1_000);
    expect(received.length).toBeGreaterThanOrEqual(3_000);
    expect(received.length).toBeLessThan(CHUNKS);

    const second = await startServer(file);
    started.push(second);
    const reply = await rpc(second.url, 'GetTask', { id: taskId }, { headers: HEADERS });
    expect(reply.body.error).toBeUndefined();
    const stored = texts(reply.body.result as Task);
    // Every acknowledged chunk, in order, each once (the store may hold a few more: a write lands
    // before its send).
    expect(stored.slice(0, received.length)).toEqual(received);
    expect(stored).toEqual(Array.from({ length: stored.length }, (_, i) => `chunk ${i};`));
    expect(stored.slice(0, readMidway!.length)).toEqual(readMidway);
    expect((reply.body.result as Task).status.state).toBe('TASK_STATE_FAILED');

    // Read again (from the compacted row this time): the same task.
    const again = await rpc(second.url, 'GetTask', { id: taskId }, { headers: HEADERS });
    expect(again.body.result).toEqual(reply.body.result);

    second.process.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 60_000);
});
