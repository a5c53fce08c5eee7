/**
 * Guarantee 5: SSE streams are faithful: first event Task or Message, events in generation order,
 * the stream ends after a terminal or interrupted state, a client disconnect does not cancel the
 * task, SubscribeToTask follows a task until it is terminal, across interrupted states, heartbeats keep idle
 * streams alive. Over both bindings (JSON-RPC and HTTP+JSON).
 */
import type { AgentExecutor } from '../../lib';
import { deferred, until, type Deferred } from '../helpers/async';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { sseFrames, userMessage } from '../helpers/http';
import { a2aClient, BINDINGS, type Binding } from '../helpers/bindings';

let gate: Deferred;
let started: Deferred;
let cancelCalls = 0;

const executor: AgentExecutor = {
  async execute(ctx, events) {
    switch (ctx.userText) {
      case 'message':
        return events.reply('just a message');
      case 'burst': {
        // Published without awaiting each one: order must still hold.
        const pending = [events.start()];
        for (let i = 0; i < 20; i++) pending.push(events.progress(`step ${i}`));
        pending.push(events.artifact({ artifactId: 'a', text: 'part 1' }));
        pending.push(events.artifact({ artifactId: 'a', text: 'part 2', append: true, lastChunk: true }));
        pending.push(events.complete('done'));
        await Promise.all(pending);
        return;
      }
      case 'park':
        await events.start();
        return events.requireInput('which day?');
      case 'gated':
        await events.start('waiting');
        started.resolve();
        await gate.promise;
        await events.progress('released');
        return events.complete('finished');
      default:
        return events.complete('ok');
    }
  },
  cancel() {
    cancelCalls++;
  },
};

describe.each(BINDINGS)('faithful streams over %s', (binding) => {
  let server: TestServer;
  const a2a = () => a2aClient(binding, server.url);
  beforeEach(async () => {
    gate = deferred();
    started = deferred();
    cancelCalls = 0;
    server = await startAgent(executor, { heartbeatIntervalMs: 25 });
  });
  afterEach(async () => {
    gate.resolve();
    await server.close();
  });

  it('a message reply is exactly one message event, then the stream closes', async () => {
    const reply = await a2a().stream('SendStreamingMessage', userMessage('message'), { id: 'abc' });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(reply.events).toHaveLength(1);
    expect(reply.events[0]).toMatchObject({ message: { role: 'ROLE_AGENT' } });
    // JSON-RPC wraps each event in an envelope with the request's id; HTTP+JSON sends it bare.
    expect(reply.frames[0]).toEqual(binding === 'jsonrpc' ? { jsonrpc: '2.0', id: 'abc', result: reply.events[0] } : reply.events[0]);
  });

  it('a task stream starts with the Task, keeps generation order and closes after the terminal state', async () => {
    const reply = await a2a().stream('SendStreamingMessage', userMessage('burst'));
    const events = reply.events;
    expect(Object.keys(events[0])).toEqual(['task']);
    expect(events[0].task.status.state).toBe('TASK_STATE_WORKING');
    const progress = events.filter((e) => e.statusUpdate?.status.state === 'TASK_STATE_WORKING');
    expect(progress.map((e) => e.statusUpdate.status.message.parts[0].text)).toEqual(Array.from({ length: 20 }, (_, i) => `step ${i}`));
    expect(events.slice(-3).map((e) => Object.keys(e)[0])).toEqual(['artifactUpdate', 'artifactUpdate', 'statusUpdate']);
    expect(events.at(-1)!.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(events.every((e) => Object.keys(e).length === 1)).toBe(true);
    const stored = await a2a().call('GetTask', { id: events[0].task.id });
    expect(stored.result.artifacts[0].parts.map((p: { text: string }) => p.text)).toEqual(['part 1', 'part 2']);
  });

  it('the stream closes after an interrupted state', async () => {
    const reply = await a2a().stream('SendStreamingMessage', userMessage('park'));
    expect(reply.events.at(-1)!.statusUpdate.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(server.router.liveExecutions).toBe(0);
  });

  it('a client disconnect does not cancel the task', async () => {
    const abort = new AbortController();
    const response = await a2a().open('SendStreamingMessage', userMessage('gated'), { signal: abort.signal });
    const first = (await a2a().events(response).next()).value!.event;
    const taskId = first.task.id;
    await started.promise;
    abort.abort();
    await until(() => server.router.liveObservers === 0, 'the stream observer to detach');
    expect(server.router.liveExecutions).toBe(1);
    gate.resolve();
    await until(() => server.router.liveExecutions === 0, 'the task to finish');
    const stored = await a2a().call('GetTask', { id: taskId });
    expect(stored.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect(cancelCalls).toBe(0);
  });

  it('SubscribeToTask on a running task: the current Task, then the live events, for every subscriber alike', async () => {
    const sent = await a2a().call('SendMessage', { ...userMessage('gated'), configuration: { returnImmediately: true } });
    const taskId = sent.result.task.id;
    await started.promise;
    // Each subscriber's first event (the current task) is read before the gate opens: an event
    // committed while a subscription still reads its snapshot is in that snapshot, not sent again.
    const a = a2a().events(await a2a().open('SubscribeToTask', { id: taskId }));
    const events = [(await a.next()).value!.event];
    const leaving = new AbortController();
    const b = await a2a().open('SubscribeToTask', { id: taskId }, { signal: leaving.signal });
    const bFrames = sseFrames(b);
    await bFrames.next();
    // Two subscribers (plus the returnImmediately sender's own observer, attached until the turn ends).
    await until(() => server.router.liveObservers === 3, 'both subscribers');
    leaving.abort();
    await until(() => server.router.liveObservers === 2, 'one subscriber to leave');
    gate.resolve();
    for await (const item of a) events.push(item.event);
    expect(events[0].task.id).toBe(taskId);
    expect(events[0].task.status.state).toBe('TASK_STATE_WORKING');
    expect(events.slice(1).map((e) => e.statusUpdate.status.state)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
  });

  it('SubscribeToTask on a parked task stays open across the interrupted state and ends at the terminal one', async () => {
    const parked = (await a2a().call('SendMessage', userMessage('park'))).result.task;
    const response = await a2a().open('SubscribeToTask', { id: parked.id });
    const frames = a2a().events(response);
    const first = await frames.next();
    expect(first.value!.event).toEqual({ task: parked });
    expect(server.router.liveObservers).toBe(1); // a bus subscription only: no live execution
    expect(server.router.liveExecutions).toBe(0);

    // A follow-up from another request completes the task: the subscriber sees it, then the end.
    const followUp = await a2a().call('SendMessage', userMessage('quick', { taskId: parked.id }));
    expect(followUp.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const rest: unknown[] = [];
    for await (const item of frames) rest.push(item.event ?? item.error);
    // The follow-up's return to WORKING is announced before the next states (issue 19, item 4).
    expect(rest).toEqual([
      { statusUpdate: { taskId: parked.id, contextId: parked.contextId, status: { state: 'TASK_STATE_WORKING', timestamp: expect.any(String) } } },
      { statusUpdate: expect.objectContaining({ status: expect.objectContaining({ state: 'TASK_STATE_COMPLETED' }) }) },
    ]);
    await until(() => server.router.liveObservers === 0, 'subscription released');

    const refused = await a2a().stream('SubscribeToTask', { id: parked.id });
    expect(refused.error?.code).toBe(-32004);
  });

  it('a subscriber that leaves a parked task releases its subscription', async () => {
    const parked = (await a2a().call('SendMessage', userMessage('park'))).result.task;
    const client = new AbortController();
    const response = await a2a().open('SubscribeToTask', { id: parked.id }, { signal: client.signal });
    await sseFrames(response).next();
    expect(server.router.liveObservers).toBe(1);
    client.abort();
    await until(() => server.router.liveObservers === 0, 'subscription released');
    expect(server.router.liveExecutions).toBe(0);
  });

  it('idle streams get comment heartbeats', async () => {
    const response = await a2a().open('SendStreamingMessage', userMessage('gated'));
    const seen: string[] = [];
    for await (const frame of sseFrames(response)) {
      seen.push(frame.comment !== undefined ? 'comment' : 'data');
      if (frame.comment === 'ping') gate.resolve();
    }
    expect(seen[0]).toBe('data');
    expect(seen).toContain('comment');
  });
});

describe.each(BINDINGS)('streaming not declared, over %s', (binding: Binding) => {
  it('SendStreamingMessage and SubscribeToTask answer UnsupportedOperation', async () => {
    const server = await startAgent(executor, { agentCard: { ...testCard, capabilities: {} } });
    try {
      const a2a = a2aClient(binding, server.url);
      const send = await a2a.stream('SendStreamingMessage', userMessage('quick'));
      expect(send.error?.code).toBe(-32004);
      const sub = await a2a.stream('SubscribeToTask', { id: 'x' });
      expect(sub.error?.code).toBe(-32004);
    } finally {
      await server.close();
    }
  });
});
