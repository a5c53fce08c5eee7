/**
 * A write the kit gave up on that Redis runs once it wakes never leaves a task mid-turn with
 * nothing running: redis-server paused with SIGSTOP while a write and the lease's release wait in
 * its socket; once it resumes, the lease sweep finds the task (and the router's sweep settles it).
 */
import { randomUUID } from 'node:crypto';
import { silentLogger, type AgentExecutor, type Task } from 'a2a-express-kit';
import { createRedisBackend, RedisTaskLeases, RedisTaskStore, type RedisBackend } from 'a2a-express-kit/redis';
import { deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { useTestRedis } from '../helpers/redis';
import { taskKey } from '../../lib/engine/seams/task-store';

const redis = useTestRedis();

const task = (id: string, state: Task['status']['state']): Task => ({ id, contextId: 'c', status: { state, timestamp: new Date().toISOString() } });

(redis.child ? redis.describe : describe.skip)('Redis: a write given up on, run after a pause', () => {
  it('the lease sweep returns a task left WORKING with its lease released', async () => {
    const client = await redis.connect();
    const prefix = `${redis.keyPrefix}seam:`;
    const store = new RedisTaskStore({ client, keyPrefix: prefix });
    const leases = new RedisTaskLeases({ client, keyPrefix: prefix, leaseTtlMs: 300, logger: silentLogger });
    const scope = { tenant: 't', owner: 'o' };
    const id = `late-${randomUUID()}`;
    await store.create(scope, task(id, 'TASK_STATE_INPUT_REQUIRED'));
    const lease = (await leases.acquire(taskKey(scope, id), { scope, taskId: id }, 0))!;
    expect(lease).toBeDefined();
    await redis.child!.signal('SIGSTOP');
    // A follow-up's WORKING write, then (its client answered 503 meanwhile) the lease given back: both
    // wait in the paused server's socket and run, in that order, once it resumes.
    const write = store.update(scope, task(id, 'TASK_STATE_WORKING'), 1);
    const released = lease.release();
    await redis.child!.signal('SIGCONT');
    expect(await write).toBe(2);
    await released;
    expect(await leases.claimExpired()).toContainEqual({ scope, taskId: id });
    await leases.close();
  });

  describe('behind the router', () => {
    // Parks on "park", completes anything else (a follow-up of a parked task included).
    const agent: AgentExecutor = {
      async execute(ctx, events) {
        if (ctx.userText === 'park') await events.requireInput('More?');
        else await events.complete('Done.');
      },
    };
    let backend: RedisBackend;
    let server: TestServer;
    /** Resolved by the router's next lease sweep. */
    let swept = deferred();
    let paused = false;
    beforeAll(async () => {
      backend = await createRedisBackend({
        url: redis.url(),
        keyPrefix: `${redis.keyPrefix}router:`,
        logger: silentLogger,
        commandTimeoutMs: 300,
        leaseTtlMs: 300,
      });
      const claimExpired = backend.taskLeases.claimExpired.bind(backend.taskLeases);
      backend.taskLeases.claimExpired = async () => {
        const claimed = await claimExpired();
        swept.resolve();
        swept = deferred();
        return claimed;
      };
      server = await startAgent(agent, { ...backend.options, storeTimeoutMs: 1_000 });
    });
    afterAll(async () => {
      if (paused) await redis.child!.signal('SIGCONT');
      await server?.close();
      await backend?.close();
    });

    it('leaves no task mid-turn, and every acknowledged task where its client was told', async () => {
      const send = (text: string, extra: Record<string, unknown> = {}) => rpc(server.url, 'SendMessage', userMessage(text, extra));
      const parked = (await send('park')).body.result.task;
      const completed = (await send('done')).body.result.task;
      await redis.child!.signal('SIGSTOP');
      paused = true;
      const answers = await Promise.all([send('new'), send('done', { taskId: parked.id, contextId: parked.contextId })]);
      await redis.child!.signal('SIGCONT');
      paused = false;
      for (const answer of answers) expect(answer.status).toBe(503);
      for (let i = 0; i < 3; i++) await swept.promise;
      const state = async (id: string) => (await rpc(server.url, 'GetTask', { id })).body.result.status.state;
      expect(await state(parked.id)).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(await state(completed.id)).toBe('TASK_STATE_COMPLETED');
      for (const status of ['TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING']) {
        const listed = await rpc(server.url, 'ListTasks', { status });
        expect(listed.body.result.tasks).toEqual([]);
      }
    });
  });
});
