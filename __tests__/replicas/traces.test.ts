/**
 * Traces across replicas: two processes on one Redis (store, bus, leases), traces on in both. A
 * task started on A and followed up on B: B's turn span is in B's request's trace and links to the
 * request that started the task on A (the trace context kept beside the task in Redis).
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { until } from '../helpers/async';
import { rpc, userMessage } from '../helpers/http';
import { redisForTests } from '../helpers/redis';
import { callerTrace } from '../tracing/helpers';

const SERVER = path.resolve(__dirname, '..', 'helpers', 'traced-replica-server.ts');

interface PrintedSpan {
  readonly name: string;
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly attributes: Record<string, unknown>;
  readonly events: string[];
  readonly links: Array<{ traceId: string; spanId: string; attributes?: Record<string, unknown> }>;
}

interface TracedReplica {
  readonly url: string;
  readonly spans: PrintedSpan[];
  stop(): Promise<void>;
}

async function startReplica(redisUrl: string, keyPrefix: string): Promise<TracedReplica> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
    cwd: path.resolve(__dirname, '..', '..'),
    env: { ...process.env, REDIS_URL: redisUrl, KEY_PREFIX: keyPrefix, LEASE_TTL_MS: '5000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const spans: PrintedSpan[] = [];
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (line.startsWith('READY ')) resolve(Number(line.slice(6)));
        else if (line.startsWith('SPAN ')) spans.push(JSON.parse(line.slice(5)) as PrintedSpan);
      }
    });
    child.once('exit', (code) => reject(new Error(`replica exited (${code}): ${stderr}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/agent`,
    spans,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const redis = redisForTests();

(redis.available ? describe : describe.skip)('traces across two replicas on one Redis', () => {
  let a: TracedReplica;
  let b: TracedReplica;
  beforeAll(async () => {
    const url = await redis.url();
    const prefix = `a2a-traces-${randomUUID()}:`;
    [a, b] = await Promise.all([startReplica(url, prefix), startReplica(url, prefix)]);
  }, 60_000);
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await redis.stop();
  });

  it('a follow-up on the other replica: its turn links to the request that started the task there', async () => {
    const first = callerTrace();
    const second = callerTrace();
    const parked = await rpc(a.url, 'SendMessage', userMessage('park'), { headers: { traceparent: first.traceparent } });
    const task = parked.body.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const done = await rpc(b.url, 'SendMessage', userMessage('go on', { taskId: task.id }), { headers: { traceparent: second.traceparent } });
    expect(done.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');

    const SEND = 'a2a.v1.A2AService/SendMessage';
    await until(
      () => a.spans.some((s) => s.name === SEND) && b.spans.filter((s) => s.name === 'a2a.turn' || s.name === SEND).length === 2,
      'the spans of both replicas',
    );
    const opening = a.spans.find((s) => s.name === SEND)!;
    expect(opening.traceId).toBe(first.traceId);
    const followUp = b.spans.find((s) => s.name === SEND)!;
    const turn = b.spans.find((s) => s.name === 'a2a.turn')!;
    expect(followUp.traceId).toBe(second.traceId);
    expect(turn).toMatchObject({
      traceId: second.traceId,
      parentSpanId: followUp.spanId,
      attributes: { 'a2a.task.id': task.id, 'a2a.turn.follow_up': true, 'a2a.turn.outcome': 'completed' },
    });
    expect(turn.links).toEqual([{ traceId: first.traceId, spanId: opening.spanId, attributes: { 'a2a.link': 'task.origin' } }]);
    // The lease B took for the turn is an event on it; its store updates are counted.
    expect(turn.events).toContain('a2a.lease.acquire');
    expect(turn.attributes['a2a.store.updates']).toBeGreaterThanOrEqual(2);
  });
});
