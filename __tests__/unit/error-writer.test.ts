/**
 * The one error writer (lib/context/reply.ts, rendering in lib/protocol/error-body.ts): HTTP status per binding, the JSON-RPC
 * envelope, the HTTP+JSON google.rpc.Status body (no route serves that binding yet, so it is
 * checked here), the headers an error carries, and the challenge every 401 gets.
 */
import type http from 'node:http';
import type { Request, Response } from 'express';
import { A2AError, A2AMiddlewareError, ERROR_TABLE, type A2AErrorName } from '../../lib/errors';
import { rememberChallenge, writeError } from '../../lib/context/reply';
import { httpStatusOf, renderError, type ErrorBinding } from '../../lib/protocol/error-body';
import { A2A_MIDDLEWARE_ERRORS, errorBindingFor, type A2AMiddlewareReason } from '../../lib/middleware/errors';
import { start, type Running } from '../middleware/helpers';

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

describe('HTTP status of an error', () => {
  const kinds = Object.keys(ERROR_TABLE) as A2AErrorName[];

  it.each(kinds)('%s: the table status in HTTP+JSON; 200 in JSON-RPC but for 401, 413 and 503', (kind) => {
    const error = new A2AError(kind);
    expect(httpStatusOf(error, 'rest')).toBe(ERROR_TABLE[kind].http);
    const expected = kind === 'Unauthenticated' ? 401 : kind === 'PayloadTooLarge' ? 413 : kind === 'Unavailable' ? 503 : 200;
    expect(httpStatusOf(error, 'jsonrpc')).toBe(expected);
  });

  // The README's table of middleware rejections: a rejection keeps its HTTP status in JSON-RPC too.
  it.each<[A2AMiddlewareReason, number, number, string]>([
    ['A2A_AUTH_REQUIRED', 401, -32600, 'UNAUTHENTICATED'],
    ['A2A_AUTH_INVALID', 401, -32600, 'UNAUTHENTICATED'],
    ['A2A_AUTH_UNAVAILABLE', 503, -32603, 'UNAVAILABLE'],
    ['A2A_TENANT_REQUIRED', 400, -32602, 'INVALID_ARGUMENT'],
    ['A2A_INVALID_TENANT', 400, -32602, 'INVALID_ARGUMENT'],
    ['A2A_INVALID_REQUEST_ID', 400, -32600, 'INVALID_ARGUMENT'],
    ['A2A_BODY_TOO_LARGE', 413, -32600, 'INVALID_ARGUMENT'],
  ])('%s: HTTP %d, JSON-RPC %d, %s, in both bindings', (reason, httpStatus, code, status) => {
    const error = new A2AMiddlewareError(reason);
    expect(error).toMatchObject({ reason, httpStatus, code, status, domain: 'a2a-express-kit', message: A2A_MIDDLEWARE_ERRORS[reason].message });
    expect(httpStatusOf(error, 'jsonrpc')).toBe(httpStatus);
    expect(httpStatusOf(error, 'rest')).toBe(httpStatus);
  });

  it('covers every middleware reason above', () => {
    expect(Object.keys(A2A_MIDDLEWARE_ERRORS)).toHaveLength(7);
  });
});

describe('renderError', () => {
  const notFound = new A2AError('TaskNotFound', 'Task t-1 not found', { metadata: { taskId: 't-1' } });

  it('writes a JSON-RPC envelope with the request id', () => {
    expect(renderError(notFound, 'jsonrpc', 0)).toEqual({
      status: 200,
      contentType: 'application/json',
      body: {
        jsonrpc: '2.0',
        id: 0,
        error: {
          code: -32001,
          message: 'Task t-1 not found',
          data: [{ '@type': ERROR_INFO, reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { taskId: 't-1' } }],
        },
      },
    });
  });

  it('writes a google.rpc.Status with the table status for HTTP+JSON', () => {
    expect(renderError(notFound, 'rest')).toEqual({
      status: 404,
      contentType: 'application/a2a+json',
      body: {
        error: {
          code: 404,
          status: 'NOT_FOUND',
          message: 'Task t-1 not found',
          details: [{ '@type': ERROR_INFO, reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org', metadata: { taskId: 't-1' } }],
        },
      },
    });
  });

  it('gives middleware rejections and Unavailable their own status in HTTP+JSON', () => {
    expect(renderError(new A2AMiddlewareError('A2A_AUTH_REQUIRED'), 'rest').body).toEqual({
      error: {
        code: 401,
        status: 'UNAUTHENTICATED',
        message: 'Authentication required',
        details: [{ '@type': ERROR_INFO, reason: 'A2A_AUTH_REQUIRED', domain: 'a2a-express-kit' }],
      },
    });
    expect(renderError(new A2AMiddlewareError('A2A_BODY_TOO_LARGE'), 'rest')).toMatchObject({
      status: 413,
      body: { error: { code: 413, status: 'INVALID_ARGUMENT', message: 'Request body too large' } },
    });
    expect(renderError(new A2AError('Unavailable'), 'rest')).toEqual({
      status: 503,
      contentType: 'application/a2a+json',
      body: { error: { code: 503, status: 'UNAVAILABLE', message: 'The service is temporarily unavailable', details: [] } },
    });
    expect(renderError(new A2AError('Unavailable'), 'jsonrpc')).toMatchObject({ status: 503, body: { error: { code: -32603 } } });
  });
});

describe('writeError over HTTP', () => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  /** Serves every request with `handle`, then reads one response. */
  async function answer(handle: (req: Request, res: Response) => void) {
    running = await start((req: http.IncomingMessage, res: http.ServerResponse) => handle(req as Request, res as unknown as Response));
    const res = await fetch(running.url);
    return { status: res.status, headers: res.headers, body: await res.text() };
  }

  it('sends the headers the error carries, in either binding', async () => {
    const error = new A2AError('Unavailable', undefined, { headers: { 'Retry-After': '5' } });
    for (const binding of ['jsonrpc', 'rest'] as ErrorBinding[]) {
      const res = await answer((req, r) => writeError(req, r, error, binding, 7));
      expect([binding, res.status, res.headers.get('retry-after')]).toEqual([binding, 503, '5']);
      await running?.close();
      running = undefined;
    }
  });

  it("gives a 401 the error's own challenge, else the one a2aAuth recorded, else the default", async () => {
    const own = new A2AMiddlewareError('A2A_AUTH_REQUIRED', undefined, { headers: { 'WWW-Authenticate': 'Bearer realm="own"' } });
    expect((await answer((req, res) => writeError(req, res, own, 'jsonrpc'))).headers.get('www-authenticate')).toBe('Bearer realm="own"');
    await running?.close();
    const engine = new A2AError('Unauthenticated');
    const recorded = await answer((req, res) => {
      rememberChallenge(req, () => 'Bearer realm="corp"');
      writeError(req, res, engine, 'rest');
    });
    expect([recorded.status, recorded.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="corp"']);
    await running?.close();
    const plain = await answer((req, res) => writeError(req, res, engine, 'jsonrpc'));
    expect([plain.status, plain.headers.get('www-authenticate')]).toEqual([401, 'Bearer realm="a2a"']);
  });

  it('answers anything else as a generic Internal error, logged but never echoed', async () => {
    const logged: unknown[] = [];
    const logger = { debug() {}, info() {}, warn() {}, error: (obj: unknown) => void logged.push(obj) };
    const res = await answer((req, r) => writeError(req, r, new Error('db password is hunter2'), 'jsonrpc', 'a', logger));
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ jsonrpc: '2.0', id: 'a', error: { code: -32603, message: 'Internal error' } });
    expect(res.body).not.toContain('hunter2');
    expect(logged).toHaveLength(1);
  });

  it('cuts a response whose headers were already sent instead of appending an error to it', async () => {
    running = await start((req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"partial":');
      writeError(req as Request, res as unknown as Response, new A2AError('Internal'), 'jsonrpc');
    });
    await expect(fetch(running.url).then((r) => r.text())).rejects.toThrow();
  });
});

describe('errorBindingFor (a middleware with no router ahead classifies as a router at its mount would)', () => {
  const req = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    ({ method, path, url: path, body, headers }) as Request;

  it.each([
    ['a parsed JSON-RPC body on a path no router serves', req('GET', '/login', { jsonrpc: '2.0' }), 'jsonrpc'],
    ['a GET of a task with a JSON-RPC body (the router serves it as HTTP+JSON)', req('GET', '/tasks/t-1', { jsonrpc: '2.0' }), 'rest'],
    ['a GET of a v0.3 task, no A2A-Version', req('GET', '/v1/tasks/t-1'), 'rest-v0.3'],
    ['a GET of a v0.3 task path stating 1.0 (`v1` a tenant)', req('GET', '/v1/tasks/t-1', undefined, { 'a2a-version': '1.0' }), 'rest'],
    ['a POST to the mount', req('POST', '/'), 'jsonrpc'],
    ['a POST to message:send', req('POST', '/message:send'), 'rest'],
    ['a POST to a tenant-prefixed message:stream', req('POST', '/acme/message:stream'), 'rest'],
    ['a POST to tasks/{id}:cancel', req('POST', '/tasks/t-1:cancel'), 'rest'],
    ['a GET of a task', req('GET', '/tasks/t-1'), 'rest'],
    ['a GET of anything', req('GET', '/'), 'rest'],
  ])('%s → %s', (_case, request, binding) => {
    expect(errorBindingFor(request)).toBe(binding);
  });
});
