/** SendMessage (§3.1.1, §3.2.2, §3.2.4, §3.4): blocking vs returnImmediately, Message replies, context/task routing, validation, historyLength. */
import type { AgentExecutor } from '../../lib';
import { deferred, until, type Deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';

let gate: Deferred<void>;
/** Resolved by the gated agent once its WORKING status is stored. */
let started: Deferred<void>;
const contexts: { taskId: string; contextId: string; text: string }[] = [];

/** Behaviour chosen by the message text. */
const executor: AgentExecutor = {
  async execute(ctx, events) {
    contexts.push({ taskId: ctx.taskId, contextId: ctx.contextId, text: ctx.userText });
    switch (ctx.userText) {
      case 'reply':
        return events.reply('just a message');
      case 'gated':
        await events.start('working on it');
        started.resolve();
        await gate.promise;
        await events.artifact({ artifactId: 'out', text: 'result' });
        return events.complete('finished');
      case 'ask':
        return events.requireInput('which day?');
      default:
        if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') {
          await events.start();
          return events.complete(`booked ${ctx.userText}`);
        }
        await events.start();
        await events.artifact({ artifactId: 'a-1', name: 'report', text: 'part one' });
        await events.progress('halfway');
        await events.artifact({ artifactId: 'a-2', text: 'second artifact' });
        return events.complete('all done');
    }
  },
};

describe('SendMessage', () => {
  let server: TestServer;
  beforeEach(async () => {
    gate = deferred();
    started = deferred();
    contexts.length = 0;
    server = await startAgent(executor);
  });
  afterEach(async () => {
    gate.resolve();
    await server.close();
  });

  const send = (text: string, extra: Record<string, unknown> = {}, configuration?: Record<string, unknown>) =>
    rpc(server.url, 'SendMessage', { ...userMessage(text, extra), ...(configuration ? { configuration } : {}) });

  describe('blocking (default)', () => {
    it('returns the completed task with its artifacts and latest status', async () => {
      const reply = await send('work');
      const task = reply.body.result.task;
      expect(reply.body.result.message).toBeUndefined();
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.status.message.parts[0].text).toBe('all done');
      expect(task.artifacts.map((a: { artifactId: string }) => a.artifactId)).toEqual(['a-1', 'a-2']);
      expect(task.artifacts[0]).toMatchObject({ name: 'report', parts: [{ text: 'part one' }] });
      expect(typeof task.id).toBe('string');
      expect(task.id.length).toBeGreaterThan(0);
      expect(server.router.liveExecutions).toBe(0);
    });

    it('returns when the task becomes input-required', async () => {
      const reply = await send('ask');
      const task = reply.body.result.task;
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(task.status.message.parts[0].text).toBe('which day?');
    });

    it('waits for the agent while it is gated', async () => {
      let settled = false;
      const pending = send('gated').then((r) => {
        settled = true;
        return r;
      });
      await started.promise;
      // The agent sits on the gate after WORKING; a full round trip later the blocking call must still be open.
      const taskId = contexts[0].taskId;
      const during = await rpc(server.url, 'GetTask', { id: taskId });
      expect(during.body.result.status.state).toBe('TASK_STATE_WORKING');
      await rpc(server.url, 'GetTask', { id: taskId });
      expect(settled).toBe(false);
      expect(server.router.liveObservers).toBe(1);
      gate.resolve();
      const task = (await pending).body.result.task;
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.artifacts[0].parts[0].text).toBe('result');
    });
  });

  describe('returnImmediately', () => {
    it('returns right after creation with a non-final state; GetTask later shows completion', async () => {
      const reply = await send('gated', {}, { returnImmediately: true });
      const task = reply.body.result.task;
      expect(task.status.state).toBe('TASK_STATE_WORKING');
      expect(server.router.liveExecutions).toBe(1);

      const during = await rpc(server.url, 'GetTask', { id: task.id });
      expect(during.body.result.status.state).toBe('TASK_STATE_WORKING');

      gate.resolve();
      await until(() => server.router.liveExecutions === 0, 'execution finished');
      const after = await rpc(server.url, 'GetTask', { id: task.id });
      expect(after.body.result.status.state).toBe('TASK_STATE_COMPLETED');
      expect(after.body.result.artifacts[0].parts[0].text).toBe('result');
    });
  });

  describe('direct Message reply', () => {
    it('returns {message} with a contextId and stores no task', async () => {
      const reply = await send('reply');
      expect(reply.body.result.task).toBeUndefined();
      const message = reply.body.result.message;
      expect(message.role).toBe('ROLE_AGENT');
      expect(message.parts[0].text).toBe('just a message');
      expect(typeof message.contextId).toBe('string');
      expect(message.contextId.length).toBeGreaterThan(0);
      expect(message.contextId).toBe(contexts[0].contextId);
      expect(message.taskId ?? '').toBe('');

      const lookup = await rpc(server.url, 'GetTask', { id: contexts[0].taskId });
      expect(lookup.body.error.code).toBe(-32001);
      const list = await rpc(server.url, 'ListTasks', {});
      expect(list.body.result.tasks).toEqual([]);
    });

    it('keeps the client contextId on a Message reply', async () => {
      const reply = await send('reply', { contextId: 'client-ctx-msg' });
      expect(reply.body.result.message.contextId).toBe('client-ctx-msg');
    });
  });

  describe('context and task routing', () => {
    it('generates a contextId when none is given, and distinct ones for distinct interactions', async () => {
      const one = (await send('work')).body.result.task;
      const two = (await send('work')).body.result.task;
      expect(one.contextId).toEqual(expect.any(String));
      expect(one.contextId.length).toBeGreaterThan(0);
      expect(one.contextId).not.toBe(two.contextId);
      expect(one.id).not.toBe(two.id);
      expect(contexts[0].contextId).toBe(one.contextId);
    });

    it('keeps a client-chosen contextId', async () => {
      const task = (await send('work', { contextId: 'my-context-7' })).body.result.task;
      expect(task.contextId).toBe('my-context-7');
      expect(contexts[0].contextId).toBe('my-context-7');
    });

    it('infers the contextId of a follow-up that gives only taskId', async () => {
      const first = (await send('ask')).body.result.task;
      const second = (await send('Friday', { taskId: first.id })).body.result.task;
      expect(second.id).toBe(first.id);
      expect(second.contextId).toBe(first.contextId);
      expect(second.status.state).toBe('TASK_STATE_COMPLETED');
      expect(contexts[1]).toEqual({ taskId: first.id, contextId: first.contextId, text: 'Friday' });
      const followUp = second.history.find((m: { parts: { text?: string }[] }) => m.parts[0].text === 'Friday');
      expect(followUp).toMatchObject({ role: 'ROLE_USER', taskId: first.id, contextId: first.contextId });
    });

    it('does not let a client create a task with its own id: unknown taskId -> -32001', async () => {
      const reply = await send('work', { taskId: 'client-made-up-id' });
      expect(reply.body.error.code).toBe(-32001);
      expect(contexts).toHaveLength(0);
    });

    it('rejects taskId with a different contextId (-32602)', async () => {
      const first = (await send('ask')).body.result.task;
      const reply = await send('Friday', { taskId: first.id, contextId: 'some-other-context' });
      expect(reply.body.error.code).toBe(-32602);
      expect(contexts).toHaveLength(1);
      const unchanged = await rpc(server.url, 'GetTask', { id: first.id });
      expect(unchanged.body.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    });

    it('answers -32004 to a message for a completed task', async () => {
      const done = (await send('work')).body.result.task;
      const reply = await send('again', { taskId: done.id });
      expect(reply.body.error.code).toBe(-32004);
      expect(reply.body.error.data[0]).toMatchObject({ reason: 'UNSUPPORTED_OPERATION' });
      expect(contexts).toHaveLength(1);
    });
  });

  describe('validation', () => {
    it('rejects a message with role ROLE_AGENT (-32602)', async () => {
      const params = userMessage('hi');
      const reply = await rpc(server.url, 'SendMessage', { message: { ...params.message, role: 'ROLE_AGENT' } });
      expect(reply.body.error.code).toBe(-32602);
      expect(contexts).toHaveLength(0);
    });

    it('answers -32005 for a part media type the card does not accept', async () => {
      const message = {
        messageId: 'm-img',
        role: 'ROLE_USER',
        parts: [{ text: 'see image' }, { url: 'https://example.com/x.png', mediaType: 'image/png' }],
      };
      const reply = await rpc(server.url, 'SendMessage', { message });
      expect(reply.body.error.code).toBe(-32005);
      expect(reply.body.error.data[0]).toMatchObject({ reason: 'CONTENT_TYPE_NOT_SUPPORTED' });
      expect(contexts).toHaveLength(0);
    });

    it('accepts a part media type the card declares', async () => {
      const message = { messageId: 'm-json', role: 'ROLE_USER', parts: [{ data: { a: 1 }, mediaType: 'application/json' }] };
      const reply = await rpc(server.url, 'SendMessage', { message });
      expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    });

    it('rejects a negative historyLength (-32602)', async () => {
      const reply = await send('work', {}, { historyLength: -1 });
      expect(reply.body.error.code).toBe(-32602);
      expect(contexts).toHaveLength(0);
    });
  });

  describe('historyLength', () => {
    it('0 omits history entirely', async () => {
      const task = (await send('ask', {}, { historyLength: 0 })).body.result.task;
      expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(task).not.toHaveProperty('history');
      // The history is still stored.
      const full = await rpc(server.url, 'GetTask', { id: task.id });
      expect(full.body.result.history.length).toBeGreaterThanOrEqual(2);
    });

    it('1 returns only the newest message', async () => {
      const task = (await send('ask', {}, { historyLength: 1 })).body.result.task;
      const full = (await rpc(server.url, 'GetTask', { id: task.id })).body.result;
      expect(full.history.length).toBeGreaterThanOrEqual(2);
      expect(task.history).toHaveLength(1);
      expect(task.history[0]).toEqual(full.history[full.history.length - 1]);
    });

    it('absent returns the whole history, user message first', async () => {
      const sent = userMessage('ask');
      const task = (await rpc(server.url, 'SendMessage', sent)).body.result.task;
      expect(task.history[0]).toMatchObject({ messageId: sent.message.messageId, role: 'ROLE_USER' });
    });
  });
});
