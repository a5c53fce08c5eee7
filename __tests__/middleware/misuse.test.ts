/** Wiring mistakes: a factory passed to app.use() uncalled, and middleware identification. */
import { a2aAuth, a2aMiddlewareKind, a2aSecurity, a2aTenant, a2aTracing, fromRequestUser, header } from '../../lib/middleware';
import { EXPRESS_VERSIONS, echoState, recordingErrorHandler, start, type Running } from './helpers';

describe.each(EXPRESS_VERSIONS)('uncalled factories on %s', (_name, express) => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  it.each([
    ['a2aAuth', a2aAuth, 'a2aAuth was passed to app.use() without being called: write app.use(a2aAuth({ user: fromRequestUser() }))'],
    ['a2aTenant', a2aTenant, "a2aTenant was passed to app.use() without being called: write app.use(a2aTenant({ from: header('x-tenant-id') }))"],
    ['a2aTracing', a2aTracing, 'a2aTracing was passed to app.use() without being called: write app.use(a2aTracing())'],
    ['a2aSecurity', a2aSecurity, 'a2aSecurity was passed to app.use() without being called: write app.use(a2aSecurity())'],
  ])('%s reports itself through next(err) on the first request', async (_factory, factory, message) => {
    const seen: unknown[] = [];
    const app = express();
    app.use('/agent', factory as never, echoState);
    app.use(recordingErrorHandler(seen));
    running = await start(app);
    const res = await fetch(`${running.url}/agent`);
    expect(res.status).toBe(500);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ name: 'A2AWiringError', code: 'A2A_MIDDLEWARE_MISUSE', message });
  });
});

describe('a2aMiddlewareKind', () => {
  it('identifies the kit middlewares and nothing else', () => {
    expect(a2aMiddlewareKind(a2aAuth({ user: fromRequestUser() }))).toBe('auth');
    expect(a2aMiddlewareKind(a2aTenant({ from: header('x-tenant-id') }))).toBe('tenant');
    expect(a2aMiddlewareKind(a2aTracing({ opentelemetry: false }))).toBe('tracing');
    expect(a2aMiddlewareKind(a2aSecurity())).toBe('security');
    expect(a2aMiddlewareKind(a2aAuth)).toBeUndefined();
    expect(a2aMiddlewareKind(() => undefined)).toBeUndefined();
  });

  it('returns named middlewares', () => {
    expect(a2aAuth({ user: fromRequestUser() }).name).toBe('a2aAuth');
    expect(a2aTenant({ from: header('x') }).name).toBe('a2aTenant');
    expect(a2aTracing({ opentelemetry: false }).name).toBe('a2aTracing');
    expect(a2aSecurity().name).toBe('a2aSecurity');
  });
});
