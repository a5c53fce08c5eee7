/**
 * Requests under the mount path that the router does not serve: A2A-shaped JSON 404 and 405 (with
 * `Allow`) instead of Express's HTML page, and routes outside the mount left alone.
 */
import express from 'express';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib';
import { testCard } from '../helpers/fixtures';
import { EXPRESS_VERSIONS, start, type Running } from './helpers';

const executor: AgentExecutor = { execute: (_ctx, events) => events.reply('hi') };

describe.each(EXPRESS_VERSIONS)('unmatched requests on %s', (_name) => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function serve(options: { unmatched?: 'respond' | 'next' } = {}) {
    const app = express();
    // A host route under the same prefix, registered before the router: it wins.
    app.get('/agent/health', (_req, res) => {
      res.json({ ok: true });
    });
    app.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, ...options }));
    // Registered after the router: reached only with unmatched: 'next'.
    app.get('/agent/docs', (_req, res) => {
      res.json({ docs: true });
    });
    app.get('/elsewhere', (_req, res) => {
      res.json({ elsewhere: true });
    });
    running = await start(app);
    return running.url;
  }

  it('answers another path with a JSON 404: a google.rpc.Status for GET, a JSON-RPC envelope for POST', async () => {
    const url = await serve();
    const get = await fetch(`${url}/agent/nope`);
    expect(get.status).toBe(404);
    expect(get.headers.get('content-type')).toMatch(/^application\/a2a\+json/);
    expect(await get.json()).toEqual({
      error: {
        code: 404,
        status: 'NOT_FOUND',
        message:
          'Not found: this agent serves JSON-RPC at its base URL, HTTP+JSON below it (message:send, tasks, ...) and its card at .well-known/agent-card.json below it',
        details: [],
      },
    });
    const post = await fetch(`${url}/agent/nope`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"jsonrpc":"2.0","id":3,"method":"GetTask"}',
    });
    expect(post.status).toBe(404);
    expect(post.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await post.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32601, message: expect.stringContaining('Not found') } });
  });

  it('answers another method on the JSON-RPC endpoint and on the card with 405 and Allow', async () => {
    const url = await serve();
    const get = await fetch(`${url}/agent`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST, OPTIONS');
    expect(await get.json()).toEqual({
      error: { code: 405, status: 'UNIMPLEMENTED', message: 'Method GET is not allowed here (allowed: POST, OPTIONS)', details: [] },
    });
    const put = await fetch(`${url}/agent/.well-known/agent-card.json`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(((await put.json()) as { error: { code: number } }).error.code).toBe(405);
    const head = await fetch(`${url}/agent`, { method: 'HEAD' });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('POST, OPTIONS');
  });

  it('answers OPTIONS on its paths with 204 and Allow', async () => {
    const url = await serve();
    const root = await fetch(`${url}/agent`, { method: 'OPTIONS' });
    expect([root.status, root.headers.get('allow')]).toEqual([204, 'POST, OPTIONS']);
    const card = await fetch(`${url}/agent/.well-known/agent-card.json`, { method: 'OPTIONS' });
    expect([card.status, card.headers.get('allow')]).toEqual([204, 'GET, HEAD, OPTIONS']);
  });

  it("leaves the host's routes alone: before the router under the prefix, and outside the mount", async () => {
    const url = await serve();
    expect(await (await fetch(`${url}/agent/health`)).json()).toEqual({ ok: true });
    expect(await (await fetch(`${url}/elsewhere`)).json()).toEqual({ elsewhere: true });
    // After the router under its prefix: the router answers (see unmatched: 'next').
    expect((await fetch(`${url}/agent/docs`)).status).toBe(404);
    // Outside the mount, Express's own 404 as before.
    const outside = await fetch(`${url}/nowhere`);
    expect(outside.status).toBe(404);
    expect(outside.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('warns once, naming the fix, when it answers a request that a route registered after it would serve', async () => {
    const warnings: Array<{ obj: unknown; msg?: string }> = [];
    const logger = {
      debug: () => undefined,
      info: () => undefined,
      error: () => undefined,
      warn: (obj: object | string, msg?: string) => void warnings.push({ obj, msg }),
    };
    const app = express();
    app.get('/agent/health', (_req, res) => {
      res.json({ ok: true });
    });
    app.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger }));
    const late = express.Router();
    late.post('/hooks/:id', (_req, res) => {
      res.json({ hook: true });
    });
    app.get('/agent/docs', (_req, res) => {
      res.json({ docs: true });
    });
    app.use('/agent', late);
    running = await start(app);
    // Neither the route before the router nor a path nothing else serves warns.
    await (await fetch(`${running.url}/agent/health`)).text();
    await (await fetch(`${running.url}/agent/nope`)).text();
    await (await fetch(`${running.url}/agent/docs`, { method: 'DELETE' })).text();
    expect(warnings).toEqual([]);
    await (await fetch(`${running.url}/agent/docs`)).text();
    await (await fetch(`${running.url}/agent/docs`)).text();
    expect(warnings).toEqual([
      {
        obj: { code: 'A2A_WIRING_ROUTE_AFTER_ROUTER', method: 'GET', path: '/agent/docs' },
        msg: "GET /agent/docs matches a route registered after the A2A router, which answers everything under its mount path itself (404/405). Register that route before the router, or create the router with unmatched: 'next'",
      },
    ]);
  });

  it('finds such a route in a Router mounted after it', async () => {
    const warnings: unknown[] = [];
    const logger = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (obj: object | string) => void warnings.push(obj) };
    const app = express();
    app.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger }));
    const late = express.Router();
    late.post('/hooks/:id', (_req, res) => {
      res.json({ hook: true });
    });
    app.use('/agent', late);
    running = await start(app);
    await (await fetch(`${running.url}/agent/hooks/7`, { method: 'POST' })).text();
    expect(warnings).toEqual([{ code: 'A2A_WIRING_ROUTE_AFTER_ROUTER', method: 'POST', path: '/agent/hooks/7' }]);
  });

  it("with unmatched: 'next', passes everything it does not serve on", async () => {
    const url = await serve({ unmatched: 'next' });
    expect(await (await fetch(`${url}/agent/docs`)).json()).toEqual({ docs: true });
    const nope = await fetch(`${url}/agent/nope`);
    expect(nope.status).toBe(404);
    expect(nope.headers.get('content-type')).toMatch(/^text\/html/);
    expect((await fetch(`${url}/agent/.well-known/agent-card.json`)).status).toBe(200);
  });

  it('rejects an unknown unmatched mode at construction', () => {
    expect(() => createA2ARouter({ agentCard: testCard, executor, unmatched: 'ignore' } as never)).toThrow(/createA2ARouter: option "unmatched"/);
  });
});
