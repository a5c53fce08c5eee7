/**
 * v0.3 over HTTP+JSON (compatibility, on by default) over real HTTP: a request without A2A-Version
 * (or with 0.3) to a v0.3 REST route (`/v1/message:send`, `/v1/tasks/{id}`, ..., `/v1/card`) is
 * served in the ProtoJSON of the v0.3 proto, what the official v0.3 clients send and parse
 * (ProtoJSON shapes, `TASK_STATE_CANCELLED`, `{code, message, data}` errors); with A2A-Version 1.0
 * the same path is the v1.0 binding under tenant `v1`. `compatibility: { v0_3: false }` and
 * `bindings: { rest: false }` turn it off.
 */
import { randomUUID } from 'node:crypto';
import type { AgentCardInput, AgentExecutor } from '../../lib';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { followStream } from '../helpers/follow-stream';
import { rpc, sseFrames } from '../helpers/http';
import { gates, restAgent, type Gates } from './agent';
import { errorInfo, rest, sendBody } from './helpers';

let g: Gates;
const base = restAgent(() => g);
/** The REST suites' agent, plus 'echo': the user's parts come back as an artifact. */
const executor: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userMessage.parts[0] && 'text' in ctx.userMessage.parts[0] && ctx.userMessage.parts[0].text === 'echo') {
      await events.artifact({ artifactId: 'echo', parts: ctx.userMessage.parts.slice(1) });
      return events.complete('echoed');
    }
    return base.execute(ctx, events);
  },
};

const card: AgentCardInput = {
  ...testCard,
  capabilities: { ...testCard.capabilities, extendedAgentCard: true },
  securitySchemes: {
    bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
    oauth: {
      oauth2SecurityScheme: {
        flows: {
          authorizationCode: {
            authorizationUrl: 'https://id.example.com/auth',
            tokenUrl: 'https://id.example.com/token',
            scopes: { read: 'Read' },
            pkceRequired: true,
          },
        },
      },
    },
    device: {
      oauth2SecurityScheme: {
        flows: { deviceCode: { deviceAuthorizationUrl: 'https://id.example.com/device', tokenUrl: 'https://id.example.com/token', scopes: {} } },
      },
    },
  },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }],
  skills: [{ ...testCard.skills[0], securityRequirements: [{ schemes: { oauth: { list: ['read'] } } }] }],
};

interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: any;
}

/** A v0.3 REST call as the v0.3 clients make it: `Content-Type: application/json`, no A2A-Version. */
async function v03(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

/** The `data:` payloads and event names of a v0.3 REST stream. */
async function v03Stream(base: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const events: any[] = [];
  const types: string[] = [];
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream'))
    return { status: response.status, events, types, json: await response.json() };
  for await (const frame of sseFrames(response)) {
    if (frame.data === undefined) continue;
    events.push(JSON.parse(frame.data));
    types.push(frame.event);
  }
  return { status: response.status, events, types, json: undefined };
}

/** A v0.3 proto SendMessageRequest. */
const protoSend = (text: string, message: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => ({
  message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ text }], ...message },
  ...extra,
});

/** Every key of a JSON value, nested (to check that no `kind` or v1.0 spelling slipped in). */
const keysOf = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.flatMap(keysOf)
    : typeof value === 'object' && value !== null
      ? Object.entries(value).flatMap(([k, v]) => [k, ...keysOf(v)])
      : [];

describe('v0.3 over HTTP+JSON (compatibility on by default)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, {
      agentCard: card,
      extendedAgentCard: { ...card, name: 'Extended Test Agent' },
      callContext: (req) => ({ caller: { id: req.get('x-user') ?? 'anonymous', authenticated: req.get('x-user') !== undefined } }),
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    g = gates();
  });
  afterEach(() => g.gate.resolve());

  describe('POST /v1/message:send', () => {
    it('answers a Message as a v0.3 SendMessageResponse in ProtoJSON (content, ROLE_AGENT, no kind), as application/json', async () => {
      const reply = await v03(server.url, 'POST', '/v1/message:send', protoSend('hello'));
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('application/json');
      expect(reply.body).toEqual({
        message: { messageId: expect.any(String), contextId: expect.any(String), role: 'ROLE_AGENT', content: [{ text: 'hello, anonymous' }] },
      });
    });

    it('answers a Task: TASK_STATE_* states, status.message, artifacts with parts, history with content', async () => {
      const { body } = await v03(server.url, 'POST', '/v1/message:send', protoSend('report'));
      expect(body.task).toMatchObject({
        id: expect.any(String),
        contextId: expect.any(String),
        status: { state: 'TASK_STATE_COMPLETED', message: { role: 'ROLE_AGENT', content: [{ text: 'report ready' }] } },
        artifacts: [{ artifactId: 'r-1', name: 'report.txt', parts: [{ text: 'line 1\n' }, { text: 'line 2\n' }] }],
      });
      expect(body.task.history[0]).toMatchObject({ role: 'ROLE_USER', content: [{ text: 'report' }] });
      expect(keysOf(body)).not.toContain('kind');
    });

    it('file parts (fileWithBytes, fileWithUri, mimeType) and data parts ({data: {data}}) in and out', async () => {
      const parts = [
        { file: { fileWithBytes: 'aGVsbG8=', mimeType: 'text/plain' } },
        { file: { fileWithUri: 'https://files.example.com/notes.txt', mimeType: 'text/plain' } },
        { data: { data: { amount: 12, currency: 'EUR' } } },
      ];
      const { status, body } = await v03(server.url, 'POST', '/v1/message:send', {
        message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ text: 'echo' }, ...parts] },
      });
      expect(status).toBe(200);
      expect(body.task.artifacts).toEqual([{ artifactId: 'echo', parts }]);
      // The same task through v1.0: the parts as v1.0 has them.
      const v1 = await rest(server.url, 'GET', `/tasks/${body.task.id}`);
      expect(v1.body.artifacts[0].parts).toEqual([
        { raw: 'aGVsbG8=', mediaType: 'text/plain' },
        { url: 'https://files.example.com/notes.txt', mediaType: 'text/plain' },
        { data: { amount: 12, currency: 'EUR' } },
      ]);
    });

    it('accepts proto field names (message_id, context_id, accepted_output_modes) and `request` for message', async () => {
      const first = await v03(server.url, 'POST', '/v1/message:send', {
        request: { message_id: randomUUID(), role: 'ROLE_USER', content: [{ text: 'book' }] },
      });
      expect(first.body.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const second = await v03(server.url, 'POST', '/v1/message:send', {
        message: {
          message_id: randomUUID(),
          role: 'ROLE_USER',
          task_id: first.body.task.id,
          context_id: first.body.task.contextId,
          content: [{ text: 'Friday' }],
        },
        configuration: { accepted_output_modes: ['text/plain'], blocking: true },
      });
      expect(second.body.task).toMatchObject({
        id: first.body.task.id,
        status: { state: 'TASK_STATE_COMPLETED', message: { content: [{ text: 'booked for Friday' }] } },
      });
    });

    it('blocking: a body without configuration waits; a configuration without blocking (proto3 false) does not', async () => {
      const waiting = await v03(server.url, 'POST', '/v1/message:send', protoSend('report'));
      expect(waiting.body.task.status.state).toBe('TASK_STATE_COMPLETED');
      const immediate = await v03(
        server.url,
        'POST',
        '/v1/message:send',
        protoSend('long', {}, { configuration: { acceptedOutputModes: ['text/plain'] } }),
      );
      expect(immediate.body.task.status.state).toBe('TASK_STATE_WORKING');
      expect(await g.running.promise).toBe(immediate.body.task.id);
    });
  });

  describe('tasks', () => {
    it('GET /v1/tasks/{id}, with historyLength or history_length', async () => {
      const { body } = await v03(server.url, 'POST', '/v1/message:send', protoSend('report'));
      const full = await v03(server.url, 'GET', `/v1/tasks/${body.task.id}`);
      expect(full.status).toBe(200);
      expect(full.body).toMatchObject({ id: body.task.id, status: { state: 'TASK_STATE_COMPLETED' } });
      expect(full.body.history.length).toBeGreaterThanOrEqual(2);
      expect((await v03(server.url, 'GET', `/v1/tasks/${body.task.id}?historyLength=1`)).body.history).toHaveLength(1);
      expect((await v03(server.url, 'GET', `/v1/tasks/${body.task.id}?history_length=1`)).body.history).toHaveLength(1);
    });

    it('POST /v1/tasks/{id}:cancel: TASK_STATE_CANCELLED, the v0.3 proto spelling', async () => {
      const { body } = await v03(server.url, 'POST', '/v1/message:send', protoSend('long', {}, { configuration: { blocking: false } }));
      await g.running.promise;
      const canceled = await v03(server.url, 'POST', `/v1/tasks/${body.task.id}:cancel`);
      expect(canceled.status).toBe(200);
      expect(canceled.body).toMatchObject({ id: body.task.id, status: { state: 'TASK_STATE_CANCELLED' } });
    });

    it('a task is one task for every version and binding: created over v0.3 REST, continued over v0.3 JSON-RPC, read over v1.0', async () => {
      const { body } = await v03(server.url, 'POST', '/v1/message:send', protoSend('book'));
      const id = body.task.id;
      expect((await rest(server.url, 'GET', `/tasks/${id}`)).body.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const continued = await rpc(
        server.url,
        'message/send',
        { message: { kind: 'message', messageId: randomUUID(), role: 'user', taskId: id, parts: [{ kind: 'text', text: 'Monday' }] } },
        { headers: { 'A2A-Version': '' } },
      );
      expect(continued.body.result).toMatchObject({ kind: 'task', id, status: { state: 'completed' } });
      expect((await v03(server.url, 'GET', `/v1/tasks/${id}`)).body.status).toMatchObject({
        state: 'TASK_STATE_COMPLETED',
        message: { content: [{ text: 'booked for Monday' }] },
      });
    });
  });

  describe('streams', () => {
    it('POST /v1/message:stream: v0.3 StreamResponses ({task}, {artifactUpdate}, {statusUpdate} with final)', async () => {
      const reply = await v03Stream(server.url, 'POST', '/v1/message:stream', protoSend('report'));
      expect(reply.status).toBe(200);
      expect(reply.events.map((e) => Object.keys(e)[0])).toEqual(['task', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
      expect(reply.events[0].task.status.state).toMatch(/^TASK_STATE_(SUBMITTED|WORKING)$/);
      expect(reply.events[2].artifactUpdate).toMatchObject({
        artifact: { artifactId: 'r-1', parts: [{ text: 'line 2\n' }] },
        append: true,
        lastChunk: true,
      });
      expect(reply.events[3].statusUpdate).toMatchObject({ taskId: reply.events[0].task.id, status: { state: 'TASK_STATE_COMPLETED' }, final: true });
      expect(keysOf(reply.events)).not.toContain('kind');
    });

    it('a stream ends with the turn: input-required ends it (a final statusUpdate, or the task itself when it is the only event)', async () => {
      const reply = await v03Stream(server.url, 'POST', '/v1/message:stream', protoSend('book'));
      const last = reply.events.at(-1);
      const state = last.statusUpdate?.status.state ?? last.task?.status.state;
      expect(state).toBe('TASK_STATE_INPUT_REQUIRED');
      if (last.statusUpdate) expect(last.statusUpdate.final).toBe(true);
    });

    it.each(['GET', 'POST'])('%s /v1/tasks/{id}:subscribe: the task, then its follow-up to the terminal state', async (method) => {
      const { body } = await v03(server.url, 'POST', '/v1/message:send', protoSend('book'));
      const following = followStream(
        fetch(`${server.url}/v1/tasks/${body.task.id}:subscribe`, {
          method,
          headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        }),
      );
      await following.firstEvent;
      await v03(server.url, 'POST', '/v1/message:send', protoSend('Sunday', { taskId: body.task.id }));
      const reply = await following.ended;
      expect(reply.events[0].task).toMatchObject({ id: body.task.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
      expect(reply.events.at(-1).statusUpdate).toMatchObject({ status: { state: 'TASK_STATE_COMPLETED' }, final: true });
    });

    it('an error before the stream opens is a plain v0.3 error body', async () => {
      const reply = await v03Stream(server.url, 'POST', '/v1/tasks/no-such-task:subscribe');
      expect(reply.status).toBe(404);
      expect(reply.json).toMatchObject({ code: -32001 });
    });
  });

  describe('GET /v1/card', () => {
    it('the extended card in the v0.3 proto ProtoJSON: oneof security schemes, proto security requirements, v0.3 discovery fields', async () => {
      const { status, body } = await v03(server.url, 'GET', '/v1/card', undefined, { 'x-user': 'alice' });
      expect(status).toBe(200);
      expect(body).toMatchObject({
        protocolVersion: '0.3.0',
        name: 'Extended Test Agent',
        url: server.url,
        preferredTransport: 'JSONRPC',
        additionalInterfaces: [
          { url: server.url, transport: 'JSONRPC' },
          { url: server.url, transport: 'HTTP+JSON' },
        ],
        capabilities: { streaming: true },
        supportsAuthenticatedExtendedCard: true,
        security: [{ schemes: { bearer: { list: [] } } }],
        skills: [{ id: 'echo', security: [{ schemes: { oauth: { list: ['read'] } } }] }],
      });
      expect(body.securitySchemes).toEqual({
        bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
        oauth: {
          oauth2SecurityScheme: {
            flows: {
              authorizationCode: {
                authorizationUrl: 'https://id.example.com/auth',
                tokenUrl: 'https://id.example.com/token',
                scopes: { read: 'Read' },
              },
            },
          },
        },
        // A deviceCode-only scheme has no v0.3 form: left out.
      });
      for (const v1Only of ['supportedInterfaces', 'securityRequirements', 'signatures']) expect(body).not.toHaveProperty(v1Only);
    });

    it('an anonymous caller gets 401 with a challenge and a v0.3 error body', async () => {
      const reply = await v03(server.url, 'GET', '/v1/card');
      expect(reply.status).toBe(401);
      expect(reply.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(reply.body).toMatchObject({ code: -32600 });
    });
  });

  describe('errors: {code, message, data} with the JSON-RPC code, HTTP status per error', () => {
    it('TaskNotFound: 404, -32001, the ErrorInfo in data', async () => {
      const reply = await v03(server.url, 'GET', '/v1/tasks/no-such-task');
      expect(reply.status).toBe(404);
      expect(reply.headers.get('content-type')).toBe('application/json');
      expect(reply.body).toEqual({
        code: -32001,
        message: 'Task no-such-task not found',
        data: [
          {
            '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
            reason: 'TASK_NOT_FOUND',
            domain: 'a2a-protocol.org',
            metadata: { taskId: 'no-such-task' },
          },
        ],
      });
    });

    it('TaskNotCancelable: -32002', async () => {
      const { body } = await v03(server.url, 'POST', '/v1/message:send', protoSend('report'));
      expect((await v03(server.url, 'POST', `/v1/tasks/${body.task.id}:cancel`)).body).toMatchObject({ code: -32002 });
    });

    it.each([
      ['POST', '/pushNotificationConfigs', { parent: 'tasks/t', config: { pushNotificationConfig: { url: 'https://hooks.example.com' } } }],
      ['GET', '/pushNotificationConfigs', undefined],
      ['GET', '/pushNotificationConfigs/c-1', undefined],
      ['DELETE', '/pushNotificationConfigs/c-1', undefined],
    ])('%s /v1/tasks/{id}%s: PushNotificationNotSupported (-32003)', async (method, suffix, body) => {
      const reply = await v03(server.url, method, `/v1/tasks/t-1${suffix}`, body);
      expect(reply.status).toBe(400);
      expect(reply.body).toMatchObject({ code: -32003 });
    });

    it('invalid params: -32602 with field violations, in the ProtoJSON field names', async () => {
      const noContent = await v03(server.url, 'POST', '/v1/message:send', { message: { messageId: 'm', role: 'ROLE_USER' } });
      expect(noContent.status).toBe(400);
      expect(noContent.body.code).toBe(-32602);
      expect(noContent.body.data).toContainEqual({
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: [{ field: 'message.content', description: 'is required' }],
      });
      const badRole = await v03(server.url, 'POST', '/v1/message:send', protoSend('hi', { role: 'user' }));
      expect(badRole.body.message).toContain('message.role');
      const twoKinds = await v03(server.url, 'POST', '/v1/message:send', protoSend('hi', { content: [{ text: 'a', data: { data: {} } }] }));
      expect(twoKinds.body.message).toContain('message.content[0]');
      const badHistory = await v03(server.url, 'GET', '/v1/tasks/t-1?historyLength=many');
      expect(badHistory.body).toMatchObject({ code: -32602 });
    });

    it('a v1.0 body without A2A-Version: -32009, naming the header to send', async () => {
      const reply = await v03(server.url, 'POST', '/v1/message:send', sendBody('hello'));
      expect(reply.status).toBe(400);
      expect(reply.body.code).toBe(-32009);
      expect(reply.body.message).toContain('A2A-Version: 1.0');
    });

    it('malformed JSON: -32700; a body that is not JSON by its type: 415, -32005', async () => {
      const malformed = await v03(server.url, 'POST', '/v1/message:send', '{"message":');
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ code: -32700 });
      const text = await v03(server.url, 'POST', '/v1/message:send', 'hello', { 'Content-Type': 'text/plain' });
      expect(text.status).toBe(415);
      expect(text.body).toMatchObject({ code: -32005 });
    });
  });

  describe('routing: which requests a /v1 path serves as v0.3', () => {
    it('A2A-Version: 0.3 (or 0.3.x) is v0.3 too', async () => {
      for (const version of ['0.3', '0.3.0']) {
        const reply = await v03(server.url, 'POST', '/v1/message:send', protoSend('hello'), { 'A2A-Version': version });
        expect(reply.body.message.content).toEqual([{ text: 'hello, anonymous' }]);
      }
    });

    it('A2A-Version: 1.0 reads /v1 as a tenant: the v1.0 binding, its shapes, and the task under tenant v1', async () => {
      const reply = await rest(server.url, 'POST', '/v1/message:send', { body: sendBody('report') });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('application/a2a+json');
      expect(reply.body.task.status.state).toBe('TASK_STATE_COMPLETED');
      const id = reply.body.task.id;
      expect((await rest(server.url, 'GET', `/v1/tasks/${id}`)).status).toBe(200);
      // Not the same tenant as no tenant: the task is not found without the prefix.
      expect((await rest(server.url, 'GET', `/tasks/${id}`)).status).toBe(404);
    });

    it('without a version, a /v1 path v0.3 does not have is the v1.0 reading: VersionNotSupported', async () => {
      const reply = await v03(server.url, 'GET', '/v1/tasks');
      expect(reply.status).toBe(400);
      expect(errorInfo(reply.body)).toMatchObject({ reason: 'VERSION_NOT_SUPPORTED' });
    });

    it('another method on a v0.3 path: 405 with Allow; OPTIONS: 204 with Allow', async () => {
      const put = await v03(server.url, 'PUT', '/v1/message:send', {});
      expect(put.status).toBe(405);
      expect(put.headers.get('allow')).toBe('POST, OPTIONS');
      const options = await fetch(`${server.url}/v1/tasks/t-1:subscribe`, { method: 'OPTIONS' });
      expect(options.status).toBe(204);
      expect(options.headers.get('allow')).toBe('GET, POST, OPTIONS');
    });
  });
});

describe('v0.3 over HTTP+JSON turned off', () => {
  let server: TestServer | undefined;
  afterEach(() => server?.close());
  const publicCard = async (): Promise<any> => (await fetch(`${server!.url}/.well-known/agent-card.json`)).json();

  it('compatibility: { v0_3: false }: /v1 is a tenant for every request, and a request without a version gets VersionNotSupported', async () => {
    server = await startAgent(executor, { compatibility: { v0_3: false } });
    const reply = await v03(server.url, 'POST', '/v1/message:send', protoSend('hello'));
    expect(reply.status).toBe(400);
    expect(errorInfo(reply.body)).toMatchObject({ reason: 'VERSION_NOT_SUPPORTED' });
    expect((await publicCard()).supportedInterfaces.map((i: { protocolVersion: string }) => i.protocolVersion)).toEqual(['1.0', '1.0']);
  });

  it('bindings: { rest: false }: no v0.3 REST route, and the card announces v0.3 JSON-RPC only', async () => {
    server = await startAgent(executor, { bindings: { rest: false } });
    expect((await v03(server.url, 'POST', '/v1/message:send', protoSend('hello'))).status).toBe(404);
    expect((await publicCard()).additionalInterfaces).toEqual([{ url: server.url, transport: 'JSONRPC' }]);
  });

  it('bindings: { jsonRpc: false }: the card points v0.3 clients at HTTP+JSON, which serves them', async () => {
    server = await startAgent(executor, { bindings: { jsonRpc: false } });
    const card = await publicCard();
    expect(card).toMatchObject({
      url: server.url,
      preferredTransport: 'HTTP+JSON',
      additionalInterfaces: [{ url: server.url, transport: 'HTTP+JSON' }],
    });
    expect((await v03(server.url, 'POST', '/v1/message:send', protoSend('hello'))).body.message.content).toEqual([{ text: 'hello, anonymous' }]);
    // JSON-RPC is off for v0.3 clients too.
    expect((await rpc(server.url, 'message/send', {}, { headers: { 'A2A-Version': '' } })).status).toBe(404);
  });
});
