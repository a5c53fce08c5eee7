/**
 * Wiring mistakes that used to pass silently: each one clear warning through the router's logger,
 * naming the fix, once (not per request); a correct layout warns about nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createA2ARouter, type AgentExecutor, type Logger } from '../../lib';
import { a2aAuth, a2aSecurity, a2aTenant, a2aTracing, bearerJwt, header } from '../../lib/middleware';
import { testCard } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { EXPRESS_VERSIONS, HS_SECRET, signToken, start, type Running } from './helpers';

const executor: AgentExecutor = { execute: (_ctx, events) => events.reply('hi') };
const SEND = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: userMessage('hi') });

interface Warning {
  code?: string;
  msg?: string;
  [key: string]: unknown;
}

function warningLogger(): Logger & { warnings: Warning[] } {
  const warnings: Warning[] = [];
  return {
    warnings,
    debug: () => undefined,
    info: () => undefined,
    warn: (obj, msg) => void warnings.push({ ...(typeof obj === 'object' ? obj : { text: obj }), msg }),
    error: () => undefined,
  };
}

const anonymous = () => a2aAuth({ allowAnonymous: true });

describe.each(EXPRESS_VERSIONS)('wiring warnings on %s', (_name) => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  /** Builds the app, sends `requests` SendMessages (and a card GET), returns the warnings. */
  async function warningsOf(
    build: (app: express.Express, router: ReturnType<typeof createA2ARouter>) => void,
    options: { path?: string; requests?: number; headers?: Record<string, string> } = {},
  ) {
    const logger = warningLogger();
    const app = express();
    build(app, createA2ARouter({ agentCard: testCard, executor, logger }));
    running = await start(app);
    const path = options.path ?? '/agent';
    for (let i = 0; i < (options.requests ?? 3); i++) {
      const res = await fetch(`${running.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...options.headers },
        body: SEND,
      });
      await res.text();
    }
    await (await fetch(`${running.url}${path}/.well-known/agent-card.json`)).text();
    return logger.warnings;
  }

  it.each([
    ['a2aAuth', 'AUTH', () => anonymous(), 'every caller is anonymous'],
    ['a2aTenant', 'TENANT', () => a2aTenant({ from: header('x-tenant-id'), required: false }), 'no tenant is resolved'],
    ['a2aSecurity', 'SECURITY', () => a2aSecurity(), 'its headers and body limit never apply'],
    ['a2aTracing', 'TRACING', () => a2aTracing({ opentelemetry: false }), 'no request id'],
  ])('%s mounted after the router: one warning naming the fix', async (factory, code, build, consequence) => {
    const warnings = await warningsOf((app, router) => {
      app.use('/agent', router);
      app.use('/agent', build());
    });
    const mine = warnings.filter((w) => w.code === `A2A_WIRING_${code}_AFTER_ROUTER`);
    expect(mine).toHaveLength(1);
    expect(mine[0].msg).toContain(`${factory} is mounted after the A2A router at /agent`);
    expect(mine[0].msg).toContain(consequence);
    expect(mine[0].msg).toContain(`app.use(path, ${factory}(`);
  });

  it('finds them in the same app.use call, app-wide, and inside a Router or a sub-app', async () => {
    const sameCall = await warningsOf((app, router) => app.use('/agent', router, anonymous()));
    expect(sameCall.map((w) => w.code)).toContain('A2A_WIRING_AUTH_AFTER_ROUTER');
    await running?.close();

    const appWide = await warningsOf((app, router) => {
      app.use('/agent', router);
      app.use(anonymous());
    });
    expect(appWide.map((w) => w.code)).toContain('A2A_WIRING_AUTH_AFTER_ROUTER');
    await running?.close();

    const inRouter = await warningsOf(
      (app, router) => {
        const api = express.Router();
        api.use('/agent', router);
        api.use('/agent', anonymous());
        app.use('/api', api);
      },
      { path: '/api/agent' },
    );
    expect(inRouter.map((w) => w.code)).toContain('A2A_WIRING_AUTH_AFTER_ROUTER');
    await running?.close();

    const inSubApp = await warningsOf(
      (app, router) => {
        const v1 = express();
        v1.use('/agent', router);
        v1.use('/agent', express.Router().use(anonymous()));
        app.use('/v1', v1);
      },
      { path: '/v1/agent' },
    );
    expect(inSubApp.map((w) => w.code)).toContain('A2A_WIRING_AUTH_AFTER_ROUTER');
  });

  it('does not count middlewares mounted after the router on another path', async () => {
    const warnings = await warningsOf((app, router) => {
      app.use('/agent', anonymous(), router);
      app.use('/other', a2aSecurity(), anonymous());
    });
    expect(warnings).toEqual([]);
  });

  it('a2aTracing after a2aAuth', async () => {
    const warnings = await warningsOf((app, router) => app.use('/agent', anonymous(), a2aTracing({ opentelemetry: false }), router));
    expect(warnings).toEqual([
      expect.objectContaining({ code: 'A2A_WIRING_TRACING_AFTER_AUTH', msg: expect.stringContaining('Mount a2aTracing before a2aAuth') }),
    ]);
  });

  it('a2aAuth configured twice on one request path (app-wide and in the router preset)', async () => {
    const logger = warningLogger();
    const app = express();
    app.use(anonymous());
    app.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger, auth: { user: bearerJwt({ key: HS_SECRET }) } }));
    running = await start(app);
    const token = await signToken({ sub: 'alice' });
    for (let i = 0; i < 3; i++) {
      await (
        await fetch(`${running.url}/agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'a2a-version': '1.0', authorization: `Bearer ${token}` },
          body: SEND,
        })
      ).text();
    }
    expect(logger.warnings).toEqual([expect.objectContaining({ code: 'A2A_WIRING_AUTH_TWICE', msg: expect.stringContaining('Configure it once') })]);
  });

  it('two routers on one path: the first says the second is unreachable', async () => {
    const second = warningLogger();
    const warnings = await warningsOf((app, router) => {
      app.use('/agent', router);
      app.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger: second }));
    });
    const mine = warnings.filter((w) => w.code === 'A2A_WIRING_ROUTER_AFTER_ROUTER');
    expect(mine).toHaveLength(1);
    expect(mine[0].msg).toContain('another A2A router is mounted after the A2A router at /agent: it never receives a request');
    expect(second.warnings).toEqual([]);
  });

  it('a correct layout warns about nothing', async () => {
    const warnings = await warningsOf((app, router) => {
      app.use(
        '/agent',
        a2aSecurity(),
        a2aTracing({ opentelemetry: false }),
        anonymous(),
        a2aTenant({ from: header('x-tenant-id'), required: false }),
        router,
      );
      app.use('/other', anonymous());
    });
    expect(warnings).toEqual([]);
  });

  describe('no authentication on a public address', () => {
    /** Listens on `host` and sends through loopback; returns the warnings. */
    async function listenOn(host: string, router: (logger: Logger) => ReturnType<typeof createA2ARouter>, before: express.RequestHandler[] = []) {
      const logger = warningLogger();
      const app = express();
      app.use('/agent', ...before, router(logger));
      const server = http.createServer(app);
      await new Promise<void>((resolve) => server.listen(0, host, resolve));
      const { port } = server.address() as AddressInfo;
      try {
        for (let i = 0; i < 3; i++) {
          const res = await fetch(`http://127.0.0.1:${port}/agent`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
            body: SEND,
          });
          await res.text();
        }
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
      return logger.warnings;
    }

    const plain = (logger: Logger) => createA2ARouter({ agentCard: testCard, executor, logger });

    it('warns once when the server listens on all interfaces', async () => {
      const warnings = await listenOn('0.0.0.0', plain);
      expect(warnings).toEqual([
        expect.objectContaining({
          code: 'A2A_WIRING_NO_AUTH',
          address: '0.0.0.0',
          msg: expect.stringMatching(/no authentication and the server listens on 0\.0\.0\.0: .*Add a2aAuth/),
        }),
      ]);
    });

    it('stays quiet on loopback, with a2aAuth, and with a callContext hook', async () => {
      expect(await listenOn('127.0.0.1', plain)).toEqual([]);
      expect(await listenOn('0.0.0.0', plain, [anonymous()])).toEqual([]);
      expect(
        await listenOn('0.0.0.0', (logger) => createA2ARouter({ agentCard: testCard, executor, logger, auth: { allowAnonymous: true } })),
      ).toEqual([]);
      expect(
        await listenOn('0.0.0.0', (logger) =>
          createA2ARouter({ agentCard: testCard, executor, logger, callContext: () => ({ caller: { id: 'svc', authenticated: true } }) }),
        ),
      ).toEqual([]);
    });
  });
});
