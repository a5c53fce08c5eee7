/** a2aTracing: request ids (cls-rtracer), W3C trace context, OpenTelemetry context, over real HTTP. */
import { context, propagation, trace, type TextMapPropagator } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { NextFunction, Request, Response } from 'express';
import * as rTracer from 'cls-rtracer';
import { a2aTracing, parseTraceparent, parseTracestate } from '../../lib/middleware';
import { readA2AState } from '../../lib/context/request-state';
import { EXPRESS_VERSIONS, body, echoState, recordingErrorHandler, rpc, start, type Running } from './helpers';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${SPAN_ID}-01`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('parseTraceparent / parseTracestate', () => {
  it.each([
    ['version 00', TRACEPARENT, { traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 }],
    ['flags 00', `00-${TRACE_ID}-${SPAN_ID}-00`, { traceId: TRACE_ID, spanId: SPAN_ID, flags: 0 }],
    ['a future version with extra fields', `cc-${TRACE_ID}-${SPAN_ID}-01-what-the-future-holds`, { traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 }],
    ['surrounding whitespace', `  ${TRACEPARENT} `, { traceId: TRACE_ID, spanId: SPAN_ID, flags: 1 }],
  ])('accepts %s', (_case, header, expected) => {
    expect(parseTraceparent(header)).toEqual(expected);
  });

  it.each([
    ['version ff', `ff-${TRACE_ID}-${SPAN_ID}-01`],
    ['extra fields on version 00', `${TRACEPARENT}-extra`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${SPAN_ID}-01`],
    ['an all-zero span id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['upper-case hex', TRACEPARENT.toUpperCase()],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${SPAN_ID}-01`],
    ['garbage', 'hello'],
    ['two joined headers', `${TRACEPARENT}, ${TRACEPARENT}`],
  ])('rejects %s', (_case, header) => {
    expect(parseTraceparent(header, 'congo=t61rcWkgMzE')).toBeUndefined();
  });

  it('keeps a valid tracestate next to a valid traceparent and drops an invalid one', () => {
    expect(parseTraceparent(TRACEPARENT, 'rojo=00f067aa0ba902b7, congo=t61rcWkgMzE')).toEqual({
      traceId: TRACE_ID,
      spanId: SPAN_ID,
      flags: 1,
      traceState: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    });
    expect(parseTracestate('vendor@tenant=x')).toBe('vendor@tenant=x');
    expect(parseTracestate('Upper=x')).toBeUndefined();
    expect(parseTracestate('a=1,a=2')).toBeUndefined();
    expect(parseTracestate('novalue')).toBeUndefined();
    expect(parseTracestate(Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','))).toBeUndefined();
    expect(parseTracestate(`k=${'v'.repeat(600)}`)).toBeUndefined();
  });
});

describe.each(EXPRESS_VERSIONS)('a2aTracing on %s', (_name, express) => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  /** Tracing first, then body parsing (async), then the echo: the request scope must survive parsing. */
  async function serve(...handlers: Array<(req: Request, res: Response, next: NextFunction) => void>) {
    const app = express();
    app.use('/agent', ...handlers, express.json(), echoState);
    running = await start(app);
    return running.url;
  }

  const post = (url: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/agent`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: rpc(1) });

  it('honours and echoes a well-formed X-Request-Id, readable through cls-rtracer after body parsing', async () => {
    const url = await serve(a2aTracing({ opentelemetry: false }));
    const res = await post(url, { 'x-request-id': 'req-2024.01:abc_DEF-9' });
    expect(res.headers.get('x-request-id')).toBe('req-2024.01:abc_DEF-9');
    expect(await body(res)).toEqual({ state: { requestId: 'req-2024.01:abc_DEF-9' }, rtracerId: 'req-2024.01:abc_DEF-9' });
  });

  it('generates a random UUID when none is sent', async () => {
    const url = await serve(a2aTracing({ opentelemetry: false }));
    const res = await post(url);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(UUID);
    expect(await body(res)).toEqual({ state: { requestId: id }, rtracerId: id });
  });

  it.each([
    ['spaces', 'a b'],
    ['markup', '<script>'],
    ['a CRLF-ish payload', 'abc%0d%0aSet-Cookie:x'],
    ['129 characters', 'a'.repeat(129)],
  ])('replaces an incoming id with %s by a fresh one, never echoing it', async (_case, incoming) => {
    const url = await serve(a2aTracing({ opentelemetry: false }));
    const res = await post(url, { 'x-request-id': incoming });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(UUID);
    expect((await body(res)).state.requestId).toBe(id);
  });

  it("answers 400 A2A_INVALID_REQUEST_ID with invalidRequestId: 'reject'", async () => {
    const url = await serve(a2aTracing({ opentelemetry: false, invalidRequestId: 'reject' }));
    const res = await post(url, { 'x-request-id': 'not ok' });
    expect(res.status).toBe(400);
    expect(res.headers.get('x-request-id')).toMatch(UUID);
    expect(await body(res)).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'The X-Request-Id header must be 1-128 characters of [A-Za-z0-9._:-]',
        data: [{ reason: 'A2A_INVALID_REQUEST_ID' }],
      },
    });
    expect((await post(url, { 'x-request-id': 'fine' })).status).toBe(200);
  });

  it('supports a custom header, no echo, a shorter maximum and untrusted clients', async () => {
    const app = express();
    app.use(
      '/custom',
      a2aTracing({ opentelemetry: false, requestIdHeader: 'X-Correlation-Id', echoHeader: false, maxRequestIdLength: 8 }),
      echoState,
    );
    app.use('/untrusted', a2aTracing({ opentelemetry: false, trustIncomingRequestId: false }), echoState);
    running = await start(app);
    const short = await fetch(`${running.url}/custom`, { headers: { 'x-correlation-id': 'abcd1234' } });
    expect(short.headers.get('x-correlation-id')).toBeNull();
    expect((await body(short)).state.requestId).toBe('abcd1234');
    const long = await fetch(`${running.url}/custom`, { headers: { 'x-correlation-id': 'abcd12345' } });
    expect((await body(long)).state.requestId).toMatch(UUID);
    const untrusted = await fetch(`${running.url}/untrusted`, { headers: { 'x-request-id': 'client-chosen' } });
    expect(untrusted.headers.get('x-request-id')).toMatch(UUID);
  });

  it('uses generateRequestId, and reports a generator that makes bad ids as a wiring error', async () => {
    let n = 0;
    const seen: unknown[] = [];
    const app = express();
    app.use('/good', a2aTracing({ opentelemetry: false, generateRequestId: () => `gen-${++n}` }), echoState);
    app.use('/bad', a2aTracing({ opentelemetry: false, generateRequestId: () => 'has spaces' }), echoState);
    app.use(recordingErrorHandler(seen));
    running = await start(app);
    expect((await fetch(`${running.url}/good`)).headers.get('x-request-id')).toBe('gen-1');
    expect((await fetch(`${running.url}/bad`)).status).toBe(500);
    expect(seen[0]).toMatchObject({ code: 'A2A_MIDDLEWARE_MISUSE' });
  });

  it('contributes a valid traceparent/tracestate and ignores malformed ones', async () => {
    const url = await serve(a2aTracing({ opentelemetry: false }));
    const valid = await post(url, { traceparent: TRACEPARENT, tracestate: 'rojo=00f067aa0ba902b7' });
    expect((await body(valid)).state.trace).toEqual({ traceId: TRACE_ID, spanId: SPAN_ID, flags: 1, traceState: 'rojo=00f067aa0ba902b7' });
    const invalid = await post(url, { traceparent: `00-${'0'.repeat(32)}-${SPAN_ID}-01`, tracestate: 'rojo=1' });
    expect((await body(invalid)).state.trace).toBeUndefined();
  });

  it('can leave trace context alone', async () => {
    const url = await serve(a2aTracing({ opentelemetry: false, traceContext: false }));
    expect((await body(post(url, { traceparent: TRACEPARENT }))).state.trace).toBeUndefined();
  });

  describe('with OpenTelemetry', () => {
    const contextManager = new AsyncLocalStorageContextManager();
    // A minimal W3C propagator (the SDK's lives in @opentelemetry/core, not a direct dependency).
    const w3c: TextMapPropagator = {
      inject: () => undefined,
      extract: (ctx, carrier, getter) => {
        const raw = getter.get(carrier, 'traceparent');
        const parsed = parseTraceparent(Array.isArray(raw) ? raw[0] : raw);
        return parsed ? trace.setSpanContext(ctx, { traceId: parsed.traceId, spanId: parsed.spanId, traceFlags: parsed.flags, isRemote: true }) : ctx;
      },
      fields: () => ['traceparent', 'tracestate'],
    };
    beforeAll(() => {
      context.setGlobalContextManager(contextManager.enable());
      propagation.setGlobalPropagator(w3c);
    });
    afterAll(() => {
      context.disable();
      propagation.disable();
    });

    /** Terminal: the OTel span context active here, after async body parsing, plus the state. */
    function echoOtel(req: Request, res: Response): void {
      setTimeout(() => {
        const span = trace.getSpanContext(context.active());
        res.json({ otel: span ? { traceId: span.traceId, spanId: span.spanId } : null, state: readA2AState(req), rtracerId: rTracer.id() });
      }, 1);
    }

    it('extracts the incoming trace context and keeps it active through body parsing (auto-loaded API)', async () => {
      const app = express();
      app.use('/agent', a2aTracing(), express.json(), echoOtel);
      running = await start(app);
      const res = await post(running.url, { traceparent: TRACEPARENT, 'x-request-id': 'r-1' });
      expect(await body(res)).toMatchObject({ otel: { traceId: TRACE_ID, spanId: SPAN_ID }, rtracerId: 'r-1' });
    });

    it('keeps an already active span (e.g. HTTP instrumentation) and reports it when no traceparent came', async () => {
      const tracer = new BasicTracerProvider().getTracer('test');
      const instrumentation = (_req: Request, res: Response, next: NextFunction) => {
        const span = tracer.startSpan('POST /agent');
        res.on('finish', () => span.end());
        context.with(trace.setSpan(context.active(), span), next);
      };
      const app = express();
      app.use('/agent', instrumentation, a2aTracing({ opentelemetry: { context, propagation, trace } }), express.json(), echoOtel);
      running = await start(app);
      const res = await body(post(running.url));
      expect(res.otel).not.toBeNull();
      expect(res.otel.traceId).not.toBe(TRACE_ID);
      expect(res.state.trace).toEqual({ traceId: res.otel.traceId, spanId: res.otel.spanId, flags: 1 });
      // The incoming header does not replace the instrumentation's span.
      const withHeader = await body(post(running.url, { traceparent: TRACEPARENT }));
      expect(withHeader.otel.traceId).not.toBe(TRACE_ID);
      expect(withHeader.state.trace.traceId).toBe(TRACE_ID);
    });

    it('does nothing with OpenTelemetry when disabled', async () => {
      const app = express();
      app.use('/agent', a2aTracing({ opentelemetry: false }), express.json(), echoOtel);
      running = await start(app);
      expect((await body(post(running.url, { traceparent: TRACEPARENT }))).otel).toBeNull();
    });
  });
});

describe('a2aTracing options', () => {
  it('names the bad option', () => {
    expect(() => a2aTracing({ requestIdHeadr: 'x' } as never)).toThrow(
      'a2aTracing: option "requestIdHeadr" is unknown (did you mean "requestIdHeader"?)',
    );
    expect(() => a2aTracing({ maxRequestIdLength: 5000 })).toThrow(/a2aTracing: option "maxRequestIdLength"/);
    expect(() => a2aTracing({ invalidRequestId: 'drop' } as never)).toThrow(/a2aTracing: option "invalidRequestId"/);
    expect(() => a2aTracing({ opentelemetry: {} } as never)).toThrow(
      `a2aTracing: option "opentelemetry": must be 'auto', false, or the @opentelemetry/api module`,
    );
    expect(() => a2aTracing({ requestIdHeader: 'X Request' })).toThrow('a2aTracing: option "requestIdHeader": must be an HTTP header name');
  });
});
