/**
 * startRetention(): sweeps a store through removeFinished() on a timer (fake timers here), in
 * batches until one comes back short, never two sweeps at once, a failing store logged once per
 * outage, stopped by the function it returns; a store without removeFinished() is refused.
 */
import { A2AOptionsError, InMemoryTaskStore, startRetention, type Task, type TaskScope, type TaskState } from 'a2a-express-kit';
import type { Logger } from '../../lib/options';

const NOW = Date.parse('2026-06-01T12:00:00.000Z');
const TTL = 60_000;
const INTERVAL = 1_000;
const scope: TaskScope = { tenant: 't', owner: 'o' };

let n = 0;
const task = (state: TaskState, finishedMsAgo: number): Task => ({
  id: `task-${++n}`,
  contextId: 'c',
  status: { state, timestamp: new Date(NOW - finishedMsAgo).toISOString() },
});

/** A logger that keeps what it was told, by level. */
function recordingLogger() {
  const lines: Array<{ level: keyof Logger; obj: object | string; msg?: string }> = [];
  const at = (level: keyof Logger) => (obj: object | string, msg?: string) => void lines.push({ level, obj, msg });
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines, count: (level: keyof Logger) => lines.filter((l) => l.level === level).length };
}

/** A promise resolved from outside. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

/** One interval: the first sweep comes within it (random start), later ones one interval apart. */
const nextInterval = () => jest.advanceTimersByTimeAsync(INTERVAL);

describe('startRetention', () => {
  it('removes the finished tasks older than the TTL in batches, and keeps newer and unfinished ones', async () => {
    const store = new InMemoryTaskStore();
    for (let i = 0; i < 7; i++) await store.create(scope, task('TASK_STATE_COMPLETED', TTL + 1 + i));
    const atCutoff = task('TASK_STATE_FAILED', TTL);
    const working = task('TASK_STATE_WORKING', TTL * 10);
    await store.create(scope, atCutoff);
    await store.create(scope, working);
    const calls: Array<[string, number]> = [];
    const remove = store.removeFinished.bind(store);
    store.removeFinished = (before, limit) => (calls.push([before, limit]), remove(before, limit));
    const log = recordingLogger();

    const stop = startRetention({ store, ttlMs: TTL, intervalMs: INTERVAL, batchSize: 3, logger: log.logger, now: () => NOW });
    await nextInterval();
    // 3 + 3 + 1: the short batch ends the sweep.
    expect(calls).toEqual([0, 1, 2].map(() => [new Date(NOW - TTL).toISOString(), 3]));
    expect(store.size).toBe(2);
    expect((await store.list(scope, { pageSize: 10 })).tasks.map((t) => t.id).sort()).toEqual([atCutoff.id, working.id].sort());
    expect(log.lines.filter((l) => l.level === 'info')).toEqual([
      { level: 'info', obj: expect.objectContaining({ removed: 7 }), msg: 'retention: removed finished tasks' },
    ]);

    // The next sweep finds nothing: one call, logged at debug only.
    await nextInterval();
    expect(calls).toHaveLength(4);
    expect(log.count('info')).toBe(1);
    await stop();
  });

  it('never runs two sweeps at once: the next is scheduled when one ends', async () => {
    const store = new InMemoryTaskStore();
    const pending = deferred<number>();
    let calls = 0;
    store.removeFinished = () => (calls++, calls === 1 ? pending.promise : Promise.resolve(0));
    const stop = startRetention({ store, ttlMs: TTL, intervalMs: INTERVAL, logger: recordingLogger().logger, now: () => NOW });
    await nextInterval();
    expect(calls).toBe(1);
    for (let i = 0; i < 10; i++) await nextInterval();
    expect(calls).toBe(1);
    pending.resolve(0);
    await nextInterval();
    expect(calls).toBe(2);
    await stop();
  });

  it('logs a failing store once per outage, then once when it works again', async () => {
    const store = new InMemoryTaskStore();
    let failing = true;
    store.removeFinished = async () => {
      if (failing) throw new Error('connection lost');
      return 0;
    };
    const log = recordingLogger();
    const stop = startRetention({ store, ttlMs: TTL, intervalMs: INTERVAL, logger: log.logger, now: () => NOW });
    for (let i = 0; i < 5; i++) await nextInterval();
    expect(log.count('warn')).toBe(1);
    expect(log.lines.find((l) => l.level === 'warn')?.obj).toEqual(
      expect.objectContaining({ err: expect.objectContaining({ message: 'connection lost' }) }),
    );
    failing = false;
    await nextInterval();
    await nextInterval();
    expect(log.lines.filter((l) => l.level === 'info').map((l) => l.msg)).toEqual(['retention: the store works again']);
    // A new outage is a new warning.
    failing = true;
    await nextInterval();
    await nextInterval();
    expect(log.count('warn')).toBe(2);
    expect(log.count('error')).toBe(0);
    await stop();
  });

  it('stop() waits for the sweep in progress, which ends after its current batch; no sweep follows', async () => {
    const store = new InMemoryTaskStore();
    const pending = deferred<number>();
    let calls = 0;
    // Every batch comes back full: only stop() ends this sweep.
    store.removeFinished = (_before, limit) => (calls++, calls === 1 ? pending.promise : Promise.resolve(limit));
    const stop = startRetention({ store, ttlMs: TTL, intervalMs: INTERVAL, batchSize: 5, logger: recordingLogger().logger, now: () => NOW });
    await nextInterval();
    let stopped = false;
    const stopping = stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    pending.resolve(5);
    await stopping;
    expect(calls).toBe(1);
    for (let i = 0; i < 5; i++) await nextInterval();
    expect(calls).toBe(1);
  });

  it('never keeps the process alive (unref), and leaves no timer behind once stopped', async () => {
    const store = new InMemoryTaskStore();
    const spy = jest.spyOn(global, 'setTimeout');
    const stop = startRetention({ store, ttlMs: TTL, intervalMs: INTERVAL, logger: recordingLogger().logger, now: () => NOW });
    const timer = spy.mock.results[spy.mock.results.length - 1].value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    spy.mockRestore();
    await stop();
    expect(jest.getTimerCount()).toBe(0);
  });

  it('refuses a store without removeFinished(), and names a bad option', () => {
    const store = new InMemoryTaskStore();
    const bare = { get: store.get.bind(store), create: store.create.bind(store), update: store.update.bind(store), list: store.list.bind(store) };
    expect(() => startRetention({ store: bare, ttlMs: TTL })).toThrow(A2AOptionsError);
    expect(() => startRetention({ store: bare, ttlMs: TTL })).toThrow(/removeFinished/);
    expect(() => startRetention({ store, ttlMs: 10 })).toThrow(/startRetention: option "ttlMs"/);
    expect(() => startRetention({ store, ttlMs: TTL, intervalMS: 5 } as never)).toThrow(/did you mean "intervalMs"/);
  });
});
