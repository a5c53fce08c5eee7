/**
 * Guarantee 1: execute() for each message runs in the AsyncLocalStorage context of the HTTP request
 * that carried that message (turn 1 and turn 2 of a task alike, blocking and streaming, queued or
 * not); store writes made for the message run there too; cancel() runs in the CancelTask request's.
 * Over both bindings (JSON-RPC and HTTP+JSON).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import express from 'express';
import { InMemoryTaskStore, type AgentExecutor, type Task, type TaskScope } from '../../lib';
import { deferred, until } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { a2aClient, BINDINGS } from '../helpers/bindings';

const als = new AsyncLocalStorage<string>();
/** The host app's own middleware: an ALS value taken from a header (as auth or tracing would). */
const fromHeader: express.RequestHandler = (req, _res, next) => als.run(req.get('x-turn') ?? 'none', next);

interface Seen {
  taskId: string;
  turn: string | undefined;
  userText: string;
}

/** Records ALS values seen by every store write, tagged with the task id. */
class RecordingStore extends InMemoryTaskStore {
  readonly writes: Seen[] = [];
  override async create(scope: TaskScope, task: Task) {
    this.writes.push({ taskId: task.id, turn: als.getStore(), userText: lastUserText(task) });
    return super.create(scope, task);
  }
  override async update(scope: TaskScope, task: Task, expectedVersion: number) {
    this.writes.push({ taskId: task.id, turn: als.getStore(), userText: lastUserText(task) });
    return super.update(scope, task, expectedVersion);
  }
}

function lastUserText(task: Task): string {
  const users = (task.history ?? []).filter((m) => m.role === 'ROLE_USER');
  const last = users[users.length - 1];
  const part = last?.parts[0];
  return part && 'text' in part ? (part.text ?? '') : '';
}

function bookingAgent(seen: Seen[], cancels: (string | undefined)[] = []): AgentExecutor {
  return {
    async execute(ctx, events) {
      seen.push({ taskId: ctx.taskId, turn: als.getStore(), userText: ctx.userText });
      // Let other requests interleave before we publish.
      await new Promise((resolve) => setImmediate(resolve));
      if (ctx.task) {
        await events.start();
        await events.complete(`booked for ${ctx.userText}`);
      } else await events.requireInput('which day?');
    },
    async cancel(_ctx, events) {
      cancels.push(als.getStore());
      await events.canceled();
    },
  };
}

const cases = BINDINGS.flatMap((binding) => [false, true].map((hostJson) => [binding, hostJson] as const));

describe.each(cases)('per-message async context over %s (host express.json(): %s)', (binding, hostJson) => {
  let server: TestServer;
  const a2a = () => a2aClient(binding, server.url);
  let seen: Seen[];
  let cancels: (string | undefined)[];
  let store: RecordingStore;

  beforeEach(async () => {
    seen = [];
    cancels = [];
    store = new RecordingStore();
    server = await startAgent(bookingAgent(seen, cancels), { before: [fromHeader], hostJson, taskStore: store });
  });
  afterEach(() => server.close());

  it('blocking: turn 1 and turn 2 each run in their own request context, store writes too', async () => {
    const first = await a2a().call('SendMessage', userMessage('book a flight'), { headers: { 'x-turn': 'turn-1' } });
    const task = first.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const second = await a2a().call('SendMessage', userMessage('Friday', { taskId: task.id }), { headers: { 'x-turn': 'turn-2' } });
    expect(second.result.task.status.state).toBe('TASK_STATE_COMPLETED');

    expect(seen.map((s) => s.turn)).toEqual(['turn-1', 'turn-2']);
    const writes = store.writes.filter((w) => w.taskId === task.id);
    expect(writes.length).toBeGreaterThanOrEqual(3);
    for (const write of writes) expect(write.turn).toBe(write.userText === 'Friday' ? 'turn-2' : 'turn-1');
  });

  it('streaming: turn 1 and turn 2 each run in their own request context', async () => {
    const first = await a2a().stream('SendStreamingMessage', userMessage('book a flight'), { headers: { 'x-turn': 's-1' } });
    const taskId = first.events[0].task.id;
    const second = await a2a().stream('SendStreamingMessage', userMessage('Friday', { taskId }), { headers: { 'x-turn': 's-2' } });
    expect(second.events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(seen.map((s) => s.turn)).toEqual(['s-1', 's-2']);
    for (const write of store.writes) expect(write.turn).toBe(write.userText === 'Friday' ? 's-2' : 's-1');
  });

  it('cancel() runs in the CancelTask request context, and so does the CANCELED write', async () => {
    const first = await a2a().call('SendMessage', userMessage('book a flight'), { headers: { 'x-turn': 'creator' } });
    const taskId = first.result.task.id;
    const canceled = await a2a().call('CancelTask', { id: taskId }, { headers: { 'x-turn': 'canceller' } });
    expect(canceled.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(cancels).toEqual(['canceller']);
    expect(store.writes.at(-1)).toMatchObject({ taskId, turn: 'canceller' });
  });

  it('40 concurrent two-turn tasks, blocking and streaming mixed: no context bleeds', async () => {
    const runs = Array.from({ length: 40 }, async (_, i) => {
      const streaming = i % 2 === 1;
      const one = `t${i}-1`;
      const two = `t${i}-2`;
      let taskId: string;
      if (streaming) {
        const r = await a2a().stream('SendStreamingMessage', userMessage(`book ${i}`), { headers: { 'x-turn': one } });
        taskId = r.events[0].task.id;
        await a2a().stream('SendStreamingMessage', userMessage(`day ${i}`, { taskId }), { headers: { 'x-turn': two } });
      } else {
        const r = await a2a().call('SendMessage', userMessage(`book ${i}`), { headers: { 'x-turn': one } });
        taskId = r.result.task.id;
        await a2a().call('SendMessage', userMessage(`day ${i}`, { taskId }), { headers: { 'x-turn': two } });
      }
      return { i, taskId };
    });
    const tasks = await Promise.all(runs);
    let mismatches = 0;
    for (const { i, taskId } of tasks) {
      for (const s of seen.filter((x) => x.taskId === taskId)) {
        if (s.turn !== `t${i}-${s.userText.startsWith('day') ? 2 : 1}`) mismatches++;
      }
      for (const w of store.writes.filter((x) => x.taskId === taskId)) {
        if (w.turn !== `t${i}-${w.userText.startsWith('day') ? 2 : 1}`) mismatches++;
      }
    }
    expect(seen).toHaveLength(80);
    expect(mismatches).toBe(0);
  });
});

describe.each(BINDINGS)('a follow-up queued behind a running turn, over %s', (binding) => {
  it('runs in its own request context, not the one of the turn it waited for', async () => {
    const seen: (string | undefined)[] = [];
    const gate = deferred();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        seen.push(als.getStore());
        if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') return events.complete('done');
        await events.start('thinking');
        await gate.promise;
        await events.requireInput('more?');
      },
    };
    const server = await startAgent(executor, { before: [fromHeader] });
    const a2a = () => a2aClient(binding, server.url);
    try {
      const first = await a2a().call(
        'SendMessage',
        { ...userMessage('go'), configuration: { returnImmediately: true } },
        { headers: { 'x-turn': 'first' } },
      );
      const taskId = first.result.task.id;
      expect(first.result.task.status.state).toBe('TASK_STATE_WORKING');
      const second = a2a().call('SendMessage', userMessage('follow-up', { taskId }), { headers: { 'x-turn': 'queued' } });
      // The first call's observer stays attached until its turn ends; the queued follow-up adds one.
      await until(() => server.router.liveObservers === 2, 'follow-up queued');
      expect(seen).toEqual(['first']);
      gate.resolve();
      const reply = await second;
      expect(reply.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(seen).toEqual(['first', 'queued']);
      expect(server.router.liveExecutions).toBe(0);
    } finally {
      await server.close();
    }
  });
});
