/**
 * createA2ARouter({ traces }): the span tree of real requests, read through the SDK's in-memory
 * exporter: operation spans (RPC conventions) over both bindings, turn spans beneath them with the
 * agent's own spans inside, follow-ups linked to the request that started the task, a cancel, a
 * subscriber linked to the turn it follows, store calls as events; and no span, in the whole file,
 * carrying a message's text, a token or a credential.
 */
import { A2AOptionsError, A2A_SPANS, createA2ARouter, type AgentExecutor } from '../../lib';
import { deferred, until } from '../helpers/async';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { openStream, rpc, userMessage } from '../helpers/http';
import { rest, sendBody } from '../rest/helpers';
import { callerTrace, leaks, parentOf, testTracing } from './helpers';

const tracing = testTracing();
const agentTracer = tracing.provider.getTracer('the-agent');
const SEND = 'a2a.v1.A2AService/SendMessage';

// What no span may carry: the messages' text, the agent's replies, the caller's credential.
const ASK = 'please book secret-text-alpha';
const FOLLOW_UP = 'tuesday secret-text-gamma';
const QUESTION = 'which date? secret-reply-beta';
const CREDENTIAL = 'Bearer tok-secret-caller';
const FORBIDDEN = ['secret-text', 'secret-reply', 'tok-secret'];

function agent(running = deferred()): AgentExecutor {
  return {
    async execute(ctx, events) {
      // The agent's own span: a child of the turn's (the context reaches execute()).
      agentTracer.startSpan('agent.work').end();
      if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') return events.complete('booked');
      if (ctx.userText === ASK) return events.requireInput(QUESTION);
      await events.start('working');
      running.resolve();
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    async cancel(_ctx, events) {
      await events.canceled('stopped');
    },
  };
}

describe('traces', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  afterAll(() => {
    // Every attribute of every span this file recorded (names, events, links, status messages).
    expect(tracing.spans().length).toBeGreaterThan(0);
    expect(leaks(tracing.spans(), FORBIDDEN)).toEqual([]);
  });

  const send = async (binding: 'jsonrpc' | 'http+json', text: string, traceparent: string, taskId?: string) => {
    const headers = { traceparent, authorization: CREDENTIAL };
    if (binding === 'jsonrpc')
      return (await rpc(server!.url, 'SendMessage', userMessage(text, taskId ? { taskId } : {}), { headers })).body.result.task;
    return (await rest(server!.url, 'POST', '/message:send', { body: sendBody(text, taskId ? { taskId } : {}), headers })).body.task;
  };

  it.each(['jsonrpc', 'http+json'] as const)(
    'a two-turn task over %s: operation spans, turns beneath them, the follow-up linked to the first request',
    async (binding) => {
      server = await startAgent(agent(), { traces: { api: tracing.api, tracer: tracing.provider.getTracer('a2a-express-kit') } });
      tracing.reset();
      const first = callerTrace();
      const second = callerTrace();
      const parked = await send(binding, ASK, first.traceparent);
      expect(parked.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const done = await send(binding, FOLLOW_UP, second.traceparent, parked.id);
      expect(done.status.state).toBe('TASK_STATE_COMPLETED');

      const [opening, followUp] = tracing.named(SEND);
      for (const [span, caller, state] of [
        [opening, first, 'input_required'],
        [followUp, second, 'completed'],
      ] as const) {
        // The RPC conventions; each request joins its caller's trace (traceparent).
        expect(span.kind).toBe(tracing.api.SpanKind.SERVER);
        expect(span.spanContext().traceId).toBe(caller.traceId);
        expect(span.parentSpanContext?.spanId).toBe(caller.traceparent.split('-')[2]);
        expect(span.attributes).toMatchObject({
          'rpc.system': 'a2a',
          'rpc.service': 'a2a.v1.A2AService',
          'rpc.method': 'SendMessage',
          'a2a.binding': binding,
          'a2a.protocol.version': '1.0',
          'a2a.task.id': parked.id,
          'a2a.context.id': parked.contextId,
          'a2a.task.state': state,
        });
      }

      const turns = tracing.named(A2A_SPANS.turn);
      expect(turns).toHaveLength(2);
      const [firstTurn, secondTurn] = turns;
      expect(parentOf(firstTurn)).toBe(opening.spanContext().spanId);
      expect(parentOf(secondTurn)).toBe(followUp.spanContext().spanId);
      expect(firstTurn.attributes).toMatchObject({ 'a2a.task.id': parked.id, 'a2a.turn.follow_up': false, 'a2a.turn.outcome': 'input_required' });
      expect(secondTurn.attributes).toMatchObject({ 'a2a.task.id': parked.id, 'a2a.turn.follow_up': true, 'a2a.turn.outcome': 'completed' });
      // The follow-up is another request: its turn links to the one that started the task.
      expect(secondTurn.links).toEqual([
        expect.objectContaining({
          context: expect.objectContaining({ traceId: first.traceId, spanId: opening.spanContext().spanId }),
          attributes: { 'a2a.link': 'task.origin' },
        }),
      ]);
      expect(firstTurn.links).toEqual([]);

      // A create is an event on the turn that made it, with its duration; updates (one per committed
      // event: the history join, then COMPLETED) are counted on it.
      expect(firstTurn.events.map((e) => e.name)).toEqual(['a2a.store.create']);
      expect(firstTurn.events[0].attributes!['a2a.duration_ms']).toEqual(expect.any(Number));
      expect(secondTurn.attributes['a2a.store.updates']).toBe(2);
      expect(opening.events.map((e) => e.name)).toEqual([]);
      expect(followUp.events.map((e) => e.name)).toContain('a2a.store.get');

      // The agent's spans are children of its turns.
      const agentSpans = tracing.named('agent.work');
      expect(agentSpans.map(parentOf)).toEqual([firstTurn.spanContext().spanId, secondTurn.spanContext().spanId]);
    },
  );

  it('a SendStreamingMessage span carries the state its turn answered with', async () => {
    server = await startAgent(agent(), { traces: { api: tracing.api, tracer: tracing.provider.getTracer('a2a-express-kit') } });
    tracing.reset();
    const response = await openStream(server.url, 'SendStreamingMessage', userMessage(ASK), { headers: { authorization: CREDENTIAL } });
    expect(await response.text()).toContain('TASK_STATE_INPUT_REQUIRED');
    await until(() => tracing.named('a2a.v1.A2AService/SendStreamingMessage').length === 1, 'the stream span');
    const [stream] = tracing.named('a2a.v1.A2AService/SendStreamingMessage');
    expect(stream.attributes).toMatchObject({ 'rpc.method': 'SendStreamingMessage', 'a2a.task.state': 'input_required' });
  });

  it('a cancel: its span beneath CancelTask, linked to the task’s first request, the hook and the outcome; a subscriber linked to the turn it follows', async () => {
    const running = deferred();
    server = await startAgent(agent(running), { traces: { api: tracing.api }, cancelGracePeriodMs: 2_000 });
    tracing.api.trace.setGlobalTracerProvider(tracing.provider);
    tracing.reset();
    const started = await rpc(server.url, 'SendMessage', { ...userMessage('work'), configuration: { returnImmediately: true } });
    const taskId = started.body.result.task.id;
    await running.promise;

    const subscription = await openStream(server.url, 'SubscribeToTask', { id: taskId });
    const canceled = await rpc(server.url, 'CancelTask', { id: taskId }, { headers: { authorization: CREDENTIAL } });
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
    await subscription.text();
    // The subscriber's span ends when its response closes, just after the client read the end.
    await until(() => tracing.named('a2a.v1.A2AService/SubscribeToTask').length === 1, 'the subscription span');

    const [opening] = tracing.named(SEND);
    const [cancelOperation] = tracing.named('a2a.v1.A2AService/CancelTask');
    const [cancel] = tracing.named(A2A_SPANS.cancel);
    expect(cancelOperation.attributes).toMatchObject({ 'rpc.method': 'CancelTask', 'a2a.task.id': taskId, 'a2a.task.state': 'canceled' });
    expect(parentOf(cancel)).toBe(cancelOperation.spanContext().spanId);
    expect(cancel.attributes).toMatchObject({ 'a2a.task.id': taskId, 'a2a.cancel.outcome': 'canceled' });
    expect(cancel.events.map((e) => e.name)).toEqual(expect.arrayContaining(['a2a.cancel.hook.returned']));
    // The hook's CANCELED, written under the cancel's span.
    expect(cancel.attributes['a2a.store.updates']).toBe(1);
    expect(cancel.links.map((l) => l.context.spanId)).toEqual([opening.spanContext().spanId]);

    const [turn] = tracing.named(A2A_SPANS.turn);
    expect(turn.attributes).toMatchObject({ 'a2a.turn.outcome': 'canceled' });
    const [subscribe] = tracing.named('a2a.v1.A2AService/SubscribeToTask');
    expect(subscribe.attributes).toMatchObject({ 'a2a.task.id': taskId });
    expect(subscribe.links).toEqual([
      expect.objectContaining({
        context: expect.objectContaining({ spanId: turn.spanContext().spanId }),
        attributes: { 'a2a.link': 'turn.followed' },
      }),
    ]);
  });

  it('a hand-off: the publisher opened for the worker links to the request that started the task', async () => {
    const handedOff = deferred<{ scope: { tenant: string; owner: string }; taskId: string }>();
    const handOffAgent: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start('queued');
        handedOff.resolve(await events.handOff());
      },
    };
    server = await startAgent(handOffAgent, { traces: { api: tracing.api, tracer: tracing.provider.getTracer('a2a-express-kit') } });
    tracing.reset();
    const sent = await rpc(server.url, 'SendMessage', { ...userMessage('work'), configuration: { returnImmediately: true } });
    const handOff = await handedOff.promise;
    // The worker, outside any request: its publisher's span is a root linked to the task's first request.
    const publisher = await tracing.api.context.with(tracing.api.ROOT_CONTEXT, () => server!.router.openTaskPublisher(handOff.scope, handOff.taskId));
    await publisher.complete('done by the worker');
    const [opening] = tracing.named(SEND);
    const [open] = tracing.named(A2A_SPANS.publisherOpen);
    expect(open.attributes).toMatchObject({ 'a2a.task.id': sent.body.result.task.id });
    expect(parentOf(open)).toBeUndefined();
    expect(open.links.map((l) => l.context.spanId)).toEqual([opening.spanContext().spanId]);
    expect(open.events.map((e) => e.name)).toContain('a2a.store.get');
  });

  it('an error answer: the operation span ends with the error kind, never its message', async () => {
    server = await startAgent(agent(), { traces: { api: tracing.api } });
    tracing.reset();
    const missing = await rpc(server.url, 'GetTask', { id: 'no-such-task-secret-text-delta' });
    expect(missing.body.error).toBeDefined();
    const [get] = tracing.named('a2a.v1.A2AService/GetTask');
    expect(get.attributes).toMatchObject({ 'rpc.method': 'GetTask', 'error.type': 'TaskNotFound' });
    expect(get.status).toEqual({ code: tracing.api.SpanStatusCode.ERROR, message: 'TaskNotFound' });
  });

  it('off (the default): no span is started, none recorded, even with a global provider', async () => {
    tracing.api.trace.setGlobalTracerProvider(tracing.provider);
    server = await startAgent(agent(), {});
    tracing.reset();
    const parked = await rpc(server.url, 'SendMessage', userMessage(ASK), { headers: { traceparent: callerTrace().traceparent } });
    await rpc(server.url, 'SendMessage', userMessage(FOLLOW_UP, { taskId: parked.body.result.task.id }));
    // Only the agent's own spans (roots: nothing of the kit's around them).
    expect(tracing.spans().map((s) => s.name)).toEqual(['agent.work', 'agent.work']);
    expect(tracing.spans().map(parentOf)).toEqual([undefined, undefined]);
  });

  it('refuses a traces option that is not true, false or { api, tracer? }', () => {
    expect(() => createA2ARouter({ agentCard: testCard, executor: agent(), traces: 'on' as never })).toThrow(A2AOptionsError);
    expect(() => createA2ARouter({ agentCard: testCard, executor: agent(), traces: { api: {} } as never })).toThrow(/traces/);
  });
});
