/**
 * Guarantee 2: after a direct Message reply, an interrupted state, a terminal state or a cancel, the
 * engine holds nothing for the task: no live execution, no observer, no timer. Parked tasks live in
 * the store only, and a follow-up rebuilds from the store. Over both bindings (JSON-RPC and HTTP+JSON).
 */
import path from 'node:path';
import type { AgentExecutor } from '../../lib';
import { InMemoryTaskStore } from '../../lib';
import { pgStore, redisStore, startAgent, storeLatency, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { a2aClient, BINDINGS } from '../helpers/bindings';

const executor: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'message') return events.reply('hi');
    if (ctx.userText === 'complete') {
      await events.start();
      return events.complete('done');
    }
    if (ctx.task) return events.complete('resumed');
    return events.requireInput('more?');
  },
  async cancel(_ctx, events) {
    await events.canceled();
  },
};

/**
 * Requests of each kind. The in-memory Express 5 run is the load test (500 of each, concurrent); the
 * variant projects (Express 4, a slow store, Redis, PostgreSQL) check the same assertions on 200 of
 * each. The assertions are exact (nothing left, not "little growth"), so one leaked request fails them
 * as surely as a thousand: the count only has to make the requests overlap.
 */
const variant = storeLatency || redisStore || pgStore || (globalThis as { EXPRESS_MAJOR?: number }).EXPRESS_MAJOR === 4;
const N = variant ? 200 : 500;

const LIB = path.resolve(__dirname, '../../lib') + path.sep;

/**
 * Timers the library started and has not cleared (a timeout: not yet fired), ref'd or not. The SSE
 * heartbeat is unref'd, so a process-wide count of active timers would not see it leak; that count
 * also moves with unrelated timers (the test runner's, the HTTP client's) on a loaded machine.
 */
const libraryTimers = new Set<unknown>();
const real = { setTimeout, setInterval, clearTimeout, clearInterval };
/** Whether the caller of the timer function lives in lib/ (raw call sites: cheap, no source maps). */
function fromLibrary(): boolean {
  const { prepareStackTrace, stackTraceLimit } = Error;
  Error.prepareStackTrace = (_error, frames) => frames;
  Error.stackTraceLimit = 3;
  const frames = new Error().stack as unknown as NodeJS.CallSite[];
  Error.prepareStackTrace = prepareStackTrace;
  Error.stackTraceLimit = stackTraceLimit;
  // [0] fromLibrary, [1] the wrapper below, [2] its caller.
  return frames[2]?.getFileName()?.startsWith(LIB) ?? false;
}
function trackLibraryTimers(): void {
  global.setTimeout = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    if (!fromLibrary()) return real.setTimeout(callback, ms, ...args);
    const timer = real.setTimeout(
      (...fired: unknown[]) => {
        libraryTimers.delete(timer);
        callback(...fired);
      },
      ms,
      ...args,
    );
    libraryTimers.add(timer);
    return timer;
  }) as typeof setTimeout;
  global.setInterval = ((callback: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => {
    const timer = real.setInterval(callback, ms, ...args);
    if (fromLibrary()) libraryTimers.add(timer);
    return timer;
  }) as typeof setInterval;
  global.clearTimeout = ((timer?: NodeJS.Timeout) => {
    libraryTimers.delete(timer);
    real.clearTimeout(timer);
  }) as typeof clearTimeout;
  global.clearInterval = ((timer?: NodeJS.Timeout) => {
    libraryTimers.delete(timer);
    real.clearInterval(timer);
  }) as typeof clearInterval;
}
const untrackLibraryTimers = () => Object.assign(global, real);
const noLibraryTimerLeft = () => expect(libraryTimers.size).toBe(0);

describe.each(BINDINGS)('no leaked task state, over %s', (binding) => {
  let server: TestServer;
  const a2a = () => a2aClient(binding, server.url);
  // In the redis and postgres projects the server runs on that project's store (startAgent's default).
  let store: InMemoryTaskStore | undefined;
  beforeAll(trackLibraryTimers);
  afterAll(untrackLibraryTimers);
  beforeEach(async () => {
    store = redisStore || pgStore ? undefined : new InMemoryTaskStore();
    server = await startAgent(executor, { ...(store && { taskStore: store }), heartbeatIntervalMs: 50 });
  });
  afterEach(() => server.close());

  async function inBatches(n: number, one: (i: number) => Promise<void>) {
    for (let i = 0; i < n; i += 50) await Promise.all(Array.from({ length: Math.min(50, n - i) }, (_, k) => one(i + k)));
  }

  it(`${N} requests each of message / completed / input-required / cancel-of-parked leave nothing live`, async () => {
    await inBatches(N, async () => {
      const r = await a2a().call('SendMessage', userMessage('message'));
      expect(r.result.message).toBeDefined();
    });
    await inBatches(N, async () => {
      const r = await a2a().call('SendMessage', userMessage('complete'));
      expect(r.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    });
    const parked: string[] = [];
    await inBatches(N, async () => {
      const r = await a2a().call('SendMessage', userMessage('park'));
      expect(r.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      parked.push(r.result.task.id);
    });
    expect(server.router.liveExecutions).toBe(0);
    await inBatches(N, async (i) => {
      const r = await a2a().call('CancelTask', { id: parked[i] });
      expect(r.result.status.state).toBe('TASK_STATE_CANCELED');
    });
    expect(server.router.liveExecutions).toBe(0);
    expect(server.router.liveObservers).toBe(0);
    noLibraryTimerLeft();
    // Completed and canceled tasks are in the store; direct replies left nothing there.
    if (store) expect(store.size).toBe(2 * N);
  }, 120_000);

  it('streams release their observers and heartbeat timers when the task parks or ends', async () => {
    const runs = Array.from({ length: 50 }, async () => {
      const first = await a2a().stream('SendStreamingMessage', userMessage('park'));
      const taskId = first.events[0].task.id;
      await a2a().stream('SendStreamingMessage', userMessage('again', { taskId }));
      await a2a().stream('SendStreamingMessage', userMessage('message'));
    });
    await Promise.all(runs);
    expect(server.router.liveExecutions).toBe(0);
    expect(server.router.liveObservers).toBe(0);
    noLibraryTimerLeft();
  });

  it('a follow-up on a parked task is rebuilt from the store', async () => {
    const first = await a2a().call('SendMessage', userMessage('park'));
    const taskId = first.result.task.id;
    expect(server.router.liveExecutions).toBe(0);
    const second = await a2a().call('SendMessage', userMessage('go on', { taskId }));
    expect(second.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(second.result.task.history.map((m: { parts: { text: string }[] }) => m.parts[0].text)).toEqual(['park', 'more?', 'go on', 'resumed']);
    expect(server.router.liveExecutions).toBe(0);
  });
});
