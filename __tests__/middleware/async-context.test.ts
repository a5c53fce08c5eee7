/**
 * End to end through the real router: what a2aTracing, a2aAuth and a2aTenant contributed is what
 * execute() and cancel() see (getA2ARequestContext(), cls-rtracer's id, the active OpenTelemetry
 * context), per message: turn 1, turn 2, streaming, a queued follow-up, and the CancelTask request.
 */
import { context, propagation, trace, type TextMapPropagator } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import * as rTracer from 'cls-rtracer';
import { getA2ARequestContext, type AgentExecutor } from '../../lib';
import { a2aAuth, a2aTenant, a2aTracing, bearerJwt, header, parseTraceparent } from '../../lib/middleware';
import { deferred, until } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, rpcStream, userMessage } from '../helpers/http';
import { HS_SECRET, signToken } from './helpers';

interface Seen {
  hook: 'execute' | 'cancel';
  text: string;
  requestId?: string;
  rtracerId: unknown;
  traceId?: string;
  otelTraceId?: string;
  callerId: string;
  tenant: string;
}

const w3c: TextMapPropagator = {
  inject: () => undefined,
  extract: (ctx, carrier, getter) => {
    const raw = getter.get(carrier, 'traceparent');
    const parsed = parseTraceparent(Array.isArray(raw) ? raw[0] : raw);
    return parsed ? trace.setSpanContext(ctx, { traceId: parsed.traceId, spanId: parsed.spanId, traceFlags: parsed.flags, isRemote: true }) : ctx;
  },
  fields: () => ['traceparent'],
};

function observe(hook: Seen['hook'], text: string): Seen {
  const carrier = getA2ARequestContext();
  return {
    hook,
    text,
    requestId: carrier.requestId,
    rtracerId: rTracer.id(),
    traceId: carrier.trace?.traceId,
    otelTraceId: trace.getSpanContext(context.active())?.traceId,
    callerId: carrier.caller.id,
    tenant: carrier.tenant,
  };
}

const traceId = (n: number) => n.toString(16).padStart(32, 'a');
const headersFor = (n: number, token: string) => ({
  authorization: `Bearer ${token}`,
  'x-tenant': 'acme',
  'x-request-id': `req-${n}`,
  traceparent: `00-${traceId(n)}-${'b'.repeat(15)}${n % 10}-01`,
});
const expected = (hook: Seen['hook'], text: string, n: number): Seen => ({
  hook,
  text,
  requestId: `req-${n}`,
  rtracerId: `req-${n}`,
  traceId: traceId(n),
  otelTraceId: traceId(n),
  callerId: 'alice',
  tenant: 'acme',
});

describe('request context inside execute() and cancel() through the router', () => {
  let server: TestServer;
  let seen: Seen[];
  let gate = deferred();
  let token: string;

  beforeAll(async () => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(w3c);
    token = await signToken({ sub: 'alice' });
  });
  afterAll(() => {
    context.disable();
    propagation.disable();
  });

  beforeEach(async () => {
    seen = [];
    gate = deferred();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        // Let other work interleave before looking.
        await new Promise((resolve) => setImmediate(resolve));
        seen.push(observe('execute', ctx.userText));
        if (ctx.userText === 'wait') {
          await events.start('waiting');
          await gate.promise;
          if (!ctx.signal.aborted) await events.requireInput('and now?');
          return;
        }
        if (ctx.task) await events.complete('done');
        else await events.requireInput('more?');
      },
      async cancel(ctx, events) {
        await new Promise((resolve) => setTimeout(resolve, 1));
        seen.push(observe('cancel', ctx.task.id));
        await events.canceled();
      },
    };
    server = await startAgent(executor, {
      before: [a2aTracing(), a2aAuth({ user: bearerJwt({ key: HS_SECRET }) }), a2aTenant({ from: header('x-tenant') })],
    });
  });
  afterEach(() => {
    gate.resolve();
    return server.close();
  });

  it('blocking turns each see their own request', async () => {
    const first = await rpc(server.url, 'SendMessage', userMessage('hello'), { headers: headersFor(1, token) });
    expect(first.headers.get('x-request-id')).toBe('req-1');
    const taskId = first.body.result.task.id;
    await rpc(server.url, 'SendMessage', userMessage('again', { taskId }), { headers: headersFor(2, token) });
    expect(seen).toEqual([expected('execute', 'hello', 1), expected('execute', 'again', 2)]);
  });

  it('streaming turns each see their own request', async () => {
    const first = await rpcStream(server.url, 'SendStreamingMessage', userMessage('hello'), { headers: headersFor(3, token) });
    const taskId = first.events[0].result.task.id;
    await rpcStream(server.url, 'SendStreamingMessage', userMessage('again', { taskId }), { headers: headersFor(4, token) });
    expect(seen).toEqual([expected('execute', 'hello', 3), expected('execute', 'again', 4)]);
  });

  it('cancel() sees the CancelTask request, not the one that started the task', async () => {
    const started = await rpc(server.url, 'SendMessage', { ...userMessage('wait'), configuration: { returnImmediately: true } }, { headers: headersFor(5, token) });
    const taskId = started.body.result.task.id;
    await until(() => seen.length === 1, 'execute started');
    const canceled = await rpc(server.url, 'CancelTask', { id: taskId }, { headers: headersFor(6, token) });
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(seen).toEqual([expected('execute', 'wait', 5), expected('cancel', taskId, 6)]);
  });

  it('a follow-up queued behind a running turn sees its own request', async () => {
    const started = await rpc(server.url, 'SendMessage', { ...userMessage('wait'), configuration: { returnImmediately: true } }, { headers: headersFor(7, token) });
    const taskId = started.body.result.task.id;
    const followUp = rpc(server.url, 'SendMessage', userMessage('later', { taskId }), { headers: headersFor(8, token) });
    await until(() => server.router.liveObservers === 2, 'follow-up queued');
    gate.resolve();
    expect((await followUp).body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(seen).toEqual([expected('execute', 'wait', 7), expected('execute', 'later', 8)]);
  });

  it('concurrent requests do not bleed into each other', async () => {
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => rpc(server.url, 'SendMessage', userMessage(`m${i}`), { headers: headersFor(100 + i, token) })),
    );
    expect(seen).toHaveLength(20);
    for (const entry of seen) expect(entry).toEqual(expected('execute', entry.text, 100 + Number(entry.text.slice(1))));
  });
});
