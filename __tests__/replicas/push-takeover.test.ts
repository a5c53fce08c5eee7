/**
 * Durable push across replicas on one Redis: replica A commits a task's events while the webhook
 * receiver answers 503 and is SIGKILLed before delivering any; once A's delivery claim expires,
 * replica B takes the deliveries over and every event A committed arrives, in order, followed by
 * the FAILED status B settles the orphaned task with.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { StreamResponse } from 'a2a-express-kit';
import { until } from '../helpers/async';
import { rpc, userMessage } from '../helpers/http';
import { redisForTests } from '../helpers/redis';
import { startReceiver, type Receiver } from '../push/receiver';

const SERVER = path.resolve(__dirname, '..', 'helpers', 'push-replica-server.ts');
const HEADERS = { 'x-user': 'push-user', 'x-tenant': 'push-tenant' };
const LEASE_TTL_MS = 1_000;

type Line = { kind: 'event'; replica: string; taskId: string; event: StreamResponse } | { kind: 'holding'; taskId: string };

interface Replica {
  readonly url: string;
  readonly lines: Line[];
  readonly child: ChildProcessByStdio<null, Readable, Readable>;
  readonly exited: Promise<NodeJS.Signals | number | null>;
  printed(match: (line: Line) => boolean): Promise<void>;
}

function startReplica(name: string, redisUrl: string, keyPrefix: string): Promise<Replica> {
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER], {
    cwd: path.resolve(__dirname, '..', '..'),
    env: { ...process.env, NAME: name, REDIS_URL: redisUrl, KEY_PREFIX: keyPrefix, LEASE_TTL_MS: String(LEASE_TTL_MS) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const lines: Line[] = [];
  const waiters = new Set<() => void>();
  return new Promise((resolve, reject) => {
    let buffer = '';
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      let end: number;
      while ((end = buffer.indexOf('\n')) >= 0) {
        const text = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        const ready = /^READY (\d+)$/.exec(text);
        if (ready) {
          resolve({
            url: `http://127.0.0.1:${ready[1]}/agent`,
            lines,
            child,
            exited,
            printed: (match) =>
              new Promise<void>((done) => {
                const check = () => (lines.some(match) ? (waiters.delete(check), done()) : undefined);
                waiters.add(check);
                check();
              }),
          });
        } else if (text.startsWith('{')) {
          lines.push(JSON.parse(text) as Line);
          for (const waiter of [...waiters]) waiter();
        }
      }
    });
    void exited.then((how) => reject(new Error(`replica ${name} exited (${String(how)}) before READY: ${err}`)));
  });
}

const eventsOf = (replica: Replica, taskId: string): StreamResponse[] =>
  replica.lines.flatMap((line) => (line.kind === 'event' && line.taskId === taskId ? [line.event] : []));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const stateOf = (event: any): string | undefined => (event.statusUpdate?.status ?? event.task?.status)?.state;
const withoutRepeats = (bodies: unknown[]): unknown[] => bodies.filter((body, i) => i === 0 || JSON.stringify(body) !== JSON.stringify(bodies[i - 1]));

const redis = redisForTests();

(redis.available ? describe : describe.skip)('push deliveries taken over by another replica', () => {
  const replicas: Replica[] = [];
  let receiver: Receiver;
  let up = false;

  beforeAll(async () => {
    receiver = await startReceiver(() => ({ status: up ? 200 : 503 }));
  });
  afterAll(async () => {
    for (const replica of replicas) {
      if (replica.child.exitCode === null && replica.child.signalCode === null) {
        replica.child.kill('SIGKILL');
        await replica.exited;
      }
    }
    await receiver.close();
    await redis.stop();
  }, 20_000);

  it('delivers on B every event A committed before it was killed, in order', async () => {
    const url = await redis.url();
    const prefix = `a2a-push-takeover-${randomUUID()}:`;
    const [a, b] = await Promise.all([startReplica('A', url, prefix), startReplica('B', url, prefix)]);
    replicas.push(a, b);

    const parked = await rpc(a.url, 'SendMessage', userMessage('park'), { headers: HEADERS });
    const taskId: string = parked.body.result.task.id;
    const created = await rpc(a.url, 'CreateTaskPushNotificationConfig', { taskId, url: receiver.url, token: 'tok-a' }, { headers: HEADERS });
    expect(created.body.error).toBeUndefined();
    const followUp = await rpc(a.url, 'SendMessage', { ...userMessage('work:3', { taskId }), configuration: { returnImmediately: true } }, { headers: HEADERS });
    expect(followUp.body.error).toBeUndefined();
    await a.printed((line) => line.kind === 'holding' && line.taskId === taskId);
    await receiver.requestCount(1);
    a.child.kill('SIGKILL');
    expect(await a.exited).toBe('SIGKILL');
    expect(receiver.delivered).toEqual([]);
    const all = eventsOf(a, taskId);
    const committed = all.slice(all.findIndex((event) => stateOf(event) === 'TASK_STATE_INPUT_REQUIRED') + 1);
    expect(committed).toHaveLength(4); // WORKING and 3 progress updates
    up = true;

    // B settles the orphan once A's task lease expires, and takes A's deliveries over once its claim does.
    await b.printed((line) => line.kind === 'event' && line.taskId === taskId && stateOf(line.event) === 'TASK_STATE_FAILED');
    const expected = [...committed, ...eventsOf(b, taskId)];
    await until(() => withoutRepeats(receiver.delivered.map((r) => r.body)).length >= expected.length, 'every event delivered', 15_000);
    expect(withoutRepeats(receiver.delivered.map((r) => r.body))).toEqual(expected);
    for (const request of receiver.delivered) expect(request.headers['x-a2a-notification-token']).toBe('tok-a');
  }, 40_000);
});
