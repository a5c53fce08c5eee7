/**
 * A write the SQLite store could not make (the file locked by another connection) never commits
 * later: better-sqlite3 writes within the call or fails, so once the lock is gone no task is left
 * mid-turn and every acknowledged task is where its client was told.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { AgentExecutor } from 'a2a-express-kit';
import { openSqliteTaskStore, type SqliteTaskStore } from 'a2a-express-kit/sqlite';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { until } from '../helpers/async';

// Parks on "park", completes anything else (a follow-up of a parked task included).
const agent: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'park') await events.requireInput('More?');
    else await events.complete('Done.');
  },
};

describe('SQLite: writes refused while another connection locks the file', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'a2a-sqlite-locked-'));
  const file = path.join(dir, 'tasks.sqlite');
  let store: SqliteTaskStore;
  let server: TestServer;
  let other: Database.Database;
  beforeAll(async () => {
    store = await openSqliteTaskStore({ path: file, busyTimeoutMs: 20 });
    server = await startAgent(agent, { taskStore: store, storeTimeoutMs: 1_000 });
    other = new Database(file);
  });
  afterAll(async () => {
    if (other.inTransaction) other.exec('ROLLBACK');
    other.close();
    await server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (text: string, extra: Record<string, unknown> = {}) => rpc(server.url, 'SendMessage', userMessage(text, extra));
  const states = () =>
    Object.fromEntries((other.prepare('SELECT id, state FROM a2a_tasks').all() as { id: string; state: string }[]).map((row) => [row.id, row.state]));

  it('leaves no task mid-turn, and every acknowledged task where its client was told', async () => {
    const parked = (await send('park')).body.result.task;
    const completed = (await send('done')).body.result.task;
    other.exec('BEGIN EXCLUSIVE'); // a real lock on the file, held by another connection
    let answers: Awaited<ReturnType<typeof send>>[];
    try {
      answers = [await send('new'), await send('done', { taskId: parked.id, contextId: parked.contextId })];
    } finally {
      other.exec('ROLLBACK');
    }
    // Both met the lock: neither was served as if it had been written.
    const answered = answers.map((answer) => (answer.body.error !== undefined ? 'error' : answer.body.result.task.status.state));
    expect(answered.every((state) => state === 'error' || state === 'TASK_STATE_FAILED')).toBe(true);
    // Nothing runs now, nothing is owed: the file holds no task mid-turn.
    await until(() => server.router.liveExecutions === 0, 'every execution idle');
    await store.flushWrites();
    const now = states();
    expect(Object.values(now).filter((state) => state === 'TASK_STATE_SUBMITTED' || state === 'TASK_STATE_WORKING')).toEqual([]);
    expect(now[completed.id]).toBe('TASK_STATE_COMPLETED');
    expect(now[parked.id]).toBe('TASK_STATE_INPUT_REQUIRED'); // its follow-up was refused
    for (const answer of answers) if (answer.body.result) expect(now[answer.body.result.task.id]).toBe(answer.body.result.task.status.state);
  });
});
