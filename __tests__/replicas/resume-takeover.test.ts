/**
 * executor.resume() across replicas on one Redis: replica A is SIGKILLed mid-turn; once its task
 * lease expires, replica B claims the task and resumes it, once; a SubscribeToTask opened on B
 * after the crash follows the continuation to COMPLETED, and the push receiver gets every event,
 * A's and the continuation, in order.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { startAgentProcess, killAll, type AgentProcess } from '../helpers/agent-process';
import { until } from '../helpers/async';
import { openStream, rpc, sseFrames, userMessage } from '../helpers/http';
import { redisForTests } from '../helpers/redis';
import { eventsOf, stateOf, withoutRepeats, type PushLine } from '../push/printed-events';
import { startGatedReceiver, type GatedReceiver } from '../push/receiver';

// Several processes, leases and claims with short times to live: on a loaded 2-core machine one run in
// about ten saw a lease or claim expire out of turn. A retry still fails a deterministic break (the
// errors of every attempt are logged); the timing race itself is on the list to remove. The takeover
// race once seen here under CPU starvation (B's "resumed" event left to B's own sweep and lost) is
// forced deterministically in __tests__/stores/redis-push-stores.test.ts.
jest.retryTimes(2, { logErrorsBeforeRetry: true });

const SERVER = path.join('__tests__', 'helpers', 'push-replica-server.ts');
const HEADERS = { 'x-user': 'resume-user', 'x-tenant': 'resume-tenant' };
const LEASE_TTL_MS = 1_000;

type Line = PushLine | { kind: 'resumed'; taskId: string; reason: string; state: string };
type Replica = AgentProcess<Line>;

const startReplica = (name: string, redisUrl: string, keyPrefix: string): Promise<Replica> =>
  startAgentProcess<Line>(SERVER, {
    label: `replica ${name}`,
    env: { NAME: name, REDIS_URL: redisUrl, KEY_PREFIX: keyPrefix, LEASE_TTL_MS: String(LEASE_TTL_MS), RESUME: '1' },
  });

const redis = redisForTests();

(redis.available ? describe : describe.skip)('executor.resume() on the replica that claims a lost task', () => {
  const replicas: Replica[] = [];
  let receiver: GatedReceiver | undefined;

  // Each attempt (jest.retryTimes above) starts from nothing: its own receiver, refusing until A is
  // killed, and no replica of an earlier attempt still running. A receiver shared between attempts
  // would hold the earlier attempt's deliveries, and a retry could never pass.
  beforeEach(async () => {
    await killAll(replicas.splice(0));
    await receiver?.close();
    receiver = await startGatedReceiver();
  });
  afterAll(async () => {
    await killAll(replicas);
    await receiver?.close();
    await redis.stop();
  }, 20_000);

  it('resumes on B, once, the task A was running when killed; a subscriber on B and the push receiver see it complete', async () => {
    const push = receiver;
    if (!push) throw new Error('no receiver: beforeEach did not run');
    const url = await redis.url();
    const prefix = `a2a-resume-${randomUUID()}:`;
    const [a, b] = await Promise.all([startReplica('A', url, prefix), startReplica('B', url, prefix)]);
    replicas.push(a, b);

    const parked = await rpc(a.url, 'SendMessage', userMessage('park'), { headers: HEADERS });
    const taskId: string = parked.body.result.task.id;
    const created = await rpc(a.url, 'CreateTaskPushNotificationConfig', { taskId, url: push.url, token: 'tok-r' }, { headers: HEADERS });
    expect(created.body.error).toBeUndefined();
    const followUp = await rpc(
      a.url,
      'SendMessage',
      { ...userMessage('work:3', { taskId }), configuration: { returnImmediately: true } },
      { headers: HEADERS },
    );
    expect(followUp.body.error).toBeUndefined();
    await a.printed((line) => line.kind === 'holding' && line.taskId === taskId);
    await push.requestCount(1);
    a.process.kill('SIGKILL');
    expect(await a.exited).toBe('SIGKILL');
    const all = eventsOf(a.lines as PushLine[], taskId);
    const committed = all.slice(all.findIndex((event) => stateOf(event) === 'TASK_STATE_INPUT_REQUIRED') + 1);
    expect(committed).toHaveLength(5); // the follow-up announced (WORKING), the agent's WORKING and 3 progress updates
    push.open();

    await b.printed((line) => line.kind === 'resumed' && line.taskId === taskId);
    expect([...a.lines, ...b.lines].filter((line) => line.kind === 'resumed')).toEqual([
      { kind: 'resumed', taskId, reason: 'replica-lost', state: 'TASK_STATE_WORKING' },
    ]);

    // A subscriber on B opened after the crash: the task as it stands, then the continuation.
    const response = await openStream(b.url, 'SubscribeToTask', { id: taskId }, { headers: HEADERS });
    const results: any[] = [];
    for await (const frame of sseFrames(response)) {
      if (frame.data === undefined) continue;
      results.push(JSON.parse(frame.data).result);
      if (results.length === 1) {
        expect(results[0].task.status.state).toBe('TASK_STATE_WORKING');
        const released = await fetch(b.url.replace(/\/agent$/, `/release/${taskId}`), { method: 'POST' });
        expect(await released.json()).toEqual({ released: true });
      }
    }
    const last = results.at(-1);
    expect(last.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(JSON.stringify(last.statusUpdate.status.message)).toContain('finished after the crash');
    expect((await rpc(b.url, 'GetTask', { id: taskId }, { headers: HEADERS })).body.result.status.state).toBe('TASK_STATE_COMPLETED');

    // Push: A's events (taken over by B once A's claim expires), then the continuation, in order.
    const expected = [...committed, ...eventsOf(b.lines as PushLine[], taskId)];
    expect(expected.map(stateOf).slice(-2)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    expect(JSON.stringify(expected.at(-2))).toContain('resumed');
    await until(() => withoutRepeats(push.delivered.map((r) => r.body)).length >= expected.length, 'every event delivered', 15_000);
    expect(withoutRepeats(push.delivered.map((r) => r.body))).toEqual(expected);
    // Later sweeps do not resume it again.
    expect(b.lines.filter((line) => line.kind === 'resumed')).toHaveLength(1);
  }, 40_000);
});
