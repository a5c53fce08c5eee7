/**
 * Background work: execute() hands its turn off (`events.handOff()`) to a queue worker, which
 * publishes the task's later events through `router.openTaskPublisher()`. The turn stays open (a
 * blocking send waits, a stream follows), a CancelTask reaches both cancel() and the worker's
 * signal, scoping holds, nothing stays in memory, and the worker writes in its own async context.
 * Over both bindings (JSON-RPC and HTTP+JSON).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import express from 'express';
import {
  A2AError,
  InMemoryTaskStore,
  InProcessTaskEventBus,
  InvalidAgentEventError,
  type A2ATaskEventInfo,
  type AgentExecutor,
  type CancelContext,
  type HandOff,
  type Task,
  type TaskScope,
} from '../../lib';
import { aborted, deferred, until, type Deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { a2aClient, BINDINGS } from '../helpers/bindings';

/** A tiny job queue: execute() pushes, the test (the worker) takes. */
class Jobs {
  readonly #waiting: Deferred<HandOff>[] = [];
  readonly #queued: HandOff[] = [];
  push(job: HandOff): void {
    const waiter = this.#waiting.shift();
    if (waiter) waiter.resolve(job);
    else this.#queued.push(job);
  }
  next(): Promise<HandOff> {
    const job = this.#queued.shift();
    if (job) return Promise.resolve(job);
    const waiter = deferred<HandOff>();
    this.#waiting.push(waiter);
    return waiter.promise;
  }
}

const als = new AsyncLocalStorage<string>();
const fromHeader: express.RequestHandler = (req, _res, next) => als.run(req.get('x-ctx') ?? 'none', next);

/** Records the async context of every store write, by task. */
class RecordingStore extends InMemoryTaskStore {
  readonly writes: { taskId: string; state: string; ctx: string | undefined }[] = [];
  override async update(scope: TaskScope, task: Task, expectedVersion: number) {
    this.writes.push({ taskId: task.id, state: task.status.state, ctx: als.getStore() });
    return super.update(scope, task, expectedVersion);
  }
}

function handingOffAgent() {
  const jobs = new Jobs();
  const cancels: CancelContext[] = [];
  const returned: string[] = [];
  const executor: AgentExecutor = {
    async execute(ctx, events) {
      if (ctx.userText === 'announce first') await events.start('queued');
      if (ctx.userText === 'hand off twice') await events.handOff();
      jobs.push(await events.handOff());
      returned.push(ctx.taskId);
    },
    cancel(ctx) {
      cancels.push(ctx);
    },
  };
  return { executor, jobs, cancels, returned };
}

describe.each(BINDINGS)('background work handed off by execute(), over %s', (binding) => {
  let server: TestServer;
  let agent: ReturnType<typeof handingOffAgent>;
  let store: RecordingStore;
  let seen: { info: A2ATaskEventInfo; ctx: string | undefined }[];
  const a2a = () => a2aClient(binding, server.url);

  beforeEach(async () => {
    agent = handingOffAgent();
    store = new RecordingStore();
    seen = [];
    server = await startAgent(agent.executor, {
      before: [fromHeader],
      taskStore: store,
      onTaskEvent: (info) => seen.push({ info, ctx: als.getStore() }),
    });
  });
  afterEach(() => server.close());

  const drained = () => until(() => server.router.liveExecutions === 0 && server.router.liveObservers === 0, 'nothing live');

  it('a blocking SendMessage waits across the hand-off and answers the task the worker completed', async () => {
    let answered = false;
    const sending = a2a()
      .call('SendMessage', userMessage('render the video'))
      .finally(() => (answered = true));
    const job = await agent.jobs.next();
    await until(() => agent.returned.includes(job.taskId), 'execute() returned');
    expect(answered).toBe(false);
    expect(server.router.liveExecutions).toBe(1);

    const publisher = await server.router.openTaskPublisher(job.scope, job.taskId);
    await publisher.progress('50%');
    await publisher.artifact({ name: 'video', text: 'video.mp4' });
    expect(answered).toBe(false);
    await publisher.complete('rendered');

    const reply = await sending;
    expect(reply.error).toBeUndefined();
    const task = reply.result.task;
    expect(task.id).toBe(job.taskId);
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(task.status.message.parts[0].text).toBe('rendered');
    expect(task.artifacts).toEqual([expect.objectContaining({ name: 'video', parts: [{ text: 'video.mp4' }] })]);
    expect(publisher.closed).toBe(true);
    expect(publisher.signal.aborted).toBe(false);
    await expect(publisher.progress('late')).rejects.toBeInstanceOf(InvalidAgentEventError);
    await drained();
  });

  it('a task announced before the hand-off, and a second handOff(), change nothing else', async () => {
    for (const text of ['announce first', 'hand off twice']) {
      const sending = a2a().call('SendMessage', userMessage(text));
      const job = await agent.jobs.next();
      const publisher = await server.router.openTaskPublisher(job.scope, job.taskId);
      await publisher.complete();
      expect((await sending).result.task.status.state).toBe('TASK_STATE_COMPLETED');
    }
    await drained();
  });

  it('returnImmediately answers WORKING at once; SubscribeToTask follows the worker to COMPLETED', async () => {
    const reply = await a2a().call('SendMessage', { ...userMessage('render'), configuration: { returnImmediately: true } });
    const taskId = reply.result.task.id;
    expect(reply.result.task.status.state).toBe('TASK_STATE_WORKING');
    const job = await agent.jobs.next();
    expect(job.taskId).toBe(taskId);

    const response = await a2a().open('SubscribeToTask', { id: taskId });
    const events = a2a().events(response);
    const first = await events.next();
    expect(first.value?.event.task.status.state).toBe('TASK_STATE_WORKING');

    const publisher = await server.router.openTaskPublisher(job.scope, job.taskId);
    await publisher.progress('1/2');
    await publisher.progress('2/2');
    await publisher.complete('done');
    const rest: unknown[] = [];
    for await (const item of events) rest.push(item.event);
    expect(rest).toEqual([
      {
        statusUpdate: expect.objectContaining({
          status: expect.objectContaining({ state: 'TASK_STATE_WORKING', message: expect.objectContaining({ parts: [{ text: '1/2' }] }) }),
        }),
      },
      {
        statusUpdate: expect.objectContaining({
          status: expect.objectContaining({ state: 'TASK_STATE_WORKING', message: expect.objectContaining({ parts: [{ text: '2/2' }] }) }),
        }),
      },
      { statusUpdate: expect.objectContaining({ status: expect.objectContaining({ state: 'TASK_STATE_COMPLETED' }) }) },
    ]);
    await drained();
  });

  it('a streaming SendMessage follows the worker and ends on the state that parks the task', async () => {
    const streaming = a2a().stream('SendStreamingMessage', userMessage('render'));
    const job = await agent.jobs.next();
    const publisher = await server.router.openTaskPublisher(job.scope, job.taskId);
    await publisher.progress('half way');
    await publisher.requireInput('which format?');
    const reply = await streaming;
    expect(reply.error).toBeUndefined();
    expect(reply.events.map((e) => e.task?.status.state ?? e.statusUpdate.status.state)).toEqual([
      'TASK_STATE_WORKING',
      'TASK_STATE_WORKING',
      'TASK_STATE_INPUT_REQUIRED',
    ]);
    // Parking ends the publisher's part: a follow-up message starts a new turn (which hands off again).
    expect(publisher.closed).toBe(true);
    await drained();
    const followUp = a2a().call('SendMessage', userMessage('mp4', { taskId: job.taskId }));
    const second = await agent.jobs.next();
    expect(second.taskId).toBe(job.taskId);
    await (await server.router.openTaskPublisher(second.scope, second.taskId)).complete('mp4 it is');
    expect((await followUp).result.task.status.state).toBe('TASK_STATE_COMPLETED');
    await drained();
  });

  it('CancelTask reaches cancel() and the worker signal; the task ends CANCELED and later writes are refused', async () => {
    const sending = a2a().call('SendMessage', userMessage('render'));
    const job = await agent.jobs.next();
    const publisher = await server.router.openTaskPublisher(job.scope, job.taskId);
    await publisher.progress('started');
    await until(() => agent.returned.includes(job.taskId), 'execute() returned');

    const canceled = await a2a().call('CancelTask', { id: job.taskId });
    expect(canceled.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(agent.cancels).toHaveLength(1);
    expect(agent.cancels[0]).toMatchObject({ taskId: job.taskId, running: true });
    await aborted(publisher.signal);
    expect(publisher.closed).toBe(true);
    await expect(publisher.complete('too late')).rejects.toBeInstanceOf(InvalidAgentEventError);

    // The blocking send that waited across the hand-off hears the end too.
    expect((await sending).result.task.status.state).toBe('TASK_STATE_CANCELED');
    expect((await a2a().call('GetTask', { id: job.taskId })).result.status.state).toBe('TASK_STATE_CANCELED');
    // A publisher opened after the end is closed from the start.
    const late = await server.router.openTaskPublisher(job.scope, job.taskId);
    expect(late.closed).toBe(true);
    expect(late.signal.aborted).toBe(true);
    await drained();
  });

  it('a publisher for another owner or tenant, or an unknown id, is TaskNotFound and touches nothing', async () => {
    await a2a().call('SendMessage', { ...userMessage('render'), configuration: { returnImmediately: true } });
    const job = await agent.jobs.next();
    const writes = store.writes.length;
    const observers = server.router.liveObservers;
    const attempts: [TaskScope, string][] = [
      [{ ...job.scope, owner: 'someone-else' }, job.taskId],
      [{ ...job.scope, tenant: 'other-tenant' }, job.taskId],
      [job.scope, 'no-such-task'],
    ];
    for (const [scope, taskId] of attempts) {
      const error = await server.router.openTaskPublisher(scope, taskId).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(A2AError);
      expect((error as A2AError).kind).toBe('TaskNotFound');
    }
    expect(store.writes).toHaveLength(writes);
    expect(server.router.liveObservers).toBe(observers);
    const task = (await a2a().call('GetTask', { id: job.taskId })).result;
    expect(task.status.state).toBe('TASK_STATE_WORKING');
    // The task's own scope still works; finishing it leaves nothing behind.
    await (await server.router.openTaskPublisher(job.scope, job.taskId)).complete();
    await drained();
  });

  it("the worker's writes, engine events and fan-out run in the worker's async context, not the request's", async () => {
    const sending = a2a().call('SendMessage', userMessage('render'), { headers: { 'x-ctx': 'request' } });
    const job = await agent.jobs.next();
    // The worker runs in its own context (a queue consumer started with the app).
    await als.run('worker', async () => {
      const publisher = await server.router.openTaskPublisher(job.scope, job.taskId);
      await publisher.progress('working on it');
      await publisher.complete('done');
    });
    expect((await sending).result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const writes = store.writes.filter((w) => w.taskId === job.taskId);
    expect(writes.map((w) => [w.state, w.ctx])).toEqual([
      ['TASK_STATE_WORKING', 'worker'],
      ['TASK_STATE_COMPLETED', 'worker'],
    ]);
    const hooks = seen.filter((s) => s.info.taskId === job.taskId).map((s) => [Object.keys(s.info.event)[0], s.ctx]);
    expect(hooks).toEqual([
      ['task', 'request'],
      ['statusUpdate', 'worker'],
      ['statusUpdate', 'worker'],
    ]);
    await drained();
  });
});

describe('background work: the edges', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('handed-off work that never publishes is failed by turnTimeoutMs, and its signal fires', async () => {
    const agent = handingOffAgent();
    server = await startAgent(agent.executor, { turnTimeoutMs: 150 });
    const sending = a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('render'));
    const job = await agent.jobs.next();
    const publisher = await server.router.openTaskPublisher(job.scope, job.taskId);
    await aborted(publisher.signal);
    const task = (await sending).result.task;
    expect(task.status.state).toBe('TASK_STATE_FAILED');
    expect(task.status.message.parts[0].text).toBe('The agent did not finish within 150 ms.');
    await expect(publisher.complete()).rejects.toBeInstanceOf(InvalidAgentEventError);
    await until(() => server!.router.liveExecutions === 0 && server!.router.liveObservers === 0, 'nothing live');
  });

  it('only execute() can hand off; an invalid worker event fails the task', async () => {
    const jobs = new Jobs();
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        jobs.push(await events.handOff());
      },
    };
    server = await startAgent(executor);
    const client = a2aClient('jsonrpc', server.url);
    const sending = client.call('SendMessage', userMessage('render'));
    const job = await jobs.next();
    const publisher = await server.router.openTaskPublisher(job.scope, job.taskId);
    await expect(publisher.handOff()).rejects.toBeInstanceOf(InvalidAgentEventError);
    await expect(publisher.reply('hi')).rejects.toBeInstanceOf(InvalidAgentEventError);
    // An illegal transition (back to SUBMITTED from a parked task is refused by the reducer): the task fails.
    await publisher.requireInput('more?');
    expect((await sending).result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const again = await server.router.openTaskPublisher(job.scope, job.taskId);
    await expect(again.status('TASK_STATE_SUBMITTED')).rejects.toBeInstanceOf(InvalidAgentEventError);
    expect((await client.call('GetTask', { id: job.taskId })).result.status.state).toBe('TASK_STATE_FAILED');
    expect(again.closed).toBe(true);
    await until(() => server!.router.liveExecutions === 0 && server!.router.liveObservers === 0, 'nothing live');
  });

  it('a worker on another router sharing the store and bus (another process) ends the waiting turn', async () => {
    const store = new InMemoryTaskStore();
    const eventBus = new InProcessTaskEventBus();
    const agent = handingOffAgent();
    server = await startAgent(agent.executor, { taskStore: store, eventBus });
    // The worker's process: the same agent, another router, no HTTP request of its own.
    const workerSide = await startAgent(agent.executor, { taskStore: store, eventBus });
    try {
      const client = a2aClient('rest', server.url);
      const sending = client.call('SendMessage', userMessage('render'));
      const job = await agent.jobs.next();
      const publisher = await workerSide.router.openTaskPublisher(job.scope, job.taskId);
      await publisher.progress('elsewhere');
      await publisher.complete('done elsewhere');
      const task = (await sending).result.task;
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.history.map((m: { parts: { text: string }[] }) => m.parts[0].text)).toEqual(['render', 'elsewhere', 'done elsewhere']);

      // A cancel answered on the first process reaches a publisher on the second.
      const second = client.call('SendMessage', userMessage('render again'));
      const job2 = await agent.jobs.next();
      const remote = await workerSide.router.openTaskPublisher(job2.scope, job2.taskId);
      const canceled = await client.call('CancelTask', { id: job2.taskId });
      expect(canceled.result.status.state).toBe('TASK_STATE_CANCELED');
      await aborted(remote.signal);
      expect((await second).result.task.status.state).toBe('TASK_STATE_CANCELED');
      await until(() => server!.router.liveExecutions === 0 && server!.router.liveObservers === 0, 'nothing live');
      expect(workerSide.router.liveExecutions).toBe(0);
    } finally {
      await workerSide.close();
    }
  });
});
