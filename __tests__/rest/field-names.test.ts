/**
 * ProtoJSON field names on input (§5.5): the proto names (`history_length`, `context_id`, ...) are
 * accepted like the JSON names, in bodies and query parameters, on both bindings; free-form values
 * are left alone; answers are camelCase.
 */
import type { AgentExecutor } from '../../lib';
import { jsonNameOf, withJsonNames } from '../../lib/protocol/field-names';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc } from '../helpers/http';
import { fieldViolations, rest } from './helpers';

describe('withJsonNames', () => {
  it('renames proto names at every message level of the request, and nothing inside free-form values', () => {
    const params = {
      message: {
        message_id: 'm-1',
        context_id: 'c-1',
        reference_task_ids: ['t-0'],
        role: 'ROLE_USER',
        parts: [{ text: 'hi', media_type: 'text/plain', metadata: { keep_me: 1 } }, { data: { snake_case: true } }],
        metadata: { user_key: { nested_key: 1 } },
      },
      configuration: {
        accepted_output_modes: ['text/plain'],
        history_length: 2,
        return_immediately: true,
        task_push_notification_config: { url: 'https://h', task_id: '', authentication: { scheme: 'Bearer' } },
      },
      metadata: { top_level: 'kept' },
    };
    expect(withJsonNames('SendMessage', params)).toEqual({
      message: {
        messageId: 'm-1',
        contextId: 'c-1',
        referenceTaskIds: ['t-0'],
        role: 'ROLE_USER',
        parts: [{ text: 'hi', mediaType: 'text/plain', metadata: { keep_me: 1 } }, { data: { snake_case: true } }],
        metadata: { user_key: { nested_key: 1 } },
      },
      configuration: {
        acceptedOutputModes: ['text/plain'],
        historyLength: 2,
        returnImmediately: true,
        taskPushNotificationConfig: { url: 'https://h', taskId: '', authentication: { scheme: 'Bearer' } },
      },
      metadata: { top_level: 'kept' },
    });
  });

  it('returns the same object when there is nothing to rename (no copy on the hot path)', () => {
    const params = { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'hi' }] }, metadata: { a_b: 1 } };
    expect(withJsonNames('SendMessage', params)).toBe(params);
    const list = { pageSize: 3 };
    expect(withJsonNames('ListTasks', list)).toBe(list);
  });

  it('copies instead of changing the input', () => {
    const params = { id: 't', history_length: 1 };
    expect(withJsonNames('GetTask', params)).toEqual({ id: 't', historyLength: 1 });
    expect(params).toEqual({ id: 't', history_length: 1 });
  });

  it('a field given under both names is an invalid request naming it', () => {
    expect(() => withJsonNames('GetTask', { historyLength: 1, history_length: 2 })).toThrow(
      'historyLength: is given twice (as history_length and historyLength)',
    );
    expect(() => withJsonNames('SendMessage', { message: { message_id: 'a', messageId: 'b' } })).toThrow('message.messageId: is given twice');
  });

  it('leaves values that are not objects to zod, and never assigns __proto__', () => {
    expect(withJsonNames('SendMessage', 42)).toBe(42);
    expect(withJsonNames('SendMessage', { message: 'text', configuration: [1] })).toEqual({ message: 'text', configuration: [1] });
    const hostile = JSON.parse('{"__proto__": {"polluted": true}, "history_length": 1, "id": "t"}');
    const renamed = withJsonNames('GetTask', hostile) as Record<string, unknown>;
    expect(renamed).toEqual({ historyLength: 1, id: 't' });
    expect(Object.getPrototypeOf(renamed)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('jsonNameOf follows protoc', () => {
    expect(jsonNameOf('status_timestamp_after')).toBe('statusTimestampAfter');
    expect(jsonNameOf('id')).toBe('id');
  });
});

const executor: AgentExecutor = {
  async execute(ctx, events) {
    await events.start('working');
    await events.progress('step 1');
    await events.progress('step 2');
    await events.complete(`done: ${ctx.userText}`);
  },
};

describe('proto names over the wire', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor);
  });
  afterAll(() => server.close());

  const protoSend = (text: string, configuration: Record<string, unknown> = {}) => ({
    message: { message_id: `m-${Math.random()}`, role: 'ROLE_USER', parts: [{ text, media_type: 'text/plain' }], context_id: 'ctx-proto' },
    configuration,
  });

  describe('JSON-RPC', () => {
    it('history_length in SendMessage and GetTask (was silently ignored)', async () => {
      const sent = await rpc(server.url, 'SendMessage', protoSend('a', { history_length: 1 }));
      expect(sent.body.error).toBeUndefined();
      const task = sent.body.result.task;
      expect(task.history).toHaveLength(1);
      expect(task.contextId).toBe('ctx-proto');
      const full = await rpc(server.url, 'GetTask', { id: task.id });
      expect(full.body.result.history.length).toBeGreaterThan(1);
      expect((await rpc(server.url, 'GetTask', { id: task.id, history_length: 0 })).body.result.history).toBeUndefined();
      expect((await rpc(server.url, 'GetTask', { id: task.id, history_length: 2 })).body.result.history).toHaveLength(2);
    });

    it('ListTasks with context_id, page_size, include_artifacts; answers camelCase', async () => {
      await rpc(server.url, 'SendMessage', protoSend('b'));
      const reply = await rpc(server.url, 'ListTasks', { context_id: 'ctx-proto', page_size: 1, include_artifacts: true, history_length: 0 });
      expect(reply.body.error).toBeUndefined();
      expect(reply.body.result).toMatchObject({ pageSize: 1, tasks: [expect.objectContaining({ contextId: 'ctx-proto' })] });
      expect(reply.text).not.toMatch(/"[a-z]+_[a-z_]+":/);
    });

    it('a field under both names: -32602 naming it', async () => {
      const reply = await rpc(server.url, 'GetTask', { id: 't', history_length: 1, historyLength: 1 });
      expect(reply.body.error).toMatchObject({ code: -32602 });
      expect(reply.body.error.data[0].fieldViolations).toEqual([
        { field: 'historyLength', description: 'is given twice (as history_length and historyLength)' },
      ]);
    });
  });

  describe('HTTP+JSON', () => {
    it('proto names in the body: return_immediately, history_length, message_id', async () => {
      const reply = await rest(server.url, 'POST', '/message:send', { body: protoSend('c', { history_length: 1 }) });
      expect(reply.status).toBe(200);
      expect(reply.body.task.history).toHaveLength(1);
      expect(reply.body.task.contextId).toBe('ctx-proto');
      expect(reply.text).not.toMatch(/"[a-z]+_[a-z_]+":/);
    });

    it('proto names in the query: history_length, page_size, context_id, include_artifacts', async () => {
      const { task } = (await rest(server.url, 'POST', '/message:send', { body: protoSend('d') })).body;
      expect((await rest(server.url, 'GET', `/tasks/${task.id}?history_length=1`)).body.history).toHaveLength(1);
      const listed = await rest(server.url, 'GET', '/tasks?context_id=ctx-proto&page_size=1&include_artifacts=false');
      expect(listed.status).toBe(200);
      expect(listed.body.pageSize).toBe(1);
      expect(listed.body.tasks[0].contextId).toBe('ctx-proto');
    });

    it('a query parameter under both names: 400 naming it', async () => {
      const reply = await rest(server.url, 'GET', '/tasks?page_size=1&pageSize=2');
      expect(reply.status).toBe(400);
      expect(fieldViolations(reply.body)).toEqual([{ field: 'pageSize', description: 'is given twice (as page_size and pageSize)' }]);
    });
  });
});
