/**
 * HTTP+JSON errors (§11.6, §5.4): google.rpc.Status bodies with ErrorInfo / BadRequest and the
 * spec's HTTP status; media types (§11.1); version and extension negotiation (§3.6, §4.6) as on
 * JSON-RPC; the preset's rejections in the binding's format.
 */
import type { AgentExecutor } from '../../lib';
import { HS_SECRET, signToken } from '../middleware/helpers';
import { bearerJwt } from '../../lib/middleware';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { errorInfo, fieldViolations, rest, restStream, sendBody } from './helpers';

const executor: AgentExecutor = {
  async execute(ctx, events) {
    await events.reply(`${ctx.caller.id} [${ctx.extensions.join(',')}]`);
  },
};

describe('HTTP+JSON errors', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, { bodyLimit: '4kb' });
  });
  afterAll(() => server.close());

  it('invalid params: 400 INVALID_ARGUMENT with a BadRequest naming every field', async () => {
    const reply = await rest(server.url, 'POST', '/message:send', { body: { message: { role: 'ROLE_USER', parts: [] } } });
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toBe('application/a2a+json');
    expect(reply.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(reply.body.error.message).toMatch(/^Invalid params: /);
    expect(
      fieldViolations(reply.body)
        .map((v) => v.field)
        .sort(),
    ).toEqual(['message.messageId', 'message.parts']);
    expect(errorInfo(reply.body)).toBeUndefined();
  });

  it('a body that is not a JSON object: 400 naming the body', async () => {
    for (const raw of ['[]', '42', '"text"']) {
      const reply = await rest(server.url, 'POST', '/message:send', { raw });
      expect(reply.status).toBe(400);
      expect(fieldViolations(reply.body)).toEqual([{ field: 'body', description: 'must be a JSON object' }]);
    }
  });

  it('an empty body where one is required: 400 naming the field', async () => {
    const reply = await rest(server.url, 'POST', '/message:send');
    expect(reply.status).toBe(400);
    expect(fieldViolations(reply.body)).toEqual([{ field: 'message', description: 'message is required' }]);
  });

  it('malformed JSON: 400 INVALID_ARGUMENT', async () => {
    const reply = await rest(server.url, 'POST', '/message:send', { raw: '{"message": ' });
    expect(reply.status).toBe(400);
    expect(reply.body.error).toEqual({ code: 400, status: 'INVALID_ARGUMENT', message: 'Parse error: the body is not valid JSON', details: [] });
  });

  it('a body over the limit: 413 as a google.rpc.Status', async () => {
    const reply = await rest(server.url, 'POST', '/message:send', { body: sendBody('x'.repeat(5000)) });
    expect(reply.status).toBe(413);
    expect(reply.body.error).toMatchObject({ code: 413 });
  });

  it('a malformed %-escape in a path segment: 400 naming it, not a crash', async () => {
    const id = await rest(server.url, 'GET', '/tasks/%E0%A4%A');
    expect(id.status).toBe(400);
    expect(fieldViolations(id.body)).toEqual([{ field: 'id', description: 'is not a valid percent-encoded path segment' }]);
    const tenant = await rest(server.url, 'POST', '/%ZZ/tasks/t-1:cancel');
    expect(tenant.status).toBe(400);
    expect(fieldViolations(tenant.body)).toEqual([{ field: 'tenant', description: 'is not a valid percent-encoded path segment' }]);
    // The server is still there.
    expect((await rest(server.url, 'GET', '/tasks')).status).toBe(200);
  });

  describe('media types', () => {
    it.each(['application/a2a+json', 'application/json', 'application/json; charset=utf-8', 'Application/A2A+JSON'])('accepts %s', async (type) => {
      const reply = await rest(server.url, 'POST', '/message:send', { body: sendBody('hi'), headers: { 'Content-Type': type } });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('application/a2a+json');
    });

    it.each(['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'application/merge-patch+json'])(
      'refuses a %s body: 415 with ErrorInfo CONTENT_TYPE_NOT_SUPPORTED',
      async (type) => {
        const reply = await rest(server.url, 'POST', '/message:send', { raw: JSON.stringify(sendBody('hi')), headers: { 'Content-Type': type } });
        expect(reply.status).toBe(415);
        expect(reply.headers.get('content-type')).toBe('application/a2a+json');
        expect(reply.body.error).toMatchObject({ code: 415, status: 'INVALID_ARGUMENT' });
        expect(errorInfo(reply.body)).toMatchObject({
          reason: 'CONTENT_TYPE_NOT_SUPPORTED',
          domain: 'a2a-protocol.org',
          metadata: { contentType: type },
        });
      },
    );

    it('refuses a body without a Content-Type on every body route, the stream too', async () => {
      const blob = new Blob([JSON.stringify(sendBody('hi'))]); // fetch sends no Content-Type for a typeless Blob
      for (const path of ['/message:send', '/message:stream', '/tasks/t-1:cancel', '/tasks/t-1:subscribe']) {
        const response = await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'A2A-Version': '1.0' }, body: blob });
        expect([path, response.status]).toEqual([path, 415]);
        expect(errorInfo(await response.json()).reason).toBe('CONTENT_TYPE_NOT_SUPPORTED');
      }
    });

    it('a GET ignores Content-Type (it reads no body)', async () => {
      const reply = await rest(server.url, 'GET', '/tasks', { headers: { 'Content-Type': 'text/plain' } });
      expect(reply.status).toBe(200);
    });
  });

  describe('version negotiation', () => {
    it('no A2A-Version: 400 VERSION_NOT_SUPPORTED (v0.3 is not served yet)', async () => {
      const reply = await rest(server.url, 'GET', '/tasks', { headers: { 'A2A-Version': '' } });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ code: 400, status: 'FAILED_PRECONDITION' });
      expect(errorInfo(reply.body)).toMatchObject({ reason: 'VERSION_NOT_SUPPORTED', metadata: { requestedVersion: '', supportedVersions: '1.0' } });
    });

    it('another minor: 400 VERSION_NOT_SUPPORTED, on a stream too (before it opens)', async () => {
      const reply = await restStream(server.url, 'POST', '/message:stream', { body: sendBody('hi'), headers: { 'A2A-Version': '1.1' } });
      expect(reply.status).toBe(400);
      expect(errorInfo(reply.json).reason).toBe('VERSION_NOT_SUPPORTED');
    });

    it('the A2A-Version query parameter, and a patch version', async () => {
      expect((await rest(server.url, 'GET', '/tasks?A2A-Version=1.0', { headers: { 'A2A-Version': '' } })).status).toBe(200);
      const send = await rest(server.url, 'POST', '/message:send?A2A-Version=1.0', { body: sendBody('hi'), headers: { 'A2A-Version': '' } });
      expect(send.status).toBe(200);
      expect((await rest(server.url, 'GET', '/tasks', { headers: { 'A2A-Version': '1.0.3' } })).status).toBe(200);
    });

    it('a repeated or nested A2A-Version parameter: 400 VERSION_NOT_SUPPORTED (not a 500)', async () => {
      for (const query of ['A2A-Version=1.0&A2A-Version=1.0', 'A2A-Version[a]=1.0']) {
        const reply = await rest(server.url, 'GET', `/tasks?${query}`, { headers: { 'A2A-Version': '' } });
        expect([query, reply.status]).toEqual([query, 400]);
        expect(errorInfo(reply.body).reason).toBe('VERSION_NOT_SUPPORTED');
      }
    });
  });

  describe('extensions', () => {
    let extended: TestServer;
    beforeAll(async () => {
      extended = await startAgent(executor, {
        agentCard: {
          ...testCard,
          capabilities: { ...testCard.capabilities, extensions: [{ uri: 'urn:x:a' }, { uri: 'urn:x:req', required: true }] },
        },
      });
    });
    afterAll(() => extended.close());

    it('a required extension not requested: 400 EXTENSION_SUPPORT_REQUIRED', async () => {
      const reply = await rest(extended.url, 'POST', '/message:send', { body: sendBody('hi'), headers: { 'A2A-Extensions': 'urn:x:a' } });
      expect(reply.status).toBe(400);
      expect(errorInfo(reply.body).reason).toBe('EXTENSION_SUPPORT_REQUIRED');
    });

    it('activates the declared ones and echoes them in A2A-Extensions', async () => {
      const reply = await rest(extended.url, 'POST', '/message:send', {
        body: sendBody('hi'),
        headers: { 'A2A-Extensions': 'urn:x:req, urn:x:unknown,urn:x:a' },
      });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('a2a-extensions')).toBe('urn:x:req, urn:x:a');
      expect(reply.body.message.parts[0].text).toBe('anonymous [urn:x:req,urn:x:a]');
    });
  });

  describe('the preset (auth) in front of the binding', () => {
    let guarded: TestServer;
    beforeAll(async () => {
      guarded = await startAgent(executor, { auth: { user: bearerJwt({ key: HS_SECRET }) } });
    });
    afterAll(() => guarded.close());

    it('a missing token: 401 as a google.rpc.Status with a challenge', async () => {
      for (const [method, path] of [
        ['GET', '/tasks'],
        ['POST', '/message:send'],
        ['GET', '/acme/tasks/t-1'],
      ]) {
        const reply = await rest(guarded.url, method, path, { body: method === 'POST' ? sendBody('hi') : undefined });
        expect([path, reply.status]).toEqual([path, 401]);
        expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer /);
        expect(reply.body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
      }
    });

    it('a valid token reaches the agent', async () => {
      const token = await signToken({ sub: 'carol' });
      const reply = await rest(guarded.url, 'POST', '/message:send', { body: sendBody('hi'), headers: { authorization: `Bearer ${token}` } });
      expect(reply.status).toBe(200);
      expect(reply.body.message.parts[0].text).toBe('carol []');
    });
  });
});
