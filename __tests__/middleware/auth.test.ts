/** a2aAuth and its sources, over real HTTP, on Express 4 and 5. */
import { exportJWK, generateKeyPair } from 'jose';
import { Passport } from 'passport';
import { ExtractJwt, Strategy as JwtStrategy } from 'passport-jwt';
import { expressjwt } from 'express-jwt';
import type { NextFunction, Request, Response } from 'express';
import { A2AOptionsError } from '../../lib/options';
import { a2aAuth, bearerJwt, fromRequestUser, fromVerify, createAnonymousCaller } from '../../lib/middleware';
import type { AgentExecutor } from '../../lib';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { rpc as rpcCall, userMessage } from '../helpers/http';
import { EXPRESS_VERSIONS, HS_SECRET, body, echoState, recordingErrorHandler, rpc, signToken, start, type Running } from './helpers';

describe.each(EXPRESS_VERSIONS)('a2aAuth on %s', (_name, express) => {
  let running: Running | undefined;
  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  async function serve(...handlers: Array<(req: Request, res: Response, next: NextFunction) => void>) {
    const app = express();
    app.use(express.json());
    app.use('/agent', ...handlers, echoState);
    running = await start(app);
    return running.url;
  }

  const post = (url: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/agent`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  describe('bearerJwt', () => {
    it('accepts a valid HS256 token and contributes the caller', async () => {
      const url = await serve(a2aAuth({ user: bearerJwt({ key: HS_SECRET, algorithms: ['HS256'] }) }));
      const token = await signToken({ sub: 'alice', name: 'Alice' }, { expiresIn: '5m' });
      const res = await post(url, rpc(1), { authorization: `Bearer ${token}` });
      expect(res.status).toBe(200);
      const { state } = await body(res);
      expect(state.caller).toMatchObject({ id: 'alice', displayName: 'Alice', authenticated: true });
      expect(state.caller.claims.sub).toBe('alice');
    });

    it('answers 401 with a bare Bearer challenge and a JSON-RPC envelope when no token is sent', async () => {
      const url = await serve(a2aAuth({ user: bearerJwt({ key: HS_SECRET }) }));
      const res = await post(url, rpc('req-7'));
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="a2a"');
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await body(res)).toEqual({
        jsonrpc: '2.0',
        id: 'req-7',
        error: {
          code: -32600,
          message: 'Authentication required',
          data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'A2A_AUTH_REQUIRED', domain: 'a2a-express-kit' }],
        },
      });
    });

    it('uses id null when the body is not parsed yet', async () => {
      const app = express();
      app.use('/agent', a2aAuth({ user: bearerJwt({ key: HS_SECRET }) }), echoState);
      running = await start(app);
      const res = await post(running.url, rpc(3));
      expect(res.status).toBe(401);
      expect((await body(res)).id).toBeNull();
    });

    it('challenges with the configured realm, for missing and for invalid credentials', async () => {
      const url = await serve(a2aAuth({ user: bearerJwt({ key: HS_SECRET }), realm: 'corp' }));
      const missing = await post(url, rpc(1));
      expect(missing.status).toBe(401);
      expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="corp"');
      const invalid = await post(url, rpc(2), { authorization: 'Bearer not.a.jwt' });
      expect(invalid.status).toBe(401);
      expect(invalid.headers.get('www-authenticate')).toBe(
        'Bearer realm="corp", error="invalid_token", error_description="The access token is invalid"',
      );
    });

    it.each([
      [
        'a bad signature',
        async () =>
          signToken(
            { sub: 'a' },
            { key: new TextEncoder().encode('another-secret-that-is-at-least-32-bytes!!'), issuer: 'https://idp.example', audience: 'agent' },
          ),
        'The access token is invalid',
      ],
      [
        'an expired token',
        async () => signToken({ sub: 'a' }, { expiresIn: Math.floor(Date.now() / 1000) - 60, issuer: 'https://idp.example', audience: 'agent' }),
        'The access token expired',
      ],
      ['the wrong issuer', async () => signToken({ sub: 'a' }, { issuer: 'https://evil.example' }), 'The access token is invalid'],
      [
        'the wrong audience',
        async () => signToken({ sub: 'a' }, { issuer: 'https://idp.example', audience: 'other' }),
        'The access token is invalid',
      ],
      ['no subject', async () => signToken({ name: 'x' }, { issuer: 'https://idp.example', audience: 'agent' }), 'The access token has no subject'],
      ['garbage', async () => 'not.a.jwt', 'The access token is invalid'],
    ])('rejects %s with 401 invalid_token', async (_case, makeToken, description) => {
      const url = await serve(a2aAuth({ user: bearerJwt({ key: HS_SECRET, issuer: 'https://idp.example', audience: 'agent' }) }));
      const res = await post(url, rpc(1), { authorization: `Bearer ${await makeToken()}` });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer realm="a2a", error="invalid_token", error_description="${description}"`);
      const json = await body(res);
      expect(json.error).toMatchObject({ code: -32600, message: description });
      expect(json.error.data[0].reason).toBe('A2A_AUTH_INVALID');
    });

    it('treats another Authorization scheme as no credentials, and a malformed Bearer as invalid', async () => {
      const url = await serve(a2aAuth({ user: bearerJwt({ key: HS_SECRET }) }));
      const basic = await post(url, rpc(1), { authorization: 'Basic dXNlcjpwYXNz' });
      expect(basic.status).toBe(401);
      expect((await body(basic)).error.data[0].reason).toBe('A2A_AUTH_REQUIRED');
      const malformed = await post(url, rpc(1), { authorization: 'Bearer a b' });
      expect((await body(malformed)).error.data[0].reason).toBe('A2A_AUTH_INVALID');
    });

    it('verifies RS256 tokens against a public key, an inline JWKS and a remote JWKS', async () => {
      const { publicKey, privateKey } = await generateKeyPair('RS256');
      const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
      const jwksApp = express();
      jwksApp.get('/jwks.json', (_req, res) => {
        res.json({ keys: [jwk] });
      });
      const jwksServer = await start(jwksApp);
      try {
        const token = await signToken({ sub: 'bob' }, { key: privateKey, alg: 'RS256', kid: 'k1' });
        const app = express();
        app.use('/key', a2aAuth({ user: bearerJwt({ key: publicKey, algorithms: ['RS256'] }) }), echoState);
        app.use('/jwk', a2aAuth({ user: bearerJwt({ key: jwk, algorithms: ['RS256'] }) }), echoState);
        app.use('/jwks', a2aAuth({ user: bearerJwt({ jwks: { keys: [jwk] } }) }), echoState);
        app.use('/remote', a2aAuth({ user: bearerJwt({ jwksUrl: `${jwksServer.url}/jwks.json`, algorithms: ['RS256'] }) }), echoState);
        running = await start(app);
        for (const path of ['key', 'jwk', 'jwks', 'remote']) {
          const res = await fetch(`${running.url}/${path}`, { headers: { authorization: `Bearer ${token}` } });
          expect([path, res.status]).toEqual([path, 200]);
          expect((await body(res)).state.caller.id).toBe('bob');
        }
        // An HS256 token signed with the public key bytes must not pass an RS256 verifier.
        const confused = await signToken({ sub: 'mallory' }, { key: new TextEncoder().encode(JSON.stringify(jwk)) });
        const res = await fetch(`${running.url}/jwks`, { headers: { authorization: `Bearer ${confused}` } });
        expect(res.status).toBe(401);
      } finally {
        await jwksServer.close();
      }
    });

    it('answers 503 when the remote JWKS cannot be fetched', async () => {
      const url = await serve(a2aAuth({ user: bearerJwt({ jwksUrl: 'http://127.0.0.1:1/jwks.json', jwksTimeoutMs: 1000 }) }));
      const { privateKey } = await generateKeyPair('RS256');
      const token = await signToken({ sub: 'x' }, { key: privateKey, alg: 'RS256' });
      const res = await post(url, rpc(1), { authorization: `Bearer ${token}` });
      expect(res.status).toBe(503);
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect((await body(res)).error).toMatchObject({ code: -32603, data: [{ reason: 'A2A_AUTH_UNAVAILABLE' }] });
    });

    it('rejects a subject in the reserved anonymous namespace', async () => {
      const url = await serve(a2aAuth({ user: bearerJwt({ key: HS_SECRET }), allowAnonymous: true }));
      const token = await signToken({ sub: createAnonymousCaller().id });
      const res = await post(url, rpc(1), { authorization: `Bearer ${token}` });
      expect(res.status).toBe(401);
      expect((await body(res)).error.data[0].reason).toBe('A2A_AUTH_INVALID');
    });
  });

  describe('anonymous access', () => {
    it('is refused by default', async () => {
      const url = await serve(a2aAuth({ user: fromRequestUser() }));
      expect((await post(url, rpc(1))).status).toBe(401);
    });

    it('gives every anonymous request its own caller id', async () => {
      const url = await serve(a2aAuth({ user: bearerJwt({ key: HS_SECRET }), allowAnonymous: true }));
      const a = (await body(post(url, rpc(1)))).state.caller;
      const b = (await body(post(url, rpc(2)))).state.caller;
      expect(a).toEqual({ id: expect.stringMatching(/^anonymous:[0-9a-f-]{36}$/), authenticated: false });
      expect(b.authenticated).toBe(false);
      expect(a.id).not.toBe(b.id);
    });

    it('still rejects credentials that fail verification', async () => {
      const url = await serve(a2aAuth({ user: bearerJwt({ key: HS_SECRET }), allowAnonymous: true }));
      const res = await post(url, rpc(1), { authorization: 'Bearer not.a.jwt' });
      expect(res.status).toBe(401);
    });

    it('keeps one private bucket per anonymous session key', async () => {
      const url = await serve(a2aAuth({ allowAnonymous: { sessionHeader: 'X-A2A-Anonymous-Session' } }));
      const keyA = 'a'.repeat(20) + 'session-key-A-0123456789';
      const keyB = 'b'.repeat(20) + 'session-key-B-0123456789';
      const idOf = async (key?: string) => (await body(post(url, rpc(1), key ? { 'x-a2a-anonymous-session': key } : {}))).state.caller.id as string;
      const a1 = await idOf(keyA);
      const a2 = await idOf(keyA);
      const b = await idOf(keyB);
      expect(a1).toBe(a2);
      expect(a1).toMatch(/^anonymous:session:[A-Za-z0-9_-]{43}$/);
      expect(a1).not.toContain(keyA);
      expect(b).not.toBe(a1);
      expect(await idOf()).not.toBe(a1);
      const short = await post(url, rpc(1), { 'x-a2a-anonymous-session': 'short' });
      expect(short.status).toBe(401);
    });
  });

  describe('fromRequestUser', () => {
    it('reads req.user set by passport-jwt', async () => {
      const passport = new Passport();
      passport.use(
        new JwtStrategy(
          { jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(), secretOrKey: Buffer.from(HS_SECRET), algorithms: ['HS256'] },
          (payload: { sub: string; name: string }, done: (err: unknown, user?: object) => void) =>
            done(null, { id: payload.sub, displayName: payload.name, role: 'admin' }),
        ),
      );
      const url = await serve(passport.authenticate('jwt', { session: false }), a2aAuth({ user: fromRequestUser() }));
      const token = await signToken({ sub: 'carol', name: 'Carol' });
      const res = await post(url, rpc(1), { authorization: `Bearer ${token}` });
      expect(res.status).toBe(200);
      expect((await body(res)).state.caller).toEqual({
        id: 'carol',
        displayName: 'Carol',
        authenticated: true,
        claims: { id: 'carol', displayName: 'Carol', role: 'admin' },
      });
      // passport answers for the app when the token is missing; a2aAuth never runs.
      const missing = await post(url, rpc(1));
      expect(missing.status).toBe(401);
    });

    it('reads req.auth set by express-jwt, with a map', async () => {
      const url = await serve(
        expressjwt({ secret: Buffer.from(HS_SECRET), algorithms: ['HS256'], credentialsRequired: false }),
        a2aAuth({
          user: fromRequestUser({ from: 'express-jwt', map: (auth) => ({ id: `user-${String(auth.uid)}`, claims: { tid: auth.tid } }) }),
        }),
      );
      const token = await signToken({ uid: 42, tid: 'acme' });
      const res = await post(url, rpc(1), { authorization: `Bearer ${token}` });
      expect((await body(res)).state.caller).toEqual({ id: 'user-42', authenticated: true, claims: { tid: 'acme' } });
      const anonymous = await post(url, rpc(1));
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('www-authenticate')).toBe('Bearer realm="a2a"');
    });

    it('reads req.oidc.user (express-openid-connect) and honours isAuthenticated()', async () => {
      const fakeOidc = (req: Request, _res: Response, next: NextFunction) => {
        const loggedIn = req.headers['x-logged-in'] === 'yes';
        (req as Request & { oidc: unknown }).oidc = {
          isAuthenticated: () => loggedIn,
          user: loggedIn ? { sub: 'auth0|dave', name: 'Dave', email: 'd@example.com' } : undefined,
        };
        next();
      };
      const url = await serve(fakeOidc, a2aAuth({ user: fromRequestUser(), allowAnonymous: true }));
      const user = (await body(post(url, rpc(1), { 'x-logged-in': 'yes' }))).state.caller;
      expect(user).toMatchObject({ id: 'auth0|dave', displayName: 'Dave', authenticated: true });
      const anon = (await body(post(url, rpc(1)))).state.caller;
      expect(anon.authenticated).toBe(false);
    });

    it('reports a user object without an id to the app error handler (500), not as 401', async () => {
      const seen: unknown[] = [];
      const app = express();
      app.use(
        '/agent',
        (req: Request, _res: Response, next: NextFunction) => {
          (req as Request & { user: unknown }).user = { email: 'x@example.com' };
          next();
        },
        a2aAuth({ user: fromRequestUser() }),
        echoState,
      );
      app.use(recordingErrorHandler(seen));
      running = await start(app);
      const res = await fetch(`${running.url}/agent`);
      expect(res.status).toBe(500);
      expect(seen[0]).toMatchObject({ code: 'A2A_AUTH_MISCONFIGURED' });
      expect((seen[0] as Error).message).toContain('req.user has no string "sub" or "id"');
    });
  });

  describe('fromVerify and options', () => {
    const apiKeys = fromVerify((req) => {
      const key = req.headers['x-api-key'];
      if (key === undefined) return undefined;
      return key === 'k-123' ? { id: 'service-1' } : false;
    });

    it('maps caller / undefined / false to 200 / 401 required / 401 invalid', async () => {
      const url = await serve(a2aAuth({ user: apiKeys, challenge: 'ApiKey realm="a2a"' }));
      expect((await body(post(url, rpc(1), { 'x-api-key': 'k-123' }))).state.caller.id).toBe('service-1');
      const none = await post(url, rpc(1));
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('ApiKey realm="a2a"');
      const wrong = await post(url, rpc(1), { 'x-api-key': 'nope' });
      expect((await body(wrong)).error.data[0].reason).toBe('A2A_AUTH_INVALID');
    });

    it('tries several sources in order', async () => {
      const url = await serve(a2aAuth({ user: [bearerJwt({ key: HS_SECRET }), apiKeys] }));
      const token = await signToken({ sub: 'erin' });
      expect((await body(post(url, rpc(1), { authorization: `Bearer ${token}` }))).state.caller.id).toBe('erin');
      expect((await body(post(url, rpc(1), { 'x-api-key': 'k-123' }))).state.caller.id).toBe('service-1');
    });

    it('answers the same whether verify is synchronous or asynchronous, and falls through on undefined', async () => {
      const asyncKeys = fromVerify(async (req) => {
        await new Promise((resolve) => setImmediate(resolve));
        const key = req.headers['x-async-key'];
        if (key === undefined) return undefined;
        return key === 'a-1' ? { id: 'async-service' } : false;
      });
      const throwing = fromVerify((req) => {
        if (req.headers['x-boom'] !== undefined) throw new Error('verify crashed');
        return undefined;
      });
      const url = await serve(a2aAuth({ user: [throwing, asyncKeys, apiKeys] }));
      expect((await body(post(url, rpc(1), { 'x-async-key': 'a-1' }))).state.caller.id).toBe('async-service');
      // the async source answers undefined: the next (synchronous) source decides
      expect((await body(post(url, rpc(1), { 'x-api-key': 'k-123' }))).state.caller.id).toBe('service-1');
      expect((await body(post(url, rpc(1), { 'x-async-key': 'nope' }))).error.data[0].reason).toBe('A2A_AUTH_INVALID');
      expect((await post(url, rpc(1))).status).toBe(401);
      // a synchronous throw is a server error, not a credential failure
      expect((await post(url, rpc(1), { 'x-boom': '1' })).status).toBe(500);
    });

    it('logs failures without credentials and builds the challenge per failure', async () => {
      const lines: Array<[object | string, string | undefined]> = [];
      const url = await serve(
        a2aAuth({
          user: bearerJwt({ key: HS_SECRET }),
          logger: { warn: (obj, msg) => lines.push([obj, msg]) },
          challenge: ({ code, realm }) =>
            code === 'A2A_AUTH_INVALID' ? `Bearer realm="${realm}", error="invalid_token"` : `Bearer realm="${realm}", scope="agent"`,
        }),
      );
      const none = await post(url, rpc(1));
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="a2a", scope="agent"');
      const bad = await post(url, rpc(1), { authorization: 'Bearer secret.token.value' });
      expect(bad.headers.get('www-authenticate')).toBe('Bearer realm="a2a", error="invalid_token"');
      expect(lines.map(([obj, msg]) => [(obj as { reason?: string }).reason, msg])).toEqual([
        ['A2A_AUTH_REQUIRED', 'A2A authentication failed'],
        ['A2A_AUTH_INVALID', 'A2A authentication failed'],
      ]);
      expect(JSON.stringify(lines)).not.toContain('secret.token.value');
    });

    it('reports a challenge function that returns an unusable header to the app', async () => {
      const seen: unknown[] = [];
      const app = express();
      app.use('/agent', a2aAuth({ user: apiKeys, challenge: () => 'Bearer\r\nX-Injected: 1' }), echoState);
      app.use(recordingErrorHandler(seen));
      running = await start(app);
      const res = await fetch(`${running.url}/agent`);
      expect(res.status).toBe(500);
      expect(res.headers.get('x-injected')).toBeNull();
      expect(seen[0]).toMatchObject({ code: 'A2A_MIDDLEWARE_MISUSE' });
    });

    it("passes errors to next() with errors: 'next'", async () => {
      const seen: unknown[] = [];
      const app = express();
      app.use('/agent', a2aAuth({ user: apiKeys, errors: 'next' }), echoState);
      app.use(recordingErrorHandler(seen));
      running = await start(app);
      await fetch(`${running.url}/agent`);
      expect(seen[0]).toMatchObject({ reason: 'A2A_AUTH_REQUIRED', httpStatus: 401, headers: { 'WWW-Authenticate': 'Bearer realm="a2a"' } });
    });
  });
});

describe('the 401 challenge through the router', () => {
  const executor: AgentExecutor = {
    async execute(_ctx, events) {
      await events.reply('ok');
    },
  };
  const withExtendedCard = {
    agentCard: { ...testCard, capabilities: { ...testCard.capabilities, extendedAgentCard: true } },
    extendedAgentCard: { ...testCard, name: 'Test Agent (extended)' },
  };
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it.each([
    ['options', { user: bearerJwt({ key: HS_SECRET }), realm: 'corp' }],
    ["a built a2aAuth in 'next' mode", a2aAuth({ user: bearerJwt({ key: HS_SECRET }), realm: 'corp', errors: 'next' })],
  ])('names the realm of the auth preset given as %s', async (_case, auth) => {
    server = await startAgent(executor, { auth });
    const reply = await rpcCall(server.url, 'SendMessage', userMessage('hi'));
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer realm="corp"');
    expect(reply.body.error).toMatchObject({ code: -32600, data: [{ reason: 'A2A_AUTH_REQUIRED' }] });
  });

  it("names a2aAuth's realm when the engine refuses an anonymous caller (GetExtendedAgentCard)", async () => {
    server = await startAgent(executor, { ...withExtendedCard, auth: { allowAnonymous: true, realm: 'corp' } });
    const reply = await rpcCall(server.url, 'GetExtendedAgentCard', {});
    expect(reply.status).toBe(401);
    expect(reply.headers.get('www-authenticate')).toBe('Bearer realm="corp"');
    expect(reply.body.error.code).toBe(-32600);
    expect(reply.text).not.toContain('(extended)');
  });

  it('uses a custom challenge there too, and the default realm without a2aAuth', async () => {
    server = await startAgent(executor, { ...withExtendedCard, auth: { allowAnonymous: true, challenge: 'ApiKey realm="keys"' } });
    expect((await rpcCall(server.url, 'GetExtendedAgentCard', {})).headers.get('www-authenticate')).toBe('ApiKey realm="keys"');
    await server.close();
    server = await startAgent(executor, withExtendedCard);
    expect((await rpcCall(server.url, 'GetExtendedAgentCard', {})).headers.get('www-authenticate')).toBe('Bearer realm="a2a"');
  });
});

describe('a2aAuth options', () => {
  it('names the bad option, with a typo hint', () => {
    expect(() => a2aAuth({ user: fromRequestUser(), allowAnonymus: true } as never)).toThrow(
      'a2aAuth: option "allowAnonymus" is unknown (did you mean "allowAnonymous"?)',
    );
    expect(() => a2aAuth({ user: fromRequestUser(), realm: 'a"b' })).toThrow(
      'a2aAuth: option "realm": must be printable ASCII without quotes or backslashes',
    );
    expect(() => a2aAuth({ allowAnonymous: { sessionHeadr: 'x' } } as never)).toThrow(
      'a2aAuth: option "allowAnonymous.sessionHeadr" is unknown (did you mean "allowAnonymous.sessionHeader"?)',
    );
    expect(() => a2aAuth({} as never)).toThrow('a2aAuth: option "user" is required unless allowAnonymous is true');
    expect(() => a2aAuth(undefined as never)).toThrow('a2aAuth: expected an options object, got undefined');
    expect(() => a2aAuth({ user: fromRequestUser } as never)).toThrow(
      /option "user": .*"fromRequestUser" looks like a helper passed without being called/,
    );
    expect(() => a2aAuth({ user: fromRequestUser(), errors: 'throw' } as never)).toThrow(/a2aAuth: option "errors"/);
    expect(() => a2aAuth({ user: fromRequestUser(), realm: 7 } as never)).toThrow(A2AOptionsError);
  });

  it('validates bearerJwt keys and key sources at construction', () => {
    expect(() => bearerJwt({ key: 'short-secret' })).toThrow(
      'bearerJwt: option "key": a string must be a PEM public key or certificate; for an HMAC secret pass new TextEncoder().encode(secret)',
    );
    expect(() => bearerJwt({ key: new TextEncoder().encode('too-short') })).toThrow('an HMAC secret must be at least 32 bytes (got 9)');
    expect(() => bearerJwt({})).toThrow('set exactly one of "key", "jwks" or "jwksUrl"');
    expect(() => bearerJwt({ key: HS_SECRET, jwksUrl: 'https://idp.example/jwks' })).toThrow('(got key, jwksUrl)');
    expect(() => bearerJwt({ jwksUrl: 'http://idp.example/jwks' })).toThrow('bearerJwt: option "jwksUrl": must use https');
    expect(() => bearerJwt({ key: HS_SECRET, algorithms: ['none'] } as never)).toThrow(/bearerJwt: option "algorithms.0"/);
    expect(() => bearerJwt({ key: HS_SECRET, audiance: 'x' } as never)).toThrow('(did you mean "audience"?)');
    expect(() => bearerJwt({ key: { kty: 'RSA', n: 'x', e: 'AQAB', d: 'secret' } })).toThrow('not a private one');
    expect(() => fromRequestUser({ from: 'passprt' } as never)).toThrow(/fromRequestUser: option "from"/);
    expect(() => fromVerify('nope' as never)).toThrow('fromVerify: option "verify": must be a function');
  });
});
