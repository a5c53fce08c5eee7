/**
 * a2aAuthErrors: the host app's own auth errors (express-jwt's UnauthorizedError, status 401/403)
 * answered in the A2A shape with a WWW-Authenticate challenge; every other error passed on. By
 * default only on requests for the A2A router: the app's own routes keep their 401s (issue 20).
 */
import { expressjwt } from 'express-jwt';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib';
import { a2aAuth, a2aAuthErrors, fromRequestUser } from '../../lib/middleware';
import { testCard } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { EXPRESS_VERSIONS, HS_SECRET, recordingErrorHandler, signToken, start, type Running } from './helpers';

const executor: AgentExecutor = { execute: (ctx, events) => events.reply(`hello ${ctx.caller.id}`) };
const SEND = JSON.stringify({ jsonrpc: '2.0', id: 'r-1', method: 'SendMessage', params: userMessage('hi') });

describe.each(EXPRESS_VERSIONS)('a2aAuthErrors on %s', (_name) => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function serve(errorsOptions?: Parameters<typeof a2aAuthErrors>[0]) {
    const seen: unknown[] = [];
    const warnings: unknown[] = [];
    const app = express();
    app.use(express.json());
    // A 403 of the host's own (e.g. a scope check) in front of the router, asked for by a header.
    const forbidOnAsk = (req: Request, _res: Response, next: NextFunction) =>
      next(req.headers['x-forbid'] ? Object.assign(new Error('insufficient scope'), { status: 403 }) : undefined);
    app.use(
      '/agent',
      forbidOnAsk,
      expressjwt({ secret: Buffer.from(HS_SECRET), algorithms: ['HS256'] }),
      a2aAuth({ user: fromRequestUser() }),
      createA2ARouter({ agentCard: testCard, executor, logger: silentLogger }),
    );
    app.get('/forbidden', (_req: Request, _res: Response, next: NextFunction) => {
      next(Object.assign(new Error('insufficient scope'), { status: 403 }));
    });
    // The app's own login route, refusing with its own 401.
    app.get('/account', (_req: Request, _res: Response, next: NextFunction) => {
      next(Object.assign(new Error('log in first'), { status: 401 }));
    });
    app.get('/boom', (_req: Request, _res: Response, next: NextFunction) => {
      next(new Error('boom'));
    });
    app.use(a2aAuthErrors({ ...errorsOptions, logger: { warn: (obj: unknown) => void warnings.push(obj) } }));
    app.use(recordingErrorHandler(seen));
    running = await start(app);
    const send = (headers: Record<string, string> = {}) =>
      fetch(`${running!.url}/agent`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'a2a-version': '1.0', ...headers },
        body: SEND,
      });
    return { send, seen, warnings };
  }

  it("turns express-jwt's missing-token 401 into A2A_AUTH_REQUIRED with the realm", async () => {
    const { send, seen, warnings } = await serve({ realm: 'corp' });
    const res = await send();
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="corp"');
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      jsonrpc: '2.0',
      id: 'r-1',
      error: {
        code: -32600,
        message: 'Authentication required',
        data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'A2A_AUTH_REQUIRED', domain: 'a2a-express-kit' }],
      },
    });
    expect(seen).toEqual([]);
    expect(warnings).toEqual([expect.objectContaining({ reason: 'A2A_AUTH_REQUIRED', status: 401 })]);
  });

  it("turns express-jwt's invalid-token 401 into A2A_AUTH_INVALID, without the library's message", async () => {
    const { send } = await serve({ realm: 'corp' });
    const wrongKey = await signToken({ sub: 'x' }, { key: new TextEncoder().encode('another-secret-that-is-at-least-32-bytes!!') });
    const res = await send({ authorization: `Bearer ${wrongKey}` });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="corp", error="invalid_token", error_description="The access token is invalid"');
    const body = (await res.json()) as { error: { message: string; data: Array<{ reason: string }> } };
    expect(body.error.message).toBe('Invalid credentials');
    expect(body.error.data[0].reason).toBe('A2A_AUTH_INVALID');
    expect(JSON.stringify(body)).not.toMatch(/signature/);
  });

  it('lets a valid token through to the agent', async () => {
    const { send } = await serve();
    const res = await send({ authorization: `Bearer ${await signToken({ sub: 'alice' })}` });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { result: { message: { parts: Array<{ text: string }> } } }).result.message.parts[0].text).toBe('hello alice');
  });

  it('answers a 403 as PERMISSION_DENIED with insufficient_scope, in the binding of the request', async () => {
    const { seen } = await serve({ realm: 'corp' });
    const res = await fetch(`${running!.url}/agent/tasks`, { headers: { 'x-forbid': '1' } });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="corp", error="insufficient_scope"');
    expect(await res.json()).toEqual({
      error: {
        code: 403,
        status: 'PERMISSION_DENIED',
        message: 'The caller is not allowed to do this',
        details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'A2A_AUTH_FORBIDDEN', domain: 'a2a-express-kit' }],
      },
    });
    expect(seen).toEqual([]);
  });

  it("leaves the app's own 401s and 403s on its other routes to the app, by default", async () => {
    const { seen, warnings } = await serve({ realm: 'corp' });
    const account = await fetch(`${running!.url}/account`);
    expect(account.status).toBe(500);
    expect(account.headers.get('www-authenticate')).toBeNull();
    expect(await account.json()).toEqual({ appHandler: true, message: 'log in first' });
    const forbidden = await fetch(`${running!.url}/forbidden`);
    expect(await forbidden.json()).toEqual({ appHandler: true, message: 'insufficient scope' });
    expect(seen).toEqual([expect.objectContaining({ status: 401 }), expect.objectContaining({ status: 403 })]);
    expect(warnings).toEqual([]);
  });

  it("answers every 401/403 of the app with scope: 'app'", async () => {
    const { seen } = await serve({ realm: 'corp', scope: 'app' });
    const account = await fetch(`${running!.url}/account`);
    expect(account.status).toBe(401);
    expect(account.headers.get('www-authenticate')).toBe(
      'Bearer realm="corp", error="invalid_token", error_description="The access token is invalid"',
    );
    const forbidden = await fetch(`${running!.url}/forbidden`);
    expect(forbidden.status).toBe(403);
    expect(((await forbidden.json()) as { error: { status: string } }).error.status).toBe('PERMISSION_DENIED');
    expect(seen).toEqual([]);
  });

  it('on a router mounted at the root, answers its paths and leaves the others to the app', async () => {
    const seen: unknown[] = [];
    const app = express();
    app.use(express.json());
    app.get('/account', (_req: Request, _res: Response, next: NextFunction) => next(Object.assign(new Error('log in first'), { status: 401 })));
    app.use(
      expressjwt({ secret: Buffer.from(HS_SECRET), algorithms: ['HS256'] }),
      createA2ARouter({ agentCard: testCard, executor, logger: silentLogger }),
    );
    app.use(a2aAuthErrors());
    app.use(recordingErrorHandler(seen));
    running = await start(app);
    const rpc = await fetch(running.url, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, body: SEND });
    expect(rpc.status).toBe(401);
    expect(((await rpc.json()) as { id: string; error: { message: string } }).error.message).toBe('Authentication required');
    const tasks = await fetch(`${running.url}/tasks`, { headers: { 'a2a-version': '1.0' } });
    expect(tasks.status).toBe(401);
    expect(((await tasks.json()) as { error: { status: string } }).error.status).toBe('UNAUTHENTICATED');
    const account = await fetch(`${running.url}/account`);
    expect(await account.json()).toEqual({ appHandler: true, message: 'log in first' });
    expect(seen).toEqual([expect.objectContaining({ status: 401 })]);
  });

  it('finds a router nested in an express.Router, refused by the auth in front of it', async () => {
    const seen: unknown[] = [];
    const app = express();
    const api = express.Router();
    api.use(
      '/agent',
      expressjwt({ secret: Buffer.from(HS_SECRET), algorithms: ['HS256'] }),
      createA2ARouter({ agentCard: testCard, executor, logger: silentLogger }),
    );
    api.get('/account', (_req: Request, _res: Response, next: NextFunction) => next(Object.assign(new Error('log in first'), { status: 401 })));
    app.use(express.json());
    app.use('/api', api);
    app.use(a2aAuthErrors());
    app.use(recordingErrorHandler(seen));
    running = await start(app);
    const rpc = await fetch(`${running.url}/api/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: SEND,
    });
    expect(rpc.status).toBe(401);
    expect(((await rpc.json()) as { id: string }).id).toBe('r-1');
    const account = await fetch(`${running.url}/api/account`);
    expect(await account.json()).toEqual({ appHandler: true, message: 'log in first' });
  });

  it('passes every other error on', async () => {
    const { seen } = await serve();
    const res = await fetch(`${running!.url}/boom`);
    expect(res.status).toBe(500);
    expect(seen).toEqual([expect.objectContaining({ message: 'boom' })]);
  });

  it('checks its options', () => {
    expect(() => a2aAuthErrors({ realm: 'a"b' })).toThrow('a2aAuthErrors: option "realm": must be printable ASCII without quotes or backslashes');
    expect(() => a2aAuthErrors({ relm: 'x' } as never)).toThrow('a2aAuthErrors: option "relm" is unknown (did you mean "realm"?)');
    expect(() => a2aAuthErrors({ scope: 'everything' } as never)).toThrow(/a2aAuthErrors: option "scope"/);
  });
});
