/**
 * Resumable streams and start-up settlement. Every stored event carries its store version as the
 * SSE `id:`; SubscribeToTask with `Last-Event-ID` resumes after it (the in-process bus keeps no
 * history: a client that missed events gets the task as it stands, one that missed nothing gets no
 * snapshot). A store one process owns (`findUnfinished`) has the tasks a dead process left mid-turn
 * FAILED before any request is answered; parked and finished tasks are left alone.
 */
import { randomUUID } from 'node:crypto';
import { InMemoryTaskStore, type AgentExecutor, type Task, type TaskScope } from '../../lib';
import { deferred, type Deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { a2aClient, BINDINGS } from '../helpers/bindings';

let gate: Deferred;
let started: Deferred;

const executor: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'gated') {
      await events.start('waiting');
      started.resolve();
      await gate.promise;
      await events.progress('released');
      return events.complete('finished');
    }
    await events.start();
    await events.progress('one');
    await events.progress('two');
    return events.complete('done');
  },
};

describe.each(BINDINGS)('stream event ids and Last-Event-ID over %s', (binding) => {
  let server: TestServer;
  const a2a = () => a2aClient(binding, server.url);
  beforeEach(async () => {
    gate = deferred();
    started = deferred();
    server = await startAgent(executor);
  });
  afterEach(async () => {
    gate.resolve();
    await server.close();
  });

  it('gives every stored event its store version as the SSE id, increasing', async () => {
    const response = await a2a().open('SendStreamingMessage', userMessage('go'));
    const ids: number[] = [];
    for await (const item of a2a().events(response)) ids.push(Number(item.id));
    expect(ids.length).toBeGreaterThanOrEqual(4);
    expect(ids.every(Number.isInteger)).toBe(true);
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]);
  });

  it('resumes after the last event seen: no snapshot when nothing was missed, then live events', async () => {
    const sent = await a2a().call('SendMessage', { ...userMessage('gated'), configuration: { returnImmediately: true } });
    const taskId: string = sent.result.task.id;
    await started.promise;
    // The first subscription: its snapshot's id is the version the client has seen.
    const leave = new AbortController();
    const first = await a2a().open('SubscribeToTask', { id: taskId }, { signal: leave.signal });
    const firstEvents = a2a().events(first);
    const snapshot = (await firstEvents.next()).value!;
    expect(snapshot.event.task.id).toBe(taskId);
    const seen = snapshot.id!;
    leave.abort();
    await firstEvents.return(undefined).catch(() => undefined);

    const resumed = await a2a().open('SubscribeToTask', { id: taskId }, { headers: { 'Last-Event-ID': seen } });
    gate.resolve();
    const events: { event?: any; id?: string }[] = [];
    for await (const item of a2a().events(resumed)) events.push(item);
    // No Task snapshot first: the client had the task at `seen`; only what came after it.
    expect(events.some((e) => e.event.task)).toBe(false);
    expect(events.map((e) => e.event.statusUpdate?.status.state)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    expect(Number(events[0].id)).toBeGreaterThan(Number(seen));
  });

  it('sends the task as it stands when events were missed (the in-process bus keeps no history)', async () => {
    const sent = await a2a().call('SendMessage', { ...userMessage('gated'), configuration: { returnImmediately: true } });
    const taskId: string = sent.result.task.id;
    await started.promise;
    // Version 0 comes before the task's first write: everything was missed.
    const resumed = await a2a().open('SubscribeToTask', { id: taskId }, { headers: { 'Last-Event-ID': '0' } });
    const events = a2a().events(resumed);
    const first = (await events.next()).value!;
    expect(first.event.task.status.state).toBe('TASK_STATE_WORKING');
    expect(Number(first.id)).toBeGreaterThanOrEqual(1);
    gate.resolve();
    const rest = [];
    for await (const item of events) rest.push(item.event.statusUpdate?.status.state);
    expect(rest.at(-1)).toBe('TASK_STATE_COMPLETED');
  });
});

/** An in-memory store that also answers findUnfinished, as a store one process owns does. */
class OwnedStore extends InMemoryTaskStore {
  readonly scopes = new Map<string, TaskScope>();
  override async create(scope: TaskScope, task: Task): Promise<number> {
    const version = await super.create(scope, task);
    this.scopes.set(task.id, scope);
    return version;
  }
  async findUnfinished(): Promise<Array<{ scope: TaskScope; taskId: string }>> {
    const found = [];
    for (const [taskId, scope] of this.scopes) {
      const stored = await this.get(scope, taskId);
      const state = stored?.task.status.state;
      if (state === 'TASK_STATE_SUBMITTED' || state === 'TASK_STATE_WORKING') found.push({ scope, taskId });
    }
    return found;
  }
}

const taskIn = (state: string): Task =>
  ({
    id: randomUUID(),
    contextId: randomUUID(),
    kind: 'task',
    status: { state, timestamp: new Date().toISOString() },
  }) as unknown as Task;

describe('start-up settlement of a store one process owns', () => {
  it('fails what the previous process left mid-turn before answering any request, and leaves parked and finished tasks', async () => {
    const store = new OwnedStore();
    // The anonymous caller's scope on the default tenant, as the server will resolve it.
    const scope: TaskScope = { tenant: '', owner: 'anonymous' };
    const working = taskIn('TASK_STATE_WORKING');
    const submitted = taskIn('TASK_STATE_SUBMITTED');
    const parked = taskIn('TASK_STATE_INPUT_REQUIRED');
    const done = taskIn('TASK_STATE_COMPLETED');
    for (const task of [working, submitted, parked, done]) await store.create(scope, task);

    const server = await startAgent(executor, {
      taskStore: store,
      callContext: () => ({ caller: { id: 'anonymous', authenticated: false }, tenant: '' }),
    });
    try {
      const client = a2aClient('jsonrpc', server.url);
      const states = await Promise.all(
        [working, submitted, parked, done].map(async (task) => (await client.call('GetTask', { id: task.id })).result),
      );
      expect(states.map((task) => task.status.state)).toEqual([
        'TASK_STATE_FAILED',
        'TASK_STATE_FAILED',
        'TASK_STATE_INPUT_REQUIRED',
        'TASK_STATE_COMPLETED',
      ]);
      expect(JSON.stringify(states[0].status.message)).toMatch(/restarted/);
      expect(server.router.liveExecutions).toBe(0);
    } finally {
      await server.close();
    }
  });
});
