/**
 * A Redis that stops answering (redis-server paused with SIGSTOP: its TCP connections stay open)
 * does not hang requests: they get 503 UNAVAILABLE within the backend's commandTimeoutMs, nothing
 * acknowledged before the pause is lost, and after SIGCONT the same router serves again.
 */
import { createRedisBackend, type RedisBackend } from 'a2a-express-kit/redis';
import { silentLogger, type AgentExecutor } from 'a2a-express-kit';
import { deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { openStream, rpc, rpcStream, sseFrames, userMessage, V1 } from '../helpers/http';
import { useTestRedis } from '../helpers/redis';

const redis = useTestRedis();
const COMMAND_TIMEOUT_MS = 300;
// They take about 1.5-2x the timeout (one or two commands in a row); generous for a loaded CI
// machine, yet far below the 20 s a hung request took before.
const ANSWER_WITHIN_MS = 9 * COMMAND_TIMEOUT_MS;

/** Holds the turn of a message saying 'wait' until the test opens it (across the pause). */
const gate = deferred();

const executor: AgentExecutor = {
  async execute(ctx, events) {
    await events.start();
    if (ctx.userText.startsWith('wait')) await gate.promise;
    await events.artifact({ artifactId: 'a', text: 'result' });
    return events.complete('done');
  },
};

/** One JSON-RPC call that must answer within ANSWER_WITHIN_MS (a hang fails it as an AbortError). */
async function answered(url: string, method: string, params: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...V1 },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(ANSWER_WITHIN_MS),
  });
  return { status: response.status, body: await response.json() };
}

(redis.child ? redis.describe : describe.skip)('a Redis that stops answering', () => {
  let backend: RedisBackend;
  let server: TestServer;
  let paused = false;

  beforeAll(async () => {
    backend = await createRedisBackend({
      url: redis.url(),
      keyPrefix: redis.keyPrefix,
      logger: silentLogger,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      leaseTtlMs: 2_000,
    });
    server = await startAgent(executor, { ...backend.options });
  });

  afterAll(async () => {
    if (paused) await redis.child!.signal('SIGCONT');
    await server?.router.close();
    await server?.close();
    await backend?.close();
  });

  it('answers 503 during a pause, loses nothing acknowledged, and serves again after it', async () => {
    const before = await rpc(server.url, 'SendMessage', userMessage('before the pause'));
    expect(before.body.error).toBeUndefined();
    const acknowledged = before.body.result.task;
    expect(acknowledged.status.state).toBe('TASK_STATE_COMPLETED');
    // A stream open across the pause, its turn waiting: its later events come through the subscriber connection.
    const across = sseFrames(await openStream(server.url, 'SendStreamingMessage', userMessage('wait across the pause')));
    const opened = await across.next();
    expect(opened.done).toBe(false);

    await redis.child!.signal('SIGSTOP');
    paused = true;
    const during = await Promise.all([
      ...Array.from({ length: 4 }, (_, i) => answered(server.url, 'SendMessage', userMessage(`during the pause ${i}`))),
      ...Array.from({ length: 4 }, () => answered(server.url, 'GetTask', { id: acknowledged.id })),
    ]);
    for (const reply of during) {
      expect(reply.status).toBe(503);
      expect(reply.body.error.code).toBe(-32603);
    }

    await redis.child!.signal('SIGCONT');
    paused = false;

    gate.resolve();
    const states: string[] = [];
    for await (const frame of across) {
      const result = JSON.parse(frame.data ?? '{}').result;
      states.push(result?.statusUpdate?.status.state ?? result?.task?.status.state);
    }
    expect(states.at(-1)).toBe('TASK_STATE_COMPLETED');

    const got = await rpc(server.url, 'GetTask', { id: acknowledged.id });
    expect(got.body.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect(got.body.result.artifacts).toEqual(acknowledged.artifacts);

    const after = await rpc(server.url, 'SendMessage', userMessage('after the pause'));
    expect(after.body.error).toBeUndefined();
    expect(after.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');

    // The subscriber connection serves again too: a streamed task's events arrive to its end.
    const streamed = await rpcStream(server.url, 'SendStreamingMessage', userMessage('streamed after the pause'));
    const last = streamed.events.at(-1);
    expect(last.result.statusUpdate?.status.state ?? last.result.task?.status.state).toBe('TASK_STATE_COMPLETED');
  });
});
