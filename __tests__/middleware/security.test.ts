/** a2aSecurity: the helmet preset and the body size limit, over real HTTP. */
import type { NextFunction, Request, Response } from 'express';
import { A2A_DEFAULT_BODY_LIMIT, a2aSecurity, bodyTooLargeError, parseByteSize, readA2ABodyLimit, sendMiddlewareError } from '../../lib/middleware';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib';
import { testCard } from '../helpers/fixtures';
import { EXPRESS_VERSIONS, body, echoState, rawRequest, rpc, start, type Running } from './helpers';

const replyingExecutor: AgentExecutor = {
  async execute(_ctx, events) {
    await events.reply('ok');
  },
};

describe('parseByteSize', () => {
  it.each([
    [1024, 1024],
    ['100', 100],
    ['512kb', 512 * 1024],
    ['1.5MB', 1.5 * 1024 * 1024],
    ['1 gb', 1024 ** 3],
  ])('%p → %p bytes', (input, bytes) => {
    expect(parseByteSize(input)).toBe(bytes);
  });

  it.each([[0], [-1], [1.5], ['ten'], ['5tb'], ['']])('rejects %p', (input) => {
    expect(parseByteSize(input)).toBeUndefined();
  });
});

describe.each(EXPRESS_VERSIONS)('a2aSecurity on %s', (_name, express) => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function serve(...handlers: Array<(req: Request, res: Response, next: NextFunction) => void>) {
    const app = express();
    app.use('/agent', ...handlers, express.json(), echoState);
    running = await start(app);
    return running;
  }

  it('sets the JSON + SSE API headers', async () => {
    const { url } = await serve(a2aSecurity());
    const res = await fetch(`${url}/agent`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('strict-transport-security')).toBeNull();
    expect(res.headers.get('x-powered-by')).toBeNull();
    // Helmet's document-only headers do nothing for a JSON or SSE answer: the preset leaves them out.
    for (const name of [
      'cross-origin-opener-policy',
      'origin-agent-cluster',
      'referrer-policy',
      'x-dns-prefetch-control',
      'x-download-options',
      'x-permitted-cross-domain-policies',
      'x-xss-protection',
    ]) {
      expect([name, res.headers.get(name)]).toEqual([name, null]);
    }
  });

  it('brings a document-only header back with an override', async () => {
    const { url } = await serve(a2aSecurity({ helmet: { referrerPolicy: { policy: 'no-referrer' }, xXssProtection: true } }));
    const res = await fetch(`${url}/agent`);
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('x-xss-protection')).toBe('0');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('merges helmet overrides, including helmet aliases, and can skip helmet', async () => {
    const app = express();
    app.use('/hsts', a2aSecurity({ helmet: { hsts: { maxAge: 600 }, crossOriginResourcePolicy: { policy: 'cross-origin' } } }), echoState);
    app.use('/plain', a2aSecurity({ helmet: false }), echoState);
    running = await start(app);
    const hsts = await fetch(`${running.url}/hsts`);
    expect(hsts.headers.get('strict-transport-security')).toBe('max-age=600; includeSubDomains');
    expect(hsts.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(hsts.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
    const plain = await fetch(`${running.url}/plain`);
    expect(plain.headers.get('content-security-policy')).toBeNull();
  });

  it('answers 413 with a JSON-RPC error for a declared Content-Length over the limit', async () => {
    const { url } = await serve(a2aSecurity({ bodyLimit: '1kb' }));
    const res = await fetch(`${url}/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: rpc(1, 'SendMessage', { text: 'x'.repeat(2000) }),
    });
    expect(res.status).toBe(413);
    expect(await body(res)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Request body too large',
        data: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'A2A_BODY_TOO_LARGE',
            domain: 'a2a-express-kit',
            metadata: { limit: '1024' },
          },
        ],
      },
    });
    const small = await fetch(`${url}/agent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: rpc(2) });
    expect(small.status).toBe(200);
  });

  it('answers 413 with a JSON-RPC error through the router, and closes the connection', async () => {
    const app = express();
    app.use('/agent', createA2ARouter({ agentCard: testCard, executor: replyingExecutor, logger: silentLogger, security: { bodyLimit: 100 } }));
    running = await start(app);
    const payload = rpc(4, 'SendMessage', { message: { role: 'ROLE_USER', messageId: 'm-1', parts: [{ text: 'x'.repeat(200) }] } });
    const res = await rawRequest(running.port, {
      method: 'POST',
      path: '/agent',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), 'a2a-version': '1.0' },
      body: payload,
    });
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe('close');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: 'Request body too large',
        data: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'A2A_BODY_TOO_LARGE',
            domain: 'a2a-express-kit',
            metadata: { limit: '100' },
          },
        ],
      },
    });
  });

  it('hands the limit to the body parser for chunked bodies (what the router does)', async () => {
    const app = express();
    app.use(
      '/agent',
      a2aSecurity({ bodyLimit: '1kb' }),
      (req: Request, res: Response, next: NextFunction) => express.json({ limit: readA2ABodyLimit(req) ?? A2A_DEFAULT_BODY_LIMIT })(req, res, next),
      echoState,
    );
    app.use((err: { type?: string }, req: Request, res: Response, next: NextFunction) => {
      if (err.type === 'entity.too.large') sendMiddlewareError(req, res, bodyTooLargeError(readA2ABodyLimit(req) ?? 0));
      else next(err);
    });
    running = await start(app);
    const big = JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'SendMessage', params: { text: 'x'.repeat(3000) } });
    const res = await rawRequest(running.port, {
      method: 'POST',
      path: '/agent',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: [Buffer.from(big.slice(0, 1500)), Buffer.from(big.slice(1500))],
    });
    expect(res.status).toBe(413);
    expect(res.json().error).toMatchObject({ code: -32600, message: 'Request body too large' });
  });
});

describe('a2aSecurity options', () => {
  it('names the bad option', () => {
    expect(() => a2aSecurity({ bodyLimit: '10 parsecs' })).toThrow(
      `a2aSecurity: option "bodyLimit": must be a positive number of bytes up to 1gb, or a size such as '512kb' or '2mb'`,
    );
    expect(() => a2aSecurity({ bodyLimt: '1mb' } as never)).toThrow('a2aSecurity: option "bodyLimt" is unknown (did you mean "bodyLimit"?)');
    expect(() => a2aSecurity({ helmet: { contentSecurityPolicyy: false } } as never)).toThrow(
      'a2aSecurity: option "helmet.contentSecurityPolicyy" is unknown (did you mean "helmet.contentSecurityPolicy"?)',
    );
    expect(() => a2aSecurity({ helmet: { referrerPolicy: { policy: 'bogus' } } } as never)).toThrow(/a2aSecurity: option "helmet":/);
    expect(() => a2aSecurity({ helmet: true } as never)).toThrow(/a2aSecurity: option "helmet"/);
  });
});
