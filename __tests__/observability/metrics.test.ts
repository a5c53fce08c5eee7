/**
 * createA2ARouter({ metrics }): the OpenTelemetry metrics after real requests, read through the SDK's
 * in-memory reader: tasks by final state, turn durations by outcome, cancels, live gauges, store calls.
 */
import { metrics as otelMetrics } from '@opentelemetry/api';
import { A2A_METRICS, A2AOptionsError, createA2ARouter, type AgentExecutor } from '../../lib';
import { routerObservability } from '../../lib/observability/router-observability';
import { deferred, until } from '../helpers/async';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { testMeter } from './helpers';
import { interceptSeam } from '../../lib/engine/seams/intercept';

/** The text of the message picks what the agent does. */
function scriptedAgent() {
  const running = deferred();
  const executor: AgentExecutor = {
    async execute(ctx, events) {
      switch (ctx.userText) {
        case 'reply':
          return events.reply('hello');
        case 'complete':
          await events.start('working');
          return events.complete('done');
        case 'fail':
          await events.start('working');
          throw new Error('the agent broke');
        case 'ask':
          return events.requireInput('which date?');
        case 'wait':
          await events.start('working');
          running.resolve();
          await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
          return;
      }
    },
  };
  return { executor, running: running.promise };
}

describe('metrics', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('counts tasks by final state, turns by outcome and cancels by outcome after real requests', async () => {
    const otel = testMeter();
    const { executor, running } = scriptedAgent();
    server = await startAgent(executor, { metrics: { meter: otel.meter }, cancelGracePeriodMs: 50 });

    expect((await rpc(server.url, 'SendMessage', userMessage('reply'))).body.result.message).toBeDefined();
    const completed = await rpc(server.url, 'SendMessage', userMessage('complete'));
    expect(completed.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const failed = await rpc(server.url, 'SendMessage', userMessage('fail'));
    expect(failed.body.result.task.status.state).toBe('TASK_STATE_FAILED');
    const parked = await rpc(server.url, 'SendMessage', userMessage('ask'));
    expect(parked.body.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');

    const started = await rpc(server.url, 'SendMessage', { ...userMessage('wait'), configuration: { returnImmediately: true } });
    await running;
    let collected = await otel.collect();
    expect(collected.value(A2A_METRICS.executionsActive)).toBe(1);
    expect(collected.metric(A2A_METRICS.executionsActive)?.descriptor.unit).toBe('{execution}');

    const canceled = await rpc(server.url, 'CancelTask', { id: started.body.result.task.id });
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
    await until(() => server!.router.liveExecutions === 0, 'no live execution');

    collected = await otel.collect();
    // Tasks by final state: the parked one has not finished.
    expect(collected.value(A2A_METRICS.tasksFinished, { 'a2a.task.state': 'completed' })).toBe(1);
    expect(collected.value(A2A_METRICS.tasksFinished, { 'a2a.task.state': 'failed' })).toBe(1);
    expect(collected.value(A2A_METRICS.tasksFinished, { 'a2a.task.state': 'canceled' })).toBe(1);
    expect(collected.value(A2A_METRICS.tasksFinished)).toBe(3);
    expect(collected.metric(A2A_METRICS.tasksFinished)?.descriptor.unit).toBe('{task}');

    // Turn durations by outcome, in seconds.
    const turns = collected.metric(A2A_METRICS.turnDuration);
    expect(turns?.descriptor.unit).toBe('s');
    expect(collected.value(A2A_METRICS.turnDuration, { 'a2a.turn.outcome': 'message' })).toBe(1);
    expect(collected.value(A2A_METRICS.turnDuration, { 'a2a.turn.outcome': 'completed' })).toBe(1);
    expect(collected.value(A2A_METRICS.turnDuration, { 'a2a.turn.outcome': 'failed' })).toBe(1);
    expect(collected.value(A2A_METRICS.turnDuration, { 'a2a.turn.outcome': 'input_required' })).toBe(1);
    expect(collected.value(A2A_METRICS.turnDuration, { 'a2a.turn.outcome': 'canceled' })).toBe(1);
    expect(collected.value(A2A_METRICS.turnDuration)).toBe(5);
    for (const point of collected.points(A2A_METRICS.turnDuration)) {
      expect(point.sum).toBeGreaterThanOrEqual(0);
      expect(point.sum).toBeLessThan(30); // seconds, not milliseconds
    }

    expect(collected.value(A2A_METRICS.cancelsAnswered, { 'a2a.cancel.outcome': 'canceled' })).toBe(1);

    expect(collected.value(A2A_METRICS.executionsActive)).toBe(0);
    expect(collected.value(A2A_METRICS.observersActive)).toBe(0);

    // The store was measured: every operation the requests used, none failed.
    for (const operation of ['get', 'create', 'update']) {
      expect(collected.value(A2A_METRICS.storeDuration, { 'a2a.store.operation': operation })).toBeGreaterThan(0);
    }
    expect(collected.metric(A2A_METRICS.storeDuration)?.descriptor.unit).toBe('s');
    expect(collected.value(A2A_METRICS.storeErrors)).toBe(0);
  });

  it('counts a CancelTask of a finished task as not_cancelable, and of a canceled one as canceled', async () => {
    const otel = testMeter();
    const { executor } = scriptedAgent();
    server = await startAgent(executor, { metrics: { meter: otel.meter } });
    const done = (await rpc(server.url, 'SendMessage', userMessage('complete'))).body.result.task;
    expect((await rpc(server.url, 'CancelTask', { id: done.id })).body.error.code).toBe(-32002);
    const parked = (await rpc(server.url, 'SendMessage', userMessage('ask'))).body.result.task;
    await rpc(server.url, 'CancelTask', { id: parked.id });
    await rpc(server.url, 'CancelTask', { id: parked.id }); // already canceled: answered as it is
    const collected = await otel.collect();
    expect(collected.value(A2A_METRICS.cancelsAnswered, { 'a2a.cancel.outcome': 'not_cancelable' })).toBe(1);
    expect(collected.value(A2A_METRICS.cancelsAnswered, { 'a2a.cancel.outcome': 'canceled' })).toBe(2);
  });

  it('reports streams among the live observers', async () => {
    const otel = testMeter();
    const { executor, running } = scriptedAgent();
    server = await startAgent(executor, { metrics: { meter: otel.meter }, cancelGracePeriodMs: 50 });
    const abort = new AbortController();
    const stream = fetch(server.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream', 'A2A-Version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendStreamingMessage', params: userMessage('wait') }),
      signal: abort.signal,
    });
    await running;
    const collected = await otel.collect();
    expect(collected.value(A2A_METRICS.executionsActive)).toBe(1);
    expect(collected.value(A2A_METRICS.observersActive)).toBe(1);
    abort.abort();
    await stream.then((response) => response.body?.cancel()).catch(() => {});
  });

  it('with metrics: true, records through the global MeterProvider of @opentelemetry/api', async () => {
    const otel = testMeter();
    otelMetrics.setGlobalMeterProvider(otel.provider);
    try {
      const { executor } = scriptedAgent();
      server = await startAgent(executor, { metrics: true });
      // The optional peer is imported asynchronously, settled long before listen() has returned.
      await rpc(server.url, 'SendMessage', userMessage('complete'));
      const collected = await otel.collect();
      expect(collected.value(A2A_METRICS.tasksFinished, { 'a2a.task.state': 'completed' })).toBe(1);
    } finally {
      otelMetrics.disable();
    }
  });

  it('is off by default: no listener, no hook, so the store is not wrapped for it', () => {
    const store = { get: jest.fn(), create: jest.fn(), update: jest.fn(), list: jest.fn() };
    const off = routerObservability({}, console);
    expect(off.events).toBeUndefined();
    expect(interceptSeam(store, 'taskStore', off.seamHooks(store))).toBe(store);
    const disabled = routerObservability({ metrics: false }, console);
    expect(disabled.events).toBeUndefined();
    expect(interceptSeam(store, 'taskStore', disabled.seamHooks(store))).toBe(store);
    // Metrics listen only to what they count: no per-event call.
    const on = routerObservability({ metrics: { meter: testMeter().meter } }, console);
    expect(Object.keys(on.events!).sort()).toEqual(['cancelAnswered', 'taskFinished', 'turnEnded']);
    expect(interceptSeam(store, 'taskStore', on.seamHooks(store))).not.toBe(store);
  });

  it('refuses a metrics option that is not true, false or { meter }', () => {
    for (const metrics of ['yes', {}, { meter: {} }, { api: {} }]) {
      expect(() => createA2ARouter({ agentCard: testCard, executor: { execute() {} }, metrics: metrics as never })).toThrow(A2AOptionsError);
    }
    expect(() => createA2ARouter({ agentCard: testCard, executor: { execute() {} }, metrics: 'yes' as never })).toThrow(/metrics/);
  });
});
