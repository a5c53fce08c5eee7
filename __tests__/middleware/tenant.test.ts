/** a2aTenant and its sources, over real HTTP. */
import type { NextFunction, Request, Response } from 'express';
import { a2aAuth, a2aTenant, claim, fromVerify, header, pathParam, subdomain } from '../../lib/middleware';
import { EXPRESS_VERSIONS, body, echoState, rawRequest, recordingErrorHandler, rpc, start, type Running } from './helpers';

describe.each(EXPRESS_VERSIONS)('a2aTenant on %s', (_name, express) => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function serve(mount: string, ...handlers: Array<(req: Request, res: Response, next: NextFunction) => void>) {
    const app = express();
    app.use(express.json());
    app.use(mount, ...handlers, echoState);
    running = await start(app);
    return running;
  }

  const tenantOf = async (res: globalThis.Response) => (await body(res)).state?.tenant;

  it('reads a header', async () => {
    const { url } = await serve('/agent', a2aTenant({ from: header('X-Tenant-Id') }));
    expect(await tenantOf(await fetch(`${url}/agent`, { headers: { 'x-tenant-id': 'acme-1' } }))).toBe('acme-1');
  });

  it('answers 400 A2A_TENANT_REQUIRED when missing, as JSON-RPC -32602 for a JSON-RPC post', async () => {
    const { url } = await serve('/agent', a2aTenant({ from: header('x-tenant-id') }));
    const res = await fetch(`${url}/agent`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: rpc(9) });
    expect(res.status).toBe(400);
    expect(await body(res)).toEqual({
      jsonrpc: '2.0',
      id: 9,
      error: {
        code: -32602,
        message: 'A tenant is required (from header(x-tenant-id))',
        data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'A2A_TENANT_REQUIRED', domain: 'a2a-express-kit' }],
      },
    });
  });

  it('lets a request without tenant through when not required', async () => {
    const { url } = await serve('/agent', a2aTenant({ from: header('x-tenant-id'), required: false }));
    const res = await fetch(`${url}/agent`);
    expect(res.status).toBe(200);
    expect(await tenantOf(res)).toBeUndefined();
  });

  it.each([
    ['a slash', 'acme/other'],
    ['a space', 'acme corp'],
    ['a leading dot', '.acme'],
    ['dot-dot', '..'],
    ['non-ASCII', 'acmé'],
    ['too many characters', 'a'.repeat(129)],
  ])('rejects a tenant with %s (400 A2A_INVALID_TENANT, JSON-RPC -32602)', async (_case, tenant) => {
    const { port } = await serve('/agent', a2aTenant({ from: header('x-tenant-id') }));
    const res = await rawRequest(port, {
      method: 'POST',
      path: '/agent',
      headers: { 'content-type': 'application/json', 'x-tenant-id': Buffer.from(tenant).toString('latin1') },
      body: rpc('t-1'),
    });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const { id, error } = res.json();
    expect(id).toBe('t-1');
    expect(error).toMatchObject({ code: -32602, data: [{ reason: 'A2A_INVALID_TENANT', domain: 'a2a-express-kit' }] });
    expect(error.message).toContain('header(x-tenant-id)');
  });

  it('rejects a repeated tenant header instead of picking one', async () => {
    const { port } = await serve('/agent', a2aTenant({ from: header('x-tenant-id') }));
    const res = await rawRequest(port, { path: '/agent', headers: { 'x-tenant-id': ['acme', 'globex'] } });
    expect(res.status).toBe(400);
  });

  it('honours maxLength and a custom pattern', async () => {
    const { url } = await serve('/agent', a2aTenant({ from: header('x-tenant-id'), maxLength: 4, pattern: /^[a-z]+$/g }));
    const get = (tenant: string) => fetch(`${url}/agent`, { headers: { 'x-tenant-id': tenant } });
    expect((await get('abcd')).status).toBe(200);
    expect((await get('abcd')).status).toBe(200); // a /g pattern must not be stateful
    expect((await get('abcde')).status).toBe(400);
    expect((await get('ABC')).status).toBe(400);
  });

  it('reads a path parameter of the mount path', async () => {
    const { url } = await serve('/t/:tenant/agent', a2aTenant({ from: pathParam('tenant') }));
    expect(await tenantOf(await fetch(`${url}/t/globex/agent`))).toBe('globex');
    expect((await fetch(`${url}/t/bad%20name/agent`)).status).toBe(400);
  });

  it('reads a claim contributed by a2aAuth (plain and nested)', async () => {
    const user = fromVerify((req) => {
      const who = req.headers['x-user'];
      return who === undefined ? undefined : { id: String(who), claims: { tid: `${String(who)}-tenant`, org: { id: 'org-7' } } };
    });
    const app = express();
    app.use('/flat', a2aAuth({ user, allowAnonymous: true }), a2aTenant({ from: claim('tid') }), echoState);
    app.use('/nested', a2aAuth({ user }), a2aTenant({ from: claim(['org', 'id']) }), echoState);
    running = await start(app);
    expect(await tenantOf(await fetch(`${running.url}/flat`, { headers: { 'x-user': 'u1' } }))).toBe('u1-tenant');
    expect(await tenantOf(await fetch(`${running.url}/nested`, { headers: { 'x-user': 'u1' } }))).toBe('org-7');
    // An anonymous caller has no claims: the tenant is missing.
    expect((await fetch(`${running.url}/flat`)).status).toBe(400);
  });

  it('reports claim() without a2aAuth before it as a wiring error to the app', async () => {
    const seen: unknown[] = [];
    const app = express();
    app.use('/agent', a2aTenant({ from: claim('tid') }), echoState);
    app.use(recordingErrorHandler(seen));
    running = await start(app);
    expect((await fetch(`${running.url}/agent`)).status).toBe(500);
    expect(seen[0]).toMatchObject({
      code: 'A2A_MIDDLEWARE_ORDER',
      message: "claim(tid) reads the caller's claims: install a2aAuth() before a2aTenant()",
    });
  });

  it('reads the subdomain, with and without a base domain', async () => {
    const app = express();
    app.use('/base', a2aTenant({ from: subdomain({ baseDomain: 'Agents.Example.com' }) }), echoState);
    app.use('/any', a2aTenant({ from: subdomain(), required: false }), echoState);
    running = await start(app);
    const get = async (path: string, host: string) => {
      const res = await rawRequest(running!.port, { path, headers: { host } });
      return { status: res.status, tenant: res.status === 200 ? res.json().state?.tenant : undefined };
    };
    expect(await get('/base', 'ACME.agents.example.com:8080')).toEqual({ status: 200, tenant: 'acme' });
    expect(await get('/base', 'agents.example.com')).toEqual({ status: 400, tenant: undefined });
    expect(await get('/base', 'x.acme.agents.example.com')).toEqual({ status: 400, tenant: undefined });
    expect(await get('/base', 'acme.other.example')).toEqual({ status: 400, tenant: undefined });
    expect(await get('/any', 'globex.example.com')).toEqual({ status: 200, tenant: 'globex' });
    expect(await get('/any', 'example.com')).toEqual({ status: 200, tenant: undefined });
    expect(await get('/any', '127.0.0.1')).toEqual({ status: 200, tenant: undefined });
  });

  it('calls a function source (sync or async) and uses the first source that answers', async () => {
    const { url } = await serve(
      '/agent',
      a2aTenant({ from: [header('x-tenant-id'), async (req) => (req.query.t === undefined ? undefined : String(req.query.t))] }),
    );
    expect(await tenantOf(await fetch(`${url}/agent?t=from-query`))).toBe('from-query');
    expect(await tenantOf(await fetch(`${url}/agent?t=from-query`, { headers: { 'x-tenant-id': 'from-header' } }))).toBe('from-header');
  });

  it('resolves the same through synchronous and asynchronous sources, in order, and reports their failures', async () => {
    const later = <T>(value: T) => new Promise<T>((resolve) => setImmediate(() => resolve(value)));
    const { url } = await serve(
      '/agent',
      a2aTenant({
        from: [
          async (req) => later(req.query.a === undefined ? undefined : String(req.query.a)),
          (req) => (req.query.s === undefined ? undefined : String(req.query.s)),
          async (req) => {
            if (req.query.reject !== undefined) throw new Error('lookup failed');
            return undefined;
          },
        ],
      }),
    );
    expect(await tenantOf(await fetch(`${url}/agent?a=async-first&s=sync-second`))).toBe('async-first');
    expect(await tenantOf(await fetch(`${url}/agent?s=sync-second`))).toBe('sync-second');
    expect((await fetch(`${url}/agent?a=${encodeURIComponent('not valid!')}`)).status).toBe(400);
    expect((await fetch(`${url}/agent?s=${encodeURIComponent('not valid!')}`)).status).toBe(400);
    expect((await fetch(`${url}/agent?reject=1`)).status).toBe(500);
  });

  it('reports a function returning a non-string as a wiring error', async () => {
    const seen: unknown[] = [];
    const app = express();
    app.use('/agent', a2aTenant({ from: (() => 42) as never }), echoState);
    app.use(recordingErrorHandler(seen));
    running = await start(app);
    await fetch(`${running.url}/agent`);
    expect(seen[0]).toMatchObject({ code: 'A2A_MIDDLEWARE_MISUSE' });
  });
});

describe('a2aTenant options', () => {
  it('names the bad option and catches helpers passed uncalled', () => {
    expect(() => a2aTenant({ from: header } as never)).toThrow(
      `a2aTenant: option "from": header was passed without being called: write header('x-tenant-id')`,
    );
    expect(() => a2aTenant({ from: [subdomain] } as never)).toThrow('write subdomain()');
    expect(() => a2aTenant({ form: header('x') } as never)).toThrow('a2aTenant: option "form" is unknown (did you mean "from"?)');
    expect(() => a2aTenant({ from: 'x-tenant-id' } as never)).toThrow(/a2aTenant: option "from": must be a tenant source/);
    expect(() => a2aTenant({ from: header('x'), maxLength: 0 })).toThrow(/a2aTenant: option "maxLength"/);
    expect(() => header('bad header')).toThrow('header: argument "name": must be an HTTP header name');
    expect(() => pathParam('')).toThrow('pathParam: argument "name"');
    expect(() => subdomain({ baseDomain: 'not a domain' })).toThrow(/subdomain: option "baseDomain": must be a domain name/);
  });
});
