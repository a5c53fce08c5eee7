/**
 * The README's request-scope recipes (Observability → Your own per-request values, One request id):
 * a2aTracing decides the request id and pino-http's `genReqId` reuses it (or, mounted first,
 * hands its id to a2aTracing), and an app's own
 * AsyncLocalStorage (holding `req.log`) is visible in execute() and in the kit's log lines.
 * pino-http is not a dependency of the kit: `pinoHttpLike` calls `genReqId(req, res)` and sets
 * `req.id` and `req.log` as pino-http's middleware does, which is all the recipe relies on.
 */
import { randomUUID } from 'node:crypto';
import { AsyncLocalStorage } from 'node:async_hooks';
import express from 'express';
import { a2aTracing, createA2ARouter, getA2ARequestContext, readA2AState, type AgentExecutor, type Logger } from '../../lib';
import { testCard } from '../helpers/fixtures';
import { listen, rpc, userMessage, type Listening } from '../helpers/http';

interface LogLine {
  readonly bindings: Record<string, unknown>;
  readonly fields: unknown;
  readonly msg?: string;
}

/** A pino-like logger that records lines with its child bindings. */
function recordingLogger(lines: LogLine[], bindings: Record<string, unknown> = {}) {
  const write = (fields: object | string, msg?: string) => void lines.push({ bindings, fields, msg });
  return {
    debug: write,
    info: write,
    warn: write,
    error: write,
    child: (more: Record<string, unknown>) => recordingLogger(lines, { ...bindings, ...more }),
  };
}
type RecordingLogger = ReturnType<typeof recordingLogger>;
type WithLog = express.Request & { id?: unknown; log?: RecordingLogger };

/** What pino-http's middleware does with `genReqId` (req.id, a child logger as req.log). */
function pinoHttpLike(options: { genReqId: (req: express.Request, res: express.Response) => string }, base: RecordingLogger): express.RequestHandler {
  return (req, res, next) => {
    const withLog = req as WithLog;
    withLog.id = options.genReqId(req, res);
    withLog.log = base.child({ reqId: withLog.id });
    next();
  };
}

describe('request-scope recipes', () => {
  let server: Listening | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** The README's genReqId for pino-http mounted before a2aTracing. */
  const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
  const genReqIdFirst = (req: express.Request) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.headers['x-request-id'] = id;
    return id;
  };

  async function start(order: 'tracing-first' | 'pino-first' = 'tracing-first') {
    const lines: LogLine[] = [];
    const base = recordingLogger(lines);
    const seen: { requestId?: string; log?: RecordingLogger }[] = [];
    const reqIds: unknown[] = [];

    // The recipe, as in the README.
    const requestLog = new AsyncLocalStorage<RecordingLogger>();
    const app = express();
    if (order === 'tracing-first') {
      app.use(a2aTracing());
      app.use(pinoHttpLike({ genReqId: (req) => readA2AState(req)?.requestId ?? randomUUID() }, base));
    } else {
      app.use(pinoHttpLike({ genReqId: genReqIdFirst }, base));
    }
    app.use((req, _res, next) => requestLog.run((req as WithLog).log!, next));
    app.use((req, _res, next) => {
      reqIds.push((req as WithLog).id);
      next();
    });
    const logger: Logger = {
      debug: (obj, msg) => (requestLog.getStore() ?? base).debug(obj, msg),
      info: (obj, msg) => (requestLog.getStore() ?? base).info(obj, msg),
      warn: (obj, msg) => (requestLog.getStore() ?? base).warn(obj, msg),
      error: (obj, msg) => (requestLog.getStore() ?? base).error(obj, msg),
    };
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        seen.push({ requestId: getA2ARequestContext().requestId, log: requestLog.getStore() });
        requestLog.getStore()?.info('the agent is working');
        if (ctx.userText === 'throw') throw new Error('agent failure');
        await events.complete('done');
      },
    };
    app.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger, ...(order === 'pino-first' ? { tracing: true } : {}) }));
    server = await listen(app);
    return { url: `${server.baseUrl}/agent`, lines, seen, reqIds };
  }

  const headerCases = [
    ['a valid incoming X-Request-Id', { 'X-Request-Id': 'client-id.42' }, 'client-id.42'],
    ['no X-Request-Id', {}, undefined],
    ['an invalid X-Request-Id (replaced, never echoed)', { 'X-Request-Id': 'bad id <script>' }, undefined],
    ['an X-Request-Id too long for a2aTracing', { 'X-Request-Id': 'x'.repeat(129) }, undefined],
  ] as const;
  const cases = (['tracing-first', 'pino-first'] as const).flatMap((order) =>
    headerCases.map(([name, headers, expected]) => [order, name, headers, expected] as const),
  );

  it.each(cases)('%s, with %s: pino-http, the kit and the response share one id', async (order, _name, headers, expected) => {
    const { url, lines, seen, reqIds } = await start(order);
    const reply = await rpc(url, 'SendMessage', userMessage('go'), { headers });
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');

    const echoed = reply.headers.get('x-request-id');
    if (expected) expect(echoed).toBe(expected);
    expect(echoed).toMatch(/^[A-Za-z0-9._:-]+$/);
    expect(reqIds).toEqual([echoed]);
    expect(seen).toHaveLength(1);
    expect(seen[0].requestId).toBe(echoed);
    // The app's own per-request value (req.log) reached execute().
    expect(seen[0].log).toBeDefined();
    expect(lines.find((line) => line.fields === 'the agent is working')?.bindings).toEqual({ reqId: echoed });
  });

  it("the kit's own log lines for a request go through its req.log", async () => {
    const { url, lines } = await start();
    const reply = await rpc(url, 'SendMessage', userMessage('throw'), { headers: { 'X-Request-Id': 'req-7' } });
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_FAILED');
    const kitLine = lines.find((line) => line.msg?.includes('execute() threw'));
    expect(kitLine?.bindings).toEqual({ reqId: 'req-7' });
    expect(kitLine?.fields).toMatchObject({ requestId: 'req-7' });
  });
});
