/**
 * End to end through the real router: what a2aTracing, a2aAuth and a2aTenant contributed is what
 * execute() and cancel() see (getA2ARequestContext(), cls-rtracer's id, the active OpenTelemetry
 * span), per message: turn 1, turn 2, streaming, a queued follow-up, the CancelTask request, and
 * 40 concurrent two-turn tasks; with and without a host-level express.json().
 */
import { context, propagation, trace, SpanKind, type TextMapPropagator } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import * as rTracer from 'cls-rtracer';
import type { RequestHandler } from 'express';
import { getA2ARequestContext, type A2ARequestContext, type AgentExecutor } from '../../lib';
import { a2aAuth, a2aTenant, a2aTracing, bearerJwt, header, parseTraceparent } from '../../lib/middleware';
import { deferred, until } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, rpcStream, userMessage } from '../helpers/http';
import { HS_SECRET, signToken } from './helpers';

// A minimal W3C propagator (the SDK's lives in @opentelemetry/core, not a direct dependency).
const w3c: TextMapPropagator = {
  inject: () => undefined,
  extract: (ctx, carrier, getter) => {
    const raw = getter.get(carrier, 'traceparent');
    const parsed = parseTraceparent(Array.isArray(raw) ? raw[0] : raw);
    return parsed ? trace.setSpanContext(ctx, { traceId: parsed.traceId, spanId: parsed.spanId, traceFlags: parsed.flags, isRemote: true }) : ctx;
  },
  fields: () => ['traceparent'],
};

const tracer = new BasicTracerProvider().getTracer('agent');

interface Seen {
  hook: 'execute' | 'cancel';
  text: string;
  requestId?: string;
  rtracerId: unknown;
  traceId?: string;
  callerId: string;
  /** The `n` claim of the token that authenticated the request. */
  callerToken: unknown;
  tenant: string;
  /** getA2ARequestContext() is the hook's ctx.requestContext. */
  sameAsCtx: boolean;
  /** The OpenTelemetry span active when the hook runs. */
  activeSpanId?: string;
  /** Parent and trace of a span the hook starts. */
  childParentSpanId?: string;
  childTraceId: string;
}

function observe(hook: Seen['hook'], text: string, requestContext: A2ARequestContext): Seen {
  const carrier = getA2ARequestContext();
  const span = tracer.startSpan(`agent.${hook}`);
  span.end();
  const child = span as unknown as ReadableSpan;
  return {
    hook,
    text,
    requestId: carrier.requestId,
    rtracerId: rTracer.id(),
    traceId: carrier.trace?.traceId,
    callerId: carrier.caller.id,
    callerToken: carrier.caller.claims?.n,
    tenant: carrier.tenant,
    sameAsCtx: carrier === requestContext,
    activeSpanId: trace.getSpanContext(context.active())?.spanId,
    childParentSpanId: child.parentSpanContext?.spanId,
    childTraceId: child.spanContext().traceId,
  };
}

/** Request number n: its own request id, traceparent and token. */
const traceIdOf = (n: number) => n.toString(16).padStart(32, 'a');
const remoteSpanOf = (n: number) => n.toString(16).padStart(16, 'b');
interface Turn {
  readonly n: number;
  readonly user: string;
  readonly tenant: string;
}
const turn = (n: number, user = 'alice', tenant = 'acme'): Turn => ({ n, user, tenant });

async function headersFor({ n, user, tenant }: Turn): Promise<Record<string, string>> {
  return {
    authorization: `Bearer ${await signToken({ sub: user, n })}`,
    'x-tenant': tenant,
    'x-request-id': `req-${n}`,
    traceparent: `00-${traceIdOf(n)}-${remoteSpanOf(n)}-01`,
  };
}

/** The host app's own span per request (what HTTP instrumentation does), by request id. */
const hostSpans = new Map<string, string>();
const hostSpan: RequestHandler = (req, res, next) => {
  const parent = propagation.extract(context.active(), req.headers);
  const span = tracer.startSpan(`${req.method} ${req.baseUrl}`, { kind: SpanKind.SERVER }, parent);
  hostSpans.set(req.get('x-request-id') ?? '', span.spanContext().spanId);
  res.once('finish', () => span.end());
  context.with(trace.setSpan(parent, span), next);
};

const SPAN_SOURCES = [
  ['a host middleware span', true],
  ['the incoming traceparent', false],
] as const;

describe.each([false, true])('request context inside execute() and cancel() through the router (host express.json(): %s)', (hostJson) => {
  describe.each(SPAN_SOURCES)('request span: %s', (_source, withHostSpan) => {
    let server: TestServer;
    let seen: Seen[];
    let gate = deferred();

    /** The span of the request that carried turn t: the host's, or the remote one from traceparent. */
    const requestSpanOf = (t: Turn) => (withHostSpan ? hostSpans.get(`req-${t.n}`) : remoteSpanOf(t.n)) ?? 'no request span recorded';
    const expected = (hook: Seen['hook'], text: string, t: Turn): Seen => ({
      hook,
      text,
      requestId: `req-${t.n}`,
      rtracerId: `req-${t.n}`,
      traceId: traceIdOf(t.n),
      callerId: t.user,
      callerToken: t.n,
      tenant: t.tenant,
      sameAsCtx: true,
      activeSpanId: requestSpanOf(t),
      childParentSpanId: requestSpanOf(t),
      childTraceId: traceIdOf(t.n),
    });

    beforeAll(() => {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      propagation.setGlobalPropagator(w3c);
    });
    afterAll(() => {
      context.disable();
      propagation.disable();
    });

    beforeEach(async () => {
      seen = [];
      gate = deferred();
      hostSpans.clear();
      const executor: AgentExecutor = {
        async execute(ctx, events) {
          // Let other work interleave before looking.
          await new Promise((resolve) => setImmediate(resolve));
          seen.push(observe('execute', ctx.userText, ctx.requestContext));
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
          seen.push(observe('cancel', ctx.task.id, ctx.requestContext));
          await events.canceled();
        },
      };
      const middlewares = [a2aTracing(), a2aAuth({ user: bearerJwt({ key: HS_SECRET }) }), a2aTenant({ from: header('x-tenant') })];
      // With hostJson, the fixture parses the body before these (as an app-wide express.json() would).
      server = await startAgent(executor, { hostJson, before: withHostSpan ? [hostSpan, ...middlewares] : middlewares });
    });
    afterEach(() => {
      gate.resolve();
      return server.close();
    });

    it('blocking turns each see their own request', async () => {
      const first = await rpc(server.url, 'SendMessage', userMessage('hello'), { headers: await headersFor(turn(1)) });
      expect(first.headers.get('x-request-id')).toBe('req-1');
      const taskId = first.body.result.task.id;
      await rpc(server.url, 'SendMessage', userMessage('again', { taskId }), { headers: await headersFor(turn(2)) });
      expect(seen).toEqual([expected('execute', 'hello', turn(1)), expected('execute', 'again', turn(2))]);
    });

    it('streaming turns each see their own request', async () => {
      const [one, two] = [turn(3, 'bob', 'globex'), turn(4, 'bob', 'globex')];
      const first = await rpcStream(server.url, 'SendStreamingMessage', userMessage('hello'), { headers: await headersFor(one) });
      const taskId = first.events[0].result.task.id;
      await rpcStream(server.url, 'SendStreamingMessage', userMessage('again', { taskId }), { headers: await headersFor(two) });
      expect(seen).toEqual([expected('execute', 'hello', one), expected('execute', 'again', two)]);
    });

    it('cancel() sees the CancelTask request, not the one that started the task', async () => {
      const started = await rpc(
        server.url,
        'SendMessage',
        { ...userMessage('wait'), configuration: { returnImmediately: true } },
        { headers: await headersFor(turn(5)) },
      );
      const taskId = started.body.result.task.id;
      await until(() => seen.length === 1, 'execute started');
      const canceled = await rpc(server.url, 'CancelTask', { id: taskId }, { headers: await headersFor(turn(6)) });
      expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
      expect(seen).toEqual([expected('execute', 'wait', turn(5)), expected('cancel', taskId, turn(6))]);
    });

    it('a follow-up queued behind a running turn sees its own request', async () => {
      const started = await rpc(
        server.url,
        'SendMessage',
        { ...userMessage('wait'), configuration: { returnImmediately: true } },
        { headers: await headersFor(turn(7)) },
      );
      const taskId = started.body.result.task.id;
      const followUp = rpc(server.url, 'SendMessage', userMessage('later', { taskId }), { headers: await headersFor(turn(8)) });
      await until(() => server.router.liveObservers === 2, 'follow-up queued');
      gate.resolve();
      expect((await followUp).body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(seen).toEqual([expected('execute', 'wait', turn(7)), expected('execute', 'later', turn(8))]);
    });

    it('40 concurrent two-turn tasks (4 users, 2 tenants, blocking and streaming): no bleed', async () => {
      const users = ['alice', 'bob', 'carol', 'dave'];
      const turnsOf = (i: number) => [1, 2].map((k) => turn(100 + 2 * i + k, users[i % 4], i % 3 === 0 ? 'globex' : 'acme'));
      await Promise.all(
        Array.from({ length: 40 }, async (_, i) => {
          const [one, two] = turnsOf(i);
          if (i % 2 === 1) {
            const first = await rpcStream(server.url, 'SendStreamingMessage', userMessage(`${i}/1`), { headers: await headersFor(one) });
            const taskId = first.events[0].result.task.id;
            const second = await rpcStream(server.url, 'SendStreamingMessage', userMessage(`${i}/2`, { taskId }), { headers: await headersFor(two) });
            expect(second.events.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
          } else {
            const first = await rpc(server.url, 'SendMessage', userMessage(`${i}/1`), { headers: await headersFor(one) });
            const taskId = first.body.result.task.id;
            const second = await rpc(server.url, 'SendMessage', userMessage(`${i}/2`, { taskId }), { headers: await headersFor(two) });
            expect(second.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
          }
        }),
      );
      expect(seen).toHaveLength(80);
      const mismatches = seen.filter((entry) => {
        const [i, k] = entry.text.split('/').map(Number);
        return JSON.stringify(entry) !== JSON.stringify(expected('execute', entry.text, turnsOf(i)[k - 1]));
      });
      expect(mismatches).toEqual([]);
    });
  });
});
