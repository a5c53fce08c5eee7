/**
 * A Redis paused with SIGSTOP (issue 32 items 3, 5, 6): every refused request gets 503 with
 * Retry-After in both bindings and versions, a begun stream ends with -32603 "temporarily
 * unavailable", the outage is one error line and one recovery line, and each request waits one
 * storeTimeoutMs in all (the engine's FAILED after a timed-out write is owed, not waited for).
 */
import { createRedisBackend, type RedisBackend } from 'a2a-express-kit/redis';
import { silentLogger, type AgentExecutor, type TaskStore } from 'a2a-express-kit';
import type { TaskLeases } from '../../lib/engine/seams/task-leases';
import { deferred, until } from '../helpers/async';
import { a2aClient, BINDINGS } from '../helpers/bindings';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { useTestRedis } from '../helpers/redis';
import { recordingLogger } from '../push/helpers';

const redis = useTestRedis();
const STORE_TIMEOUT_MS = 400;
const gate = deferred();

const executor: AgentExecutor = {
  async execute(ctx, events) {
    await events.start();
    if (ctx.userText.startsWith('wait')) await gate.promise;
    await events.artifact({ artifactId: 'a', text: 'result' });
    return events.complete('done');
  },
};

const v03Message = { kind: 'message', messageId: 'm-v03', role: 'user', parts: [{ kind: 'text', text: 'v0.3' }] };

(redis.child ? redis.describe : describe.skip)('a Redis paused with SIGSTOP', () => {
  let backend: RedisBackend;
  let server: TestServer;
  let paused = false;
  const logger = recordingLogger();
  /** The calls made to Redis during the pause, under the engine's deadline (counted here: the fault itself is real). */
  const made: string[] = [];
  const counted = <T extends (...args: never[]) => unknown>(name: string, fn: T): T =>
    ((...args: Parameters<T>) => {
      if (paused) made.push(name);
      return fn(...args);
    }) as T;

  beforeAll(async () => {
    // The backend's own command deadline far above the engine's: what bounds a request here is storeTimeoutMs.
    backend = await createRedisBackend({
      url: redis.url(),
      keyPrefix: redis.keyPrefix,
      logger: silentLogger,
      commandTimeoutMs: 20_000,
      leaseTtlMs: 2_000,
    });
    const { taskStore: store, taskLeases: leases } = backend.options;
    const taskStore: TaskStore = {
      get: counted('taskStore.get()', (scope, id) => store.get(scope, id)),
      create: counted('taskStore.create()', (scope, task) => store.create(scope, task)),
      update: counted('taskStore.update()', (scope, task, version, change) => store.update(scope, task, version, change)),
      list: counted('taskStore.list()', (scope, query) => store.list(scope, query)),
    };
    const taskLeases: TaskLeases = {
      acquire: counted('leases.acquire()', (key, task, waitMs) => leases.acquire(key, task, waitMs)),
      claimExpired: counted('leases.claimExpired()', () => leases.claimExpired()),
      sweepIntervalMs: leases.sweepIntervalMs,
    };
    server = await startAgent(executor, { ...backend.options, taskStore, taskLeases, storeTimeoutMs: STORE_TIMEOUT_MS, logger });
  });

  afterAll(async () => {
    gate.resolve();
    if (paused) await redis.child!.signal('SIGCONT');
    await server?.router.close();
    await server?.close();
    await backend?.close();
  });

  const post = (path: string, body: unknown) =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  it('answers 503 + Retry-After everywhere, ends begun streams with "temporarily unavailable", logs one outage, one deadline per request', async () => {
    const streamTasks: string[] = [];
    // Streams begun before the pause, their turns waiting: their next write meets the outage.
    const streams = await Promise.all(
      BINDINGS.map(async (binding) => {
        const client = a2aClient(binding, server.url);
        const events = client.events(await client.open('SendStreamingMessage', userMessage('wait across the pause')));
        const first = await events.next();
        streamTasks.push(first.value.event.task?.id ?? first.value.event.statusUpdate.taskId);
        return events;
      }),
    );

    await redis.child!.signal('SIGSTOP');
    paused = true;
    const [rpc, rest, rpc03, rest03] = await Promise.all([
      a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('during the pause')),
      a2aClient('rest', server.url).call('SendMessage', userMessage('during the pause')),
      post('', { jsonrpc: '2.0', id: 3, method: 'message/send', params: { message: v03Message } }),
      post('/v1/message:send', { message: { messageId: 'm-v03-rest', role: 'ROLE_USER', content: [{ text: 'v0.3' }] } }),
    ]);
    for (const reply of [rpc, rest]) {
      expect(reply.status).toBe(503);
      expect(reply.headers.get('retry-after')).toBe('1');
      expect(reply.error).toMatchObject({ code: -32603, message: 'The service is temporarily unavailable' });
    }
    for (const response of [rpc03, rest03]) {
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('1');
    }
    expect(((await rpc03.json()) as { error: { code: number } }).error.code).toBe(-32603);

    gate.resolve();
    for (const events of streams) {
      let last: { error?: { code: number; message: string } } | undefined;
      for await (const item of events) last = item;
      expect(last?.error).toMatchObject({ code: -32603, message: 'The service is temporarily unavailable' });
    }
    // One deadline per request: each message made one call (its lease), each stream one write (its
    // artifact); the engine's FAILED after it was refused unmade (owed), not waited for a second time.
    const requests = made.filter((call) => call !== 'leases.claimExpired()');
    expect(requests.sort()).toEqual([...Array(4).fill('leases.acquire()'), 'taskStore.update()', 'taskStore.update()']);
    // A longer stall: the lease sweeps fail too, and are counted, not logged.
    await until(() => made.filter((call) => call === 'leases.claimExpired()').length >= 3, 'three lease sweeps during the pause', 20_000);

    await redis.child!.signal('SIGCONT');
    paused = false;
    // The streams' tasks, their FAILED owed, are settled once Redis answers (and these reads answer).
    for (const taskId of streamTasks) {
      const stateOf = async () => (await a2aClient('jsonrpc', server.url).call('GetTask', { id: taskId })).result?.status.state;
      for (let tries = 0; (await stateOf()) !== 'TASK_STATE_FAILED'; tries++) {
        if (tries > 150) throw new Error(`task ${taskId} not settled`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    await until(() => logger.lines.some((l) => l.message === 'the store answers again'), 'the end of the outage logged', 15_000);
    const errors = logger.lines.filter((l) => l.level === 'error').map((l) => l.message);
    expect(errors).toEqual(['a store is failing; further failures are counted until it answers again']);
    // Warnings: at most the sweep's, one per task it settles (a task whose lease lapsed in the pause).
    const warnings = logger.lines.filter((l) => l.level === 'warn').map((l) => l.message);
    expect(warnings.filter((m) => m !== 'a task was left mid-turn by a process that stopped; it is resumed or failed')).toEqual([]);
    expect(logger.lines.filter((l) => l.message === 'the store answers again')).toHaveLength(1);
  }, 60_000);
});
