/**
 * Durable push across replicas on one Redis: replica A commits a task's events while the webhook
 * receiver answers 503 and is SIGKILLed before delivering any; once A's delivery claim expires,
 * replica B takes the deliveries over and every event A committed arrives, in order, followed by
 * the FAILED status B settles the orphaned task with.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { startAgentProcess, killAll, type AgentProcess } from '../helpers/agent-process';
import { until } from '../helpers/async';
import { rpc, userMessage } from '../helpers/http';
import { redisForTests } from '../helpers/redis';
import { eventsOf, stateOf, withoutRepeats, type PushLine } from '../push/printed-events';
import { startGatedReceiver, type GatedReceiver } from '../push/receiver';

// Several processes, leases and claims with short times to live: on a loaded 2-core machine one run in
// about ten saw a lease or claim expire out of turn. A retry still fails a deterministic break (the
// errors of every attempt are logged); the timing race itself is on the list to remove.
jest.retryTimes(2, { logErrorsBeforeRetry: true });

const SERVER = path.join('__tests__', 'helpers', 'push-replica-server.ts');
const HEADERS = { 'x-user': 'push-user', 'x-tenant': 'push-tenant' };
const LEASE_TTL_MS = 1_000;

type Replica = AgentProcess<PushLine>;

const startReplica = (name: string, redisUrl: string, keyPrefix: string): Promise<Replica> =>
  startAgentProcess<PushLine>(SERVER, {
    label: `replica ${name}`,
    env: { NAME: name, REDIS_URL: redisUrl, KEY_PREFIX: keyPrefix, LEASE_TTL_MS: String(LEASE_TTL_MS) },
  });

const redis = redisForTests();

(redis.available ? describe : describe.skip)('push deliveries taken over by another replica', () => {
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

  it('delivers on B every event A committed before it was killed, in order', async () => {
    const push = receiver;
    if (!push) throw new Error('no receiver: beforeEach did not run');
    const url = await redis.url();
    const prefix = `a2a-push-takeover-${randomUUID()}:`;
    const [a, b] = await Promise.all([startReplica('A', url, prefix), startReplica('B', url, prefix)]);
    replicas.push(a, b);

    const parked = await rpc(a.url, 'SendMessage', userMessage('park'), { headers: HEADERS });
    const taskId: string = parked.body.result.task.id;
    const created = await rpc(a.url, 'CreateTaskPushNotificationConfig', { taskId, url: push.url, token: 'tok-a' }, { headers: HEADERS });
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
    expect(push.delivered).toEqual([]);
    const all = eventsOf(a.lines, taskId);
    const committed = all.slice(all.findIndex((event) => stateOf(event) === 'TASK_STATE_INPUT_REQUIRED') + 1);
    expect(committed).toHaveLength(5); // the follow-up announced (WORKING), the agent's WORKING and 3 progress updates
    push.open();

    // B settles the orphan once A's task lease expires, and takes A's deliveries over once its claim does.
    await b.printed((line) => line.kind === 'event' && line.taskId === taskId && stateOf(line.event) === 'TASK_STATE_FAILED');
    const expected = [...committed, ...eventsOf(b.lines, taskId)];
    await until(() => withoutRepeats(push.delivered.map((r) => r.body)).length >= expected.length, 'every event delivered', 15_000);
    expect(withoutRepeats(push.delivered.map((r) => r.body))).toEqual(expected);
    for (const request of push.delivered) expect(request.headers['x-a2a-notification-token']).toBe('tok-a');
  }, 40_000);
});
