/**
 * v0.3 compatibility on JSON-RPC (§3.6.2 "absent means 0.3"): a request without `A2A-Version` (or
 * with 0.3) gets v0.3 method names, `kind`-tagged results, v0.3 stream events with `final`, and
 * v0.3 error codes; every answer is checked against the v0.3 JSON schema. `compatibility:
 * { v0_3: false }` restores VersionNotSupported.
 */
import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import type { AgentExecutor } from '../../lib';
import { deferred, type Deferred } from '../helpers/async';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { followStream } from '../helpers/follow-stream';
import { openStream, rpc, rpcStream } from '../helpers/http';
import { expectV03 } from '../helpers/v03-schema';

let gate: Deferred<void>;

const executor: AgentExecutor = {
  async execute(ctx, events) {
    switch (ctx.userText) {
      case 'hello':
        return events.reply(`hello, ${ctx.caller.id}`);
      case 'report':
        await events.start('working');
        await events.artifact({ artifactId: 'r-1', name: 'report.txt', text: 'line 1\n' });
        await events.artifact({ artifactId: 'r-1', text: 'line 2\n', append: true, lastChunk: true });
        return events.complete('report ready');
      case 'book':
        return events.requireInput('which day?');
      case 'long':
        await events.start('running');
        await Promise.race([gate.promise, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))]);
        if (ctx.signal.aborted) return;
        return events.complete('long done');
      default:
        if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') return events.complete(`booked for ${ctx.userText}`);
        return events.reject('unknown request');
    }
  },
};

/** No A2A-Version header: the request is v0.3. */
const NONE = { 'A2A-Version': '' };

const v03Message = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra },
});

const identity = (req: Request) => ({ caller: { id: req.get('x-user') ?? 'anonymous', authenticated: req.get('x-user') !== undefined } });

describe('v0.3 over JSON-RPC (compatibility on by default)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, {
      callContext: identity,
      agentCard: { ...testCard, capabilities: { ...testCard.capabilities, extendedAgentCard: true } },
      extendedAgentCard: { ...testCard, name: 'Extended Test Agent' },
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    gate = deferred();
  });
  afterEach(() => gate.resolve());

  const call = (method: string, params?: unknown, headers: Record<string, string> = NONE) => rpc(server.url, method, params, { headers });

  it.each([
    ['no A2A-Version header', NONE],
    ['A2A-Version: 0.3', { 'A2A-Version': '0.3' }],
    ['A2A-Version: 0.3.0', { 'A2A-Version': '0.3.0' }],
  ])('message/send with %s: a bare Task with kind "task" and v0.3 spellings', async (_what, headers) => {
    const reply = await call('message/send', v03Message('report'), headers);
    expect(reply.status).toBe(200);
    expectV03('SendMessageSuccessResponse', reply.body);
    const task = reply.body.result;
    expect(task).toMatchObject({
      kind: 'task',
      status: { state: 'completed', message: { kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'report ready' }] } },
    });
    expect(task.artifacts).toEqual([
      {
        artifactId: 'r-1',
        name: 'report.txt',
        parts: [
          { kind: 'text', text: 'line 1\n' },
          { kind: 'text', text: 'line 2\n' },
        ],
      },
    ]);
    expect(task.history[0]).toMatchObject({ kind: 'message', role: 'user', parts: [{ kind: 'text', text: 'report' }] });
  });

  it('message/send: a Message reply is a bare Message with kind "message"', async () => {
    const reply = await call('message/send', v03Message('hello'));
    expectV03('SendMessageSuccessResponse', reply.body);
    expect(reply.body.result).toMatchObject({ kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'hello, anonymous' }] });
    expect(reply.body.result.contextId).toEqual(expect.any(String));
  });

  it('message/send with blocking: false returns at once; tasks/get and tasks/cancel speak v0.3', async () => {
    const started = await call('message/send', { ...v03Message('long'), configuration: { blocking: false } });
    expectV03('SendMessageSuccessResponse', started.body);
    const task = started.body.result;
    expect(task.status.state).toBe('working');
    const got = await call('tasks/get', { id: task.id, historyLength: 1 });
    expectV03('GetTaskSuccessResponse', got.body);
    expect(got.body.result).toMatchObject({ kind: 'task', id: task.id, status: { state: 'working' } });
    expect(got.body.result.history).toHaveLength(1);
    const canceled = await call('tasks/cancel', { id: task.id });
    expectV03('CancelTaskSuccessResponse', canceled.body);
    expect(canceled.body.result).toMatchObject({ kind: 'task', id: task.id, status: { state: 'canceled' } });
    const again = await call('tasks/cancel', { id: task.id });
    expect(again.body.result.status.state).toBe('canceled');
  });

  it('a two-turn input-required task, continued by taskId', async () => {
    const first = (await call('message/send', v03Message('book'))).body.result;
    expect(first.status.state).toBe('input-required');
    const second = await call('message/send', v03Message('Friday', { taskId: first.id, contextId: first.contextId }));
    expect(second.body.result).toMatchObject({
      id: first.id,
      status: { state: 'completed', message: { parts: [{ kind: 'text', text: 'booked for Friday' }] } },
    });
  });

  it('errors carry v0.3 codes: unknown task -32001, not cancelable -32002, push -32003, invalid params -32602', async () => {
    const missing = await call('tasks/get', { id: 'no-such-task' });
    expectV03('JSONRPCErrorResponse', missing.body);
    expect(missing.body.error.code).toBe(-32001);
    const done = (await call('message/send', v03Message('report'))).body.result;
    const notCancelable = await call('tasks/cancel', { id: done.id });
    expect(notCancelable.body.error.code).toBe(-32002);
    for (const method of ['set', 'get', 'list', 'delete']) {
      const push = await call(`tasks/pushNotificationConfig/${method}`, { id: done.id, pushNotificationConfigId: 'x' });
      expectV03('JSONRPCErrorResponse', push.body);
      expect(push.body.error.code).toBe(-32003);
    }
    const invalid = await call('message/send', { message: { kind: 'message', messageId: 'm', role: 'user', parts: [{ text: 'no kind' }] } });
    expect(invalid.body.error.code).toBe(-32602);
    expect(invalid.body.error.message).toContain('message.parts[0].kind');
    const v1Part = await call('message/send', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'v1' }] } });
    expect(v1Part.body.error.code).toBe(-32602);
  });

  it('an unknown method is -32601; a v1.0 method without a version is told to send A2A-Version: 1.0 (-32009)', async () => {
    const unknown = await call('tasks/list', {});
    expect(unknown.body.error.code).toBe(-32601);
    const v1 = await call('SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] } });
    expect(v1.body.error.code).toBe(-32009);
    expect(v1.body.error.message).toContain('A2A-Version: 1.0');
    // And the other way round: a v0.3 method under 1.0 is not a 1.0 method.
    const v03UnderV1 = await call('message/send', v03Message('hello'), { 'A2A-Version': '1.0' });
    expect(v03UnderV1.body.error.code).toBe(-32601);
  });

  it('message/stream: v0.3 events, in order, the last status-update final', async () => {
    const stream = await rpcStream(server.url, 'message/stream', v03Message('report'), { headers: NONE, id: 'st-1' });
    expect(stream.status).toBe(200);
    for (const event of stream.events) {
      expectV03('SendStreamingMessageSuccessResponse', event);
      expect(event.id).toBe('st-1');
    }
    const results = stream.events.map((e) => e.result);
    expect(results.map((r) => r.kind)).toEqual(['task', 'artifact-update', 'artifact-update', 'status-update']);
    expect(results[0].status.state).toBe('working');
    expect(results[2]).toMatchObject({ append: true, lastChunk: true });
    expect(results[3]).toMatchObject({ status: { state: 'completed' }, final: true });
  });

  it('message/stream: a Message reply is the only event; input-required ends the stream with final: true', async () => {
    const message = await rpcStream(server.url, 'message/stream', v03Message('hello'), { headers: NONE });
    expect(message.events.map((e) => e.result.kind)).toEqual(['message']);
    const parked = await rpcStream(server.url, 'message/stream', v03Message('book'), { headers: NONE });
    const last = parked.events.at(-1).result;
    expect(last.kind === 'task' || last.final === true).toBe(true);
    expect(parked.events.map((e) => e.result.status?.state ?? e.result.kind)).toContain('input-required');
  });

  it('tasks/resubscribe: the task snapshot first, then its events to a terminal state (an interrupted one is not final)', async () => {
    const parked = (await call('message/send', v03Message('book'))).body.result;
    const response = followStream(openStream(server.url, 'tasks/resubscribe', { id: parked.id }, { headers: NONE }));
    // Once the task snapshot arrived the subscription is open: continue the task from another request.
    await response.firstEvent;
    await call('message/send', v03Message('Saturday', { taskId: parked.id }));
    const stream = await response.ended;
    for (const event of stream.events) expectV03('SendStreamingMessageSuccessResponse', event);
    const results = stream.events.map((e) => e.result);
    expect(results[0]).toMatchObject({ kind: 'task', id: parked.id, status: { state: 'input-required' } });
    const updates = results.filter((r) => r.kind === 'status-update');
    expect(updates.at(-1)).toMatchObject({ status: { state: 'completed' }, final: true });
    expect(updates.slice(0, -1).every((u) => u.final === false)).toBe(true);
  });

  it('tasks/resubscribe on a finished task and on an unknown one: v0.3 errors before the stream opens', async () => {
    const done = (await call('message/send', v03Message('report'))).body.result;
    const terminal = await rpcStream(server.url, 'tasks/resubscribe', { id: done.id }, { headers: NONE });
    expect(terminal.json.error.code).toBe(-32004);
    const missing = await rpcStream(server.url, 'tasks/resubscribe', { id: 'nope' }, { headers: NONE });
    expectV03('JSONRPCErrorResponse', missing.json);
    expect(missing.json.error.code).toBe(-32001);
  });

  it('agent/getAuthenticatedExtendedCard: the extended card to an authenticated caller, without params', async () => {
    const reply = await rpc(server.url, 'agent/getAuthenticatedExtendedCard', undefined, { headers: { ...NONE, 'x-user': 'alice' } });
    expectV03('GetAuthenticatedExtendedCardSuccessResponse', reply.body);
    expect(reply.body.result.name).toBe('Extended Test Agent');
    const anonymous = await call('agent/getAuthenticatedExtendedCard');
    expect(anonymous.status).toBe(401);
  });
});

describe('v0.3 extensions', () => {
  let server: TestServer;
  const seen: (readonly string[])[] = [];
  beforeAll(async () => {
    server = await startAgent(
      {
        async execute(ctx, events) {
          seen.push(ctx.extensions);
          await events.complete('ok');
        },
      },
      {
        agentCard: {
          ...testCard,
          capabilities: { ...testCard.capabilities, extensions: [{ uri: 'urn:x:a' }, { uri: 'urn:x:req', required: true }] },
        },
      },
    );
  });
  afterAll(() => server.close());

  it('reads X-A2A-Extensions and echoes the active ones in it; a missing required one is -32600 with its reason', async () => {
    const reply = await rpc(server.url, 'message/send', v03Message('x'), {
      headers: { ...NONE, 'X-A2A-Extensions': 'urn:x:req, urn:x:a, urn:x:other' },
    });
    expect(reply.body.result.status.state).toBe('completed');
    expect(
      reply.headers
        .get('x-a2a-extensions')
        ?.split(',')
        .map((s) => s.trim())
        .sort(),
    ).toEqual(['urn:x:a', 'urn:x:req']);
    expect([...seen.at(-1)!].sort()).toEqual(['urn:x:a', 'urn:x:req']);
    const refused = await rpc(server.url, 'message/send', v03Message('x'), { headers: NONE });
    expectV03('JSONRPCErrorResponse', refused.body);
    expect(refused.body.error.code).toBe(-32600);
    expect(refused.body.error.data[0]).toMatchObject({ reason: 'EXTENSION_SUPPORT_REQUIRED' });
  });
});

describe('compatibility: { v0_3: false }', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, { compatibility: { v0_3: false } });
  });
  afterAll(() => server.close());

  it.each([
    ['no header', NONE],
    ['0.3', { 'A2A-Version': '0.3' }],
  ])('answers VersionNotSupported (-32009) with %s', async (_what, headers) => {
    const reply = await rpc(server.url, 'message/send', v03Message('hello'), { headers });
    expect(reply.body.error.code).toBe(-32009);
    expect(reply.body.error.data[0]).toMatchObject({ reason: 'VERSION_NOT_SUPPORTED', metadata: { supportedVersions: '1.0' } });
  });

  it('still serves 1.0', async () => {
    const reply = await rpc(server.url, 'SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hello' }] } });
    expect(reply.body.result.message.parts[0].text).toBe('hello, anonymous');
  });
});
