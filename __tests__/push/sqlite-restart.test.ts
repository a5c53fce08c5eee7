/**
 * Durable push delivery on SQLite across a SIGKILL: the webhook receiver answers 503 while a
 * task's events are committed, the server is killed mid-turn, started again on the same file, and
 * the receiver comes up: every event committed after the config was created arrives, in order,
 * with the config's credentials, followed by the FAILED status start-up settles the task with;
 * then the ended task's configs and logged events are gone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startAgentProcess, killAll, type AgentProcess } from '../helpers/agent-process';
import { until } from '../helpers/async';
import { rpc, userMessage } from '../helpers/http';
import { eventsOf, stateOf, withoutRepeats, type PushLine } from './printed-events';
import { startReceiver, type Receiver } from './receiver';

const SERVER = path.join('__tests__', 'helpers', 'push-sqlite-server.ts');
const HEADERS = { 'x-user': 'push-user', 'x-tenant': 'push-tenant' };

type Child = AgentProcess<PushLine>;

const startServer = (file: string): Promise<Child> =>
  startAgentProcess<PushLine>(SERVER, { label: 'server', args: [file], env: { RETRY_MS: '100' } });

describe('push delivery on SQLite across a SIGKILL', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'a2a-push-crash-'));
  const file = path.join(dir, 'tasks.sqlite');
  const started: Child[] = [];
  let receiver: Receiver;
  let up = false;

  beforeAll(async () => {
    receiver = await startReceiver(() => ({ status: up ? 200 : 503 }));
  });
  afterAll(async () => {
    await killAll(started);
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers every event committed before the crash after the restart, in order, then the settlement', async () => {
    const first = await startServer(file);
    started.push(first);
    const parked = await rpc(first.url, 'SendMessage', userMessage('park'), { headers: HEADERS });
    const taskId: string = parked.body.result.task.id;
    expect(parked.body.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const created = await rpc(
      first.url,
      'CreateTaskPushNotificationConfig',
      { taskId, url: receiver.url, token: 'tok-1', authentication: { scheme: 'Bearer', credentials: 's3cret' } },
      { headers: HEADERS },
    );
    expect(created.body.error).toBeUndefined();

    // The follow-up's events are committed while the receiver refuses them, then the process dies.
    const followUp = await rpc(
      first.url,
      'SendMessage',
      { ...userMessage('work:3', { taskId }), configuration: { returnImmediately: true } },
      { headers: HEADERS },
    );
    expect(followUp.body.error).toBeUndefined();
    await first.printed((line) => line.kind === 'holding' && line.taskId === taskId);
    await receiver.requestCount(1);
    first.process.kill('SIGKILL');
    expect(await first.exited).toBe('SIGKILL');
    expect(receiver.delivered).toEqual([]);
    const all = eventsOf(first.lines, taskId);
    // Those committed after the config: everything after the parking INPUT_REQUIRED.
    const parkedAt = all.findIndex((event) => stateOf(event) === 'TASK_STATE_INPUT_REQUIRED');
    expect(parkedAt).toBeGreaterThanOrEqual(0);
    const committed = all.slice(parkedAt + 1);
    // The follow-up's return to WORKING (announced like every committed change, issue 19 item 4),
    // then the agent's updates: WORKING, 3 progress ones.
    expect(committed.length).toBe(5);
    expect(committed[0]).toEqual({
      statusUpdate: expect.objectContaining({ taskId, status: expect.objectContaining({ state: 'TASK_STATE_WORKING' }) }),
    });

    const second = await startServer(file);
    started.push(second);
    up = true;
    // Start-up settles the task FAILED: delivered after what the first process committed.
    await second.printed((line) => line.kind === 'event' && line.taskId === taskId);
    const expected = [...committed, ...eventsOf(second.lines, taskId)];
    expect(stateOf(expected[expected.length - 1])).toBe('TASK_STATE_FAILED');
    await until(() => withoutRepeats(receiver.delivered.map((r) => r.body)).length >= expected.length, 'every event delivered', 15_000);
    expect(withoutRepeats(receiver.delivered.map((r) => r.body))).toEqual(expected);
    for (const request of receiver.delivered) {
      expect(request.headers.authorization).toBe('Bearer s3cret');
      expect(request.headers['x-a2a-notification-token']).toBe('tok-1');
    }

    // Bounded retention: the ended task's configs and logged events are removed once delivered.
    const db = new Database(file, { readonly: true });
    try {
      const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
      await until(() => count('a2a_push_configs') === 0 && count('a2a_push_events') === 0, 'push rows removed');
    } finally {
      db.close();
    }

    second.process.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 40_000);
});
