/**
 * Task store metrics: latency by operation and failures by operation and kind, through
 * instrumentTaskStore() directly and through the router with a store that fails.
 */
import {
  A2A_METRICS,
  InMemoryTaskStore,
  TaskVersionConflictError,
  instrumentTaskStore,
  type AgentExecutor,
  type Task,
  type TaskStore,
} from '../../lib';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { testMeter } from './helpers';

const scope = { tenant: '', owner: 'alice' };
const task = (id: string): Task => ({ id, contextId: 'c1', status: { state: 'TASK_STATE_WORKING', timestamp: new Date().toISOString() } });

describe('instrumentTaskStore', () => {
  it('records every call by operation, and each failure by its kind', async () => {
    const otel = testMeter();
    const store = instrumentTaskStore(new InMemoryTaskStore(), otel.meter);

    const version = await store.create(scope, task('t1'));
    expect((await store.get(scope, 't1'))?.version).toBe(version);
    await store.update(scope, task('t1'), version);
    await store.list(scope, { pageSize: 10 });

    await expect(store.create(scope, task('t1'))).rejects.toThrow('already exists');
    await expect(store.update(scope, task('t1'), version)).rejects.toBeInstanceOf(TaskVersionConflictError);
    await expect(store.update(scope, task('missing'), 1)).rejects.toThrow('does not exist');
    await expect(store.list(scope, { pageSize: 10, pageToken: 'not-a-token' })).rejects.toThrow('pageToken');

    const collected = await otel.collect();
    const calls = (operation: string, errorType?: string) =>
      collected
        .points(A2A_METRICS.storeDuration)
        .filter((p) => p.attributes['a2a.store.operation'] === operation && p.attributes['error.type'] === errorType)[0]?.value ?? 0;
    expect([calls('create'), calls('get'), calls('update'), calls('list')]).toEqual([1, 1, 1, 1]);
    expect(calls('create', 'exists')).toBe(1);
    expect(calls('update', 'conflict')).toBe(1);
    expect(calls('update', 'not_found')).toBe(1);
    expect(calls('list', 'invalid_token')).toBe(1);

    expect(collected.value(A2A_METRICS.storeErrors)).toBe(4);
    expect(collected.value(A2A_METRICS.storeErrors, { 'a2a.store.operation': 'update', 'error.type': 'conflict' })).toBe(1);
    expect(collected.value(A2A_METRICS.storeErrors, { 'a2a.store.operation': 'create', 'error.type': 'exists' })).toBe(1);
    expect(collected.metric(A2A_METRICS.storeErrors)?.descriptor.unit).toBe('{error}');
    for (const point of collected.points(A2A_METRICS.storeDuration)) expect(point.sum).toBeLessThan(1); // seconds
  });

  it('passes results and errors through unchanged, a synchronous throw too', async () => {
    const otel = testMeter();
    const boom = new Error('connection lost');
    const failing: TaskStore = {
      get: () => Promise.reject(boom),
      create: () => {
        throw boom;
      },
      update: async () => 7,
      list: async () => ({ tasks: [], nextPageToken: '', totalSize: 0 }),
    };
    const store = instrumentTaskStore(failing, otel.meter);
    await expect(store.get(scope, 'x')).rejects.toBe(boom);
    expect(() => store.create(scope, task('x'))).toThrow(boom);
    await expect(store.update(scope, task('x'), 6)).resolves.toBe(7);
    const collected = await otel.collect();
    expect(collected.value(A2A_METRICS.storeErrors, { 'a2a.store.operation': 'get', 'error.type': 'unavailable' })).toBe(1);
    expect(collected.value(A2A_METRICS.storeErrors, { 'a2a.store.operation': 'create', 'error.type': 'unavailable' })).toBe(1);
  });
});

describe('store metrics through the router', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('counts the failures of a store that is down, and the requests are answered', async () => {
    const otel = testMeter();
    const inner = new InMemoryTaskStore();
    let down = false;
    const flaky: TaskStore = {
      get: (s, id) => (down ? Promise.reject(new Error('ECONNRESET')) : inner.get(s, id)),
      create: (s, t) => (down ? Promise.reject(new Error('ECONNRESET')) : inner.create(s, t)),
      update: (s, t, v, c) => (down ? Promise.reject(new Error('ECONNRESET')) : inner.update(s, t, v, c)),
      list: (s, q) => (down ? Promise.reject(new Error('ECONNRESET')) : inner.list(s, q)),
    };
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.complete('done');
      },
    };
    server = await startAgent(executor, { taskStore: flaky, metrics: { meter: otel.meter } });

    const ok = await rpc(server.url, 'SendMessage', userMessage('hi'));
    expect(ok.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    down = true;
    const get = await rpc(server.url, 'GetTask', { id: ok.body.result.task.id });
    expect(get.body.error.code).toBe(-32603);
    const list = await rpc(server.url, 'ListTasks', {});
    expect(list.body.error.code).toBe(-32603);
    const send = await rpc(server.url, 'SendMessage', userMessage('hi'));
    expect(send.body.error ?? send.body.result).toBeDefined();

    const collected = await otel.collect();
    expect(collected.value(A2A_METRICS.storeErrors, { 'a2a.store.operation': 'get', 'error.type': 'unavailable' })).toBe(1);
    expect(collected.value(A2A_METRICS.storeErrors, { 'a2a.store.operation': 'list', 'error.type': 'unavailable' })).toBe(1);
    expect(collected.value(A2A_METRICS.storeErrors, { 'a2a.store.operation': 'create', 'error.type': 'unavailable' })).toBeGreaterThanOrEqual(1);
    // Before it went down, the calls were measured without error.type.
    const succeeded = collected.points(A2A_METRICS.storeDuration).filter((p) => p.attributes['error.type'] === undefined);
    expect(succeeded.map((p) => p.attributes['a2a.store.operation'])).toContain('create');
  });
});
