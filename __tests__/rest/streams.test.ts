/**
 * HTTP+JSON streaming (§11.7): the shared SSE writer with the REST encoding: bare StreamResponse
 * events, an error after the first event as a final `event: error` google.rpc.Status frame, an error
 * before it as a plain HTTP error, and a client that leaves stops following without ending the task.
 */
import { InMemoryTaskStore, type AgentExecutor, type Task, type TaskScope } from '../../lib';
import { deferred, until, type Deferred } from '../helpers/async';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { sseFrames } from '../helpers/http';
import { errorInfo, openRestStream, rest, restStream, sendBody } from './helpers';

/** Refuses every update once `failing` is set (a database that went away mid-task). */
class FlakyStore extends InMemoryTaskStore {
  failing = false;
  override update(scope: TaskScope, task: Task, expectedVersion: number, change?: Parameters<InMemoryTaskStore['update']>[3]): Promise<number> {
    if (this.failing) return Promise.reject(new Error('store down'));
    return super.update(scope, task, expectedVersion, change);
  }
}

let proceed: Deferred<void>;
let store: FlakyStore;

const executor: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'flaky') {
      await events.start('working');
      store.failing = true;
      await events.progress('this update cannot be stored');
      return;
    }
    if (ctx.userText === 'wait') {
      await events.start('working');
      await Promise.race([proceed.promise, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))]);
      return events.complete('finished');
    }
    if (ctx.userText === 'ask') return events.requireInput('which one?');
    return events.complete(`answer to ${ctx.userText}`);
  },
};

describe('HTTP+JSON streams', () => {
  let server: TestServer;
  beforeEach(async () => {
    proceed = deferred();
    store = new FlakyStore();
    server = await startAgent(executor, { taskStore: store });
  });
  afterEach(async () => {
    proceed.resolve();
    await server.close();
  });

  it('an error after the stream opened: a final `event: error` frame with a google.rpc.Status, then the end', async () => {
    const reply = await restStream(server.url, 'POST', '/message:stream', { body: sendBody('flaky') });
    expect(reply.status).toBe(200);
    expect(Object.keys(reply.events[0])).toEqual(['task']);
    expect(reply.eventTypes.at(-1)).toBe('error');
    const final = reply.events.at(-1);
    expect(final).toEqual({ error: expect.objectContaining({ code: 503, status: 'UNAVAILABLE', details: expect.any(Array) }) });
    expect(reply.eventTypes.slice(0, -1).every((t) => t === 'message')).toBe(true);
  });

  it('an error before the first event: a plain HTTP error, no stream', async () => {
    const unknown = await restStream(server.url, 'POST', '/message:stream', { body: sendBody('x', { taskId: 'no-such-task' }) });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toBe('application/a2a+json');
    expect(errorInfo(unknown.json).reason).toBe('TASK_NOT_FOUND');
    const subscribe = await restStream(server.url, 'GET', '/tasks/no-such-task:subscribe');
    expect(subscribe.status).toBe(404);
  });

  it('a client that leaves stops following; the task goes on', async () => {
    const controller = new AbortController();
    const response = await openRestStream(server.url, 'POST', '/message:stream', { body: sendBody('wait'), signal: controller.signal });
    const frames = sseFrames(response);
    const first = await frames.next();
    const taskId = JSON.parse(first.value!.data!).task.id as string;
    controller.abort();
    await until(() => server.router.liveObservers === 0, 'the stream to be released');
    proceed.resolve();
    await until(() => server.router.liveExecutions === 0, 'the task to finish');
    const task = (await rest(server.url, 'GET', `/tasks/${taskId}`)).body;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('message:stream closes at input-required; subscribe follows the task through the next turn', async () => {
    const asked = await restStream(server.url, 'POST', '/message:stream', { body: sendBody('ask') });
    const last = asked.events.at(-1);
    expect((last.task ?? last.statusUpdate).status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const taskId = asked.events[0].task.id as string;
    const response = await openRestStream(server.url, 'POST', `/tasks/${taskId}:subscribe`);
    const events: Record<string, { status?: { state: string } }>[] = [];
    for await (const frame of sseFrames(response)) {
      if (frame.data === undefined) continue;
      events.push(JSON.parse(frame.data));
      if (events.length === 1) {
        const next = await rest(server.url, 'POST', '/message:send', { body: sendBody('the blue one', { taskId }) });
        expect(next.body.task.status.state).toBe('TASK_STATE_COMPLETED');
      }
    }
    expect(events[0].task?.status?.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(events.at(-1)!.statusUpdate?.status?.state).toBe('TASK_STATE_COMPLETED');
  });
});

describe('streaming not declared', () => {
  it('message:stream and subscribe: 400 UNSUPPORTED_OPERATION', async () => {
    const server = await startAgent(executor, { agentCard: { ...testCard, capabilities: {} } });
    try {
      const stream = await restStream(server.url, 'POST', '/message:stream', { body: sendBody('x') });
      expect(stream.status).toBe(400);
      expect(errorInfo(stream.json).reason).toBe('UNSUPPORTED_OPERATION');
      const subscribe = await restStream(server.url, 'GET', '/tasks/t-1:subscribe');
      expect(subscribe.status).toBe(400);
      expect(errorInfo(subscribe.json).reason).toBe('UNSUPPORTED_OPERATION');
    } finally {
      await server.close();
    }
  });
});
