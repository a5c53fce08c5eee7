/**
 * Crash safety of the SQLite store: a server process is SIGKILLed in the middle of a streamed
 * answer and started again on the same file. Every artifact chunk the client received is in the
 * stored task, and the task is not left WORKING: start-up settles it as FAILED.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Task } from 'a2a-express-kit';
import { killAll, startAgentProcess, type AgentProcess } from '../helpers/agent-process';
import { openStream, rpc, sseFrames, userMessage } from '../helpers/http';

const SERVER = path.join('__tests__', 'helpers', 'sqlite-server.ts');
const HEADERS = { 'x-user': 'crash-user', 'x-tenant': 'crash-tenant' };

/** Starts the server on `file` and resolves once it printed READY. */
const startServer = (file: string) =>
  startAgentProcess<never>(SERVER, { label: 'sqlite server', args: [file], env: { CHUNK_MS: '20', STREAM_CHUNKS: '500' } });

describe('SqliteTaskStore across a SIGKILL', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'a2a-sqlite-crash-'));
  const file = path.join(dir, 'tasks.sqlite');
  const started: AgentProcess<never>[] = [];
  afterAll(async () => {
    await killAll(started);
    rmSync(dir, { recursive: true, force: true });
  });

  it('keeps every chunk the client saw and settles the task as FAILED on restart', async () => {
    const first = await startServer(file);
    started.push(first);
    const response = await openStream(first.url, 'SendStreamingMessage', userMessage('stream please'), { headers: HEADERS });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);

    let taskId: string | undefined;
    const received: string[] = [];
    try {
      for await (const frame of sseFrames(response)) {
        if (frame.data === undefined) continue;
        const result = JSON.parse(frame.data).result as any;
        taskId ??= result.task?.id ?? result.statusUpdate?.taskId ?? result.artifactUpdate?.taskId;
        for (const part of result.artifactUpdate?.artifact.parts ?? []) received.push(part.text as string);
        // Killed with the stream open, between two chunks the agent has yet to send.
        if (received.length === 15) first.process.kill('SIGKILL');
      }
    } catch {
      // The connection dies with the process: what was read so far is what the client saw.
    }
    expect(await first.exited).toBe('SIGKILL');
    expect(taskId).toBeDefined();
    expect(received.length).toBeGreaterThanOrEqual(15);
    expect(received.length).toBeLessThan(500);

    const second = await startServer(file);
    started.push(second);
    const reply = await rpc(second.url, 'GetTask', { id: taskId }, { headers: HEADERS });
    expect(reply.body.error).toBeUndefined();
    const task = reply.body.result as Task;
    // Everything the client was sent is stored, in order (the store may hold more: a write lands
    // before its send).
    const stored = (task.artifacts ?? []).find((a) => a.artifactId === 'stream')?.parts.map((p) => ('text' in p ? p.text : '')) ?? [];
    expect(stored.slice(0, received.length)).toEqual(received);
    expect(received).toEqual(Array.from({ length: received.length }, (_, i) => `chunk ${i};`));

    // Start-up settlement: the turn died with the process, so the task must not stay WORKING.
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    expect(task.status.message?.parts[0]).toEqual({ text: expect.stringMatching(/\S/) });

    // Another caller does not see it.
    const stranger = await rpc(second.url, 'GetTask', { id: taskId }, { headers: { ...HEADERS, 'x-user': 'someone-else' } });
    expect(stranger.body.error).toBeDefined();

    second.process.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 30_000);
});
