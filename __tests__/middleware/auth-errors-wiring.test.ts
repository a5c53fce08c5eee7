/**
 * Issue 30, item 5: the app's own auth in front of the router (express-jwt), whose 401s for A2A
 * routes would leave in the app's shape: one warning, naming the fix, when a2aAuthErrors is missing
 * or mounted after the app's own error handler; none when it answers first. And with the app's
 * auth in front of a2aTracing (the docs' order), the 401 a2aAuthErrors writes carries X-Request-Id.
 */
import express, { type ErrorRequestHandler } from 'express';
import { expressjwt } from 'express-jwt';
import { createA2ARouter, type AgentExecutor } from '../../lib';
import { a2aAuth, a2aAuthErrors, a2aTracing, fromRequestUser } from '../../lib/middleware';
import { testCard } from '../helpers/fixtures';
import { HS_SECRET, signToken, start, type Running } from './helpers';

const executor: AgentExecutor = { execute: (ctx, events) => events.reply(`hello ${ctx.caller.id}`) };
const appErrors: ErrorRequestHandler = function appErrors(err: { status?: number; code?: string }, _req, res, _next) {
  res.status(err.status ?? 500).json({ error: { code: err.code } });
};

type Layout = 'no a2aAuthErrors' | 'a2aAuthErrors after the app handler' | 'a2aAuthErrors first' | 'no error handler at all';

describe('A2A_WIRING_AUTH_ERRORS', () => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function serve(layout: Layout) {
    const warnings: Array<{ code?: string; [key: string]: unknown }> = [];
    const logger = { debug() {}, info() {}, error() {}, warn: (obj: object, msg?: string) => void warnings.push({ ...obj, msg }) };
    const app = express();
    app.use(
      '/agent',
      expressjwt({ secret: Buffer.from(HS_SECRET), algorithms: ['HS256'] }),
      a2aTracing(),
      a2aAuth({ user: fromRequestUser() }),
      createA2ARouter({ agentCard: testCard, executor, logger }),
    );
    if (layout === 'a2aAuthErrors first') app.use(a2aAuthErrors());
    if (layout !== 'no error handler at all') app.use(appErrors);
    if (layout === 'a2aAuthErrors after the app handler') app.use(a2aAuthErrors());
    running = await start(app);
    const send = async (token?: string) =>
      fetch(`${running!.url}/agent/message:send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } }),
      });
    return { send, warnings: () => warnings.filter((w) => w.code === 'A2A_WIRING_AUTH_ERRORS') };
  }

  it.each<[Layout, string]>([
    ['no a2aAuthErrors', "the app's error handler appErrors"],
    ['a2aAuthErrors after the app handler', "the app's error handler appErrors"],
  ])('%s: one warning naming a2aAuthErrors, once', async (layout, where) => {
    const { send, warnings } = await serve(layout);
    const refused = await send();
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: { code: 'credentials_required' } });
    const token = await signToken({ sub: 'alice' });
    expect((await send(token)).status).toBe(200);
    expect((await send(token)).status).toBe(200);
    expect(warnings()).toEqual([expect.objectContaining({ path: '/agent', handler: 'appErrors', msg: expect.stringContaining(where) })]);
    expect(warnings()[0].msg).toMatch(/app\.use\(a2aAuthErrors\(\)\) after the routes and before the app's own error handler/);
  });

  it("no error handler at all: the warning names Express's final handler", async () => {
    const { send, warnings } = await serve('no error handler at all');
    const refused = await send();
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expect((await send(await signToken({ sub: 'alice' }))).status).toBe(200);
    expect(warnings()).toEqual([expect.objectContaining({ handler: 'final', msg: expect.stringContaining("Express's final handler") })]);
  });

  it('a2aAuthErrors before the app handler: no warning, and the 401 carries the request id though a2aTracing runs after the app auth', async () => {
    const { send, warnings } = await serve('a2aAuthErrors first');
    const refused = await send();
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Bearer realm="a2a"');
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect((await send(await signToken({ sub: 'alice' }))).status).toBe(200);
    expect(warnings()).toEqual([]);
  });
});
