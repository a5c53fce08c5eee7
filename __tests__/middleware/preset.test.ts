/** a2aMiddlewareChain: the pieces, built from options, in front of the real router, in the right order. */
import type { AgentExecutor } from '../../lib';
import { a2aAuth, a2aMiddlewareChain, a2aMiddlewareKind, a2aTenant, a2aTracing, bearerJwt, claim, header } from '../../lib/middleware';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { HS_SECRET, signToken } from './helpers';

const executor: AgentExecutor = {
  async execute(ctx, events) {
    await events.reply(`${ctx.caller.id}@${ctx.tenant}`);
  },
};

describe('a2aMiddlewareChain in front of the router', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, {
      before: a2aMiddlewareChain({
        // Given out of order on purpose: the chain orders them.
        tenant: { from: claim('tid') },
        auth: { user: bearerJwt({ key: HS_SECRET }) },
        tracing: { opentelemetry: false },
        security: { bodyLimit: '2kb' },
      }),
    });
  });
  afterAll(() => server.close());

  it('runs security, tracing, auth, tenant in that order and reaches the agent', async () => {
    const token = await signToken({ sub: 'carol', tid: 'globex' });
    const reply = await rpc(server.url, 'SendMessage', userMessage('hi'), { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'r-9' } });
    expect(reply.body.result.message.parts[0].text).toBe('carol@globex');
    expect(reply.headers.get('x-request-id')).toBe('r-9');
    expect(reply.headers.get('content-security-policy')).toBe("default-src 'none';frame-ancestors 'none'");
  });

  it('rejects an oversized body before authenticating, and a 401 still carries the request id', async () => {
    const big = await rpc(server.url, 'SendMessage', userMessage('x'.repeat(5000)));
    expect(big.status).toBe(413);
    expect(big.body.error.data[0].reason).toBe('A2A_BODY_TOO_LARGE');
    const anonymous = await rpc(server.url, 'SendMessage', userMessage('hi'), { headers: { 'x-request-id': 'r-10' } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('x-request-id')).toBe('r-10');
  });
});

describe('a2aMiddlewareChain options', () => {
  it('builds only what is configured, accepts built middlewares in their slot', () => {
    expect(a2aMiddlewareChain({}).length).toBe(0);
    const chain = a2aMiddlewareChain({
      security: true,
      tracing: a2aTracing({ opentelemetry: false }),
      auth: false,
      tenant: a2aTenant({ from: header('x-t') }),
    });
    expect(chain.map(a2aMiddlewareKind)).toEqual(['security', 'tracing', 'tenant']);
  });

  it('names the bad option', () => {
    expect(() => a2aMiddlewareChain({ auht: {} } as never)).toThrow('a2aMiddlewareChain: option "auht" is unknown (did you mean "auth"?)');
    expect(() => a2aMiddlewareChain({ auth: true } as never)).toThrow('a2aMiddlewareChain: option "auth": true is not enough; pass a2aAuth options');
    expect(() => a2aMiddlewareChain({ tenant: a2aAuth({ allowAnonymous: true }) })).toThrow(
      'a2aMiddlewareChain: option "tenant": expected options or a built a2aTenant(...), got a a2aAuth() middleware',
    );
    expect(() => a2aMiddlewareChain({ auth: { allowAnonymus: true } } as never)).toThrow('a2aAuth: option "allowAnonymus" is unknown');
    expect(() => a2aMiddlewareChain({ security: { bodyLimit: -1 } }, 'createA2ARouter')).toThrow('a2aSecurity: option "bodyLimit"');
  });
});
