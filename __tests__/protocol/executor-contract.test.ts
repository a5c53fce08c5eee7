/** The executor contract (§4.1-§4.4, §5.1 of the digest): TaskEvents wire shapes, and what the engine does with invalid or missing events. */
import { InvalidAgentEventError, type AgentExecutor, type TaskEvents } from '../../lib';
import { deferred, type Deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, rpcStream, userMessage } from '../helpers/http';

const ISO_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const GENERIC = 'The agent failed while processing this task.';

/** What the last misbehaving publish() call rejected with. */
let refused: Deferred<unknown>;

async function expectRefusal(publish: () => Promise<void>): Promise<void> {
  try {
    await publish();
    refused.resolve(undefined);
  } catch (error) {
    refused.resolve(error);
  }
}

const behaviours: Record<string, (ctx: Parameters<AgentExecutor['execute']>[0], events: TaskEvents) => Promise<void>> = {
  async helpers(_ctx, events) {
    await events.start('starting');
    await events.progress('halfway');
    await events.artifact({ artifactId: 'doc', name: 'doc.txt', description: 'a document', text: 'chunk-1' });
    await events.artifact({ artifactId: 'doc', text: 'chunk-2', append: true, lastChunk: true });
    await events.requireInput('need more');
  },
  async auth(_ctx, events) {
    await events.requireAuth('please sign in');
  },
  async done(_ctx, events) {
    await events.complete('all done');
  },
  async fail(_ctx, events) {
    await events.start();
    await events.fail('could not do it');
  },
  async reject(_ctx, events) {
    await events.reject('will not do it');
  },
  async 'wrong-task-id'(ctx, events) {
    await events.start();
    await expectRefusal(() =>
      events.publish({ statusUpdate: { taskId: 'some-other-task', contextId: ctx.contextId, status: { state: 'TASK_STATE_COMPLETED' } } }),
    );
  },
  async 'after-terminal'(_ctx, events) {
    await events.complete('done');
    await expectRefusal(() => events.progress('one more thing'));
  },
  async 'illegal-transition'(_ctx, events) {
    // Parks the task; its cancel() hook then tries INPUT_REQUIRED -> SUBMITTED, not a legal transition.
    return events.requireInput('more?');
  },
  async 'task-after-task'(ctx, events) {
    await events.start();
    await expectRefusal(() => events.publish({ task: { id: ctx.taskId, contextId: ctx.contextId, status: { state: 'TASK_STATE_WORKING' } } }));
  },
  async 'message-after-task'(_ctx, events) {
    await events.start();
    await expectRefusal(() => events.reply('a plain message'));
  },
  async 'double-reply'(_ctx, events) {
    // The first reply ends the turn at once; a second one is refused.
    void events.reply('first');
    await expectRefusal(() => events.reply('second'));
  },
  async 'reply-unawaited'(_ctx, events) {
    void events.reply('not awaited');
  },
  async 'mutates-task'(ctx, events) {
    if (!ctx.task) return events.requireInput('more?');
    // The agent's copy is its own: nothing it does to it reaches the engine or the store.
    ctx.task.status.state = 'TASK_STATE_COMPLETED';
    ctx.task.history?.splice(0);
    ctx.task.metadata = { injected: true };
    await events.complete('done');
  },
  async 'return-early'(_ctx, events) {
    await events.start('started, then gave up silently');
  },
  async 'return-without-events'() {},
  async throws() {
    throw new Error('boom in execute');
  },
};

const executor: AgentExecutor = {
  execute: (ctx, events) => behaviours[ctx.userText](ctx, events),
  async cancel(ctx, events) {
    if (ctx.task.history?.[0]?.parts[0] && 'text' in ctx.task.history[0].parts[0] && ctx.task.history[0].parts[0].text === 'illegal-transition') {
      await expectRefusal(() => events.status('TASK_STATE_SUBMITTED'));
    }
  },
};

describe('executor contract', () => {
  let server: TestServer;
  beforeEach(async () => {
    refused = deferred();
    server = await startAgent(executor);
  });
  afterEach(async () => {
    expect(server.router.liveExecutions).toBe(0);
    await server.close();
  });

  const getTask = async (id: string) => (await rpc(server.url, 'GetTask', { id })).body.result;

  describe('TaskEvents helpers produce the v1.0 wire shapes', () => {
    it('start, progress, artifact (append, lastChunk), requireInput, requireAuth, complete', async () => {
      const first = await rpcStream(server.url, 'SendStreamingMessage', userMessage('helpers'));
      expect(first.status).toBe(200);
      const results = first.events.map((e) => e.result);
      expect(results.map((r) => Object.keys(r)[0])).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
      const [created, progress, chunk1, chunk2, input] = results;
      const { id: taskId, contextId } = created.task;

      // start(): the task itself, WORKING, with the agent message in status and history.
      expect(created.task.status).toMatchObject({
        state: 'TASK_STATE_WORKING',
        timestamp: expect.stringMatching(ISO_Z),
        message: { role: 'ROLE_AGENT', parts: [{ text: 'starting' }], taskId, contextId, messageId: expect.any(String) },
      });
      expect(created.task.history.map((m: { role: string }) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT']);

      // progress(): a WORKING status update with a message.
      expect(progress.statusUpdate).toEqual({
        taskId,
        contextId,
        status: {
          state: 'TASK_STATE_WORKING',
          timestamp: expect.stringMatching(ISO_Z),
          message: { messageId: expect.any(String), role: 'ROLE_AGENT', parts: [{ text: 'halfway' }], taskId, contextId },
        },
      });

      // artifact(): a new artifact, then an appended last chunk.
      expect(chunk1.artifactUpdate).toEqual({
        taskId,
        contextId,
        artifact: { artifactId: 'doc', name: 'doc.txt', description: 'a document', parts: [{ text: 'chunk-1' }] },
      });
      expect(chunk2.artifactUpdate).toEqual({
        taskId,
        contextId,
        append: true,
        lastChunk: true,
        artifact: { artifactId: 'doc', parts: [{ text: 'chunk-2' }] },
      });

      // requireInput(): INPUT_REQUIRED with the question; the stream then closes.
      expect(input.statusUpdate.status).toMatchObject({ state: 'TASK_STATE_INPUT_REQUIRED', message: { parts: [{ text: 'need more' }] } });
      for (const event of first.events) expect(event.jsonrpc).toBe('2.0');

      const stored = await getTask(taskId);
      expect(stored.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(stored.artifacts).toEqual([
        { artifactId: 'doc', name: 'doc.txt', description: 'a document', parts: [{ text: 'chunk-1' }, { text: 'chunk-2' }] },
      ]);

      // requireAuth(): AUTH_REQUIRED with an explanation, from INPUT_REQUIRED.
      const second = await rpcStream(server.url, 'SendStreamingMessage', userMessage('auth', { taskId }));
      const secondResults = second.events.map((e) => e.result);
      expect(secondResults[0].task.id).toBe(taskId);
      expect(secondResults.at(-1).statusUpdate.status).toMatchObject({
        state: 'TASK_STATE_AUTH_REQUIRED',
        message: { role: 'ROLE_AGENT', parts: [{ text: 'please sign in' }] },
      });

      // complete(): COMPLETED with a message, from AUTH_REQUIRED.
      const third = await rpc(server.url, 'SendMessage', userMessage('done', { taskId }));
      expect(third.body.result.task.status).toMatchObject({ state: 'TASK_STATE_COMPLETED', message: { parts: [{ text: 'all done' }] } });
      const history = (await getTask(taskId)).history as { role: string; parts: { text: string }[] }[];
      expect(history.filter((m) => m.role === 'ROLE_USER').map((m) => m.parts[0].text)).toEqual(['helpers', 'auth', 'done']);
    });

    it('fail() ends the task FAILED with the agent message', async () => {
      const stream = await rpcStream(server.url, 'SendStreamingMessage', userMessage('fail'));
      const last = stream.events.at(-1).result.statusUpdate;
      expect(last.status).toMatchObject({ state: 'TASK_STATE_FAILED', message: { role: 'ROLE_AGENT', parts: [{ text: 'could not do it' }] } });
      expect((await getTask(last.taskId)).status.state).toBe('TASK_STATE_FAILED');
    });

    it('reject() as the first event creates the task REJECTED', async () => {
      const stream = await rpcStream(server.url, 'SendStreamingMessage', userMessage('reject'));
      expect(stream.events).toHaveLength(1);
      const task = stream.events[0].result.task;
      expect(task.status).toMatchObject({ state: 'TASK_STATE_REJECTED', message: { parts: [{ text: 'will not do it' }] } });
      expect((await getTask(task.id)).status.state).toBe('TASK_STATE_REJECTED');
    });
  });

  describe('invalid events', () => {
    it('an event for another taskId is refused with InvalidAgentEventError, the task FAILS, the server keeps serving', async () => {
      const reply = await rpc(server.url, 'SendMessage', userMessage('wrong-task-id'));
      expect(await refused.promise).toBeInstanceOf(InvalidAgentEventError);
      const task = reply.body.result.task;
      expect(task.status.state).toBe('TASK_STATE_FAILED');
      expect(task.status.message.parts[0].text).toBe(GENERIC);
      expect((await getTask(task.id)).status.state).toBe('TASK_STATE_FAILED');
      expect(await rpc(server.url, 'GetTask', { id: 'some-other-task' })).toMatchObject({ body: { error: { code: -32001 } } });

      const healthy = await rpc(server.url, 'SendMessage', userMessage('done'));
      expect(healthy.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    });

    it('an event after a terminal state is refused and the task stays COMPLETED', async () => {
      const reply = await rpc(server.url, 'SendMessage', userMessage('after-terminal'));
      expect(await refused.promise).toBeInstanceOf(InvalidAgentEventError);
      const task = reply.body.result.task;
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      const stored = await getTask(task.id);
      expect(stored.status).toMatchObject({ state: 'TASK_STATE_COMPLETED', message: { parts: [{ text: 'done' }] } });
      expect(JSON.stringify(stored)).not.toContain('one more thing');
    });

    it('an illegal transition (INPUT_REQUIRED -> SUBMITTED) is refused and the task FAILS', async () => {
      const first = await rpc(server.url, 'SendMessage', userMessage('illegal-transition'));
      const taskId = first.body.result.task.id;
      expect(first.body.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      // (A follow-up turn cannot make this transition: the follow-up itself moves the task to WORKING.)
      const cancel = await rpc(server.url, 'CancelTask', { id: taskId });
      expect(await refused.promise).toBeInstanceOf(InvalidAgentEventError);
      // The task FAILED before the cancel could take effect, so the cancel says it lost.
      expect(cancel.body.error.code).toBe(-32002);
      expect((await getTask(taskId)).status.state).toBe('TASK_STATE_FAILED');
    });

    it('a raw publish({task}) once the task exists is refused and the task FAILS', async () => {
      const reply = await rpc(server.url, 'SendMessage', userMessage('task-after-task'));
      expect(await refused.promise).toBeInstanceOf(InvalidAgentEventError);
      expect(reply.body.result.task.status.state).toBe('TASK_STATE_FAILED');
      expect((await getTask(reply.body.result.task.id)).status.state).toBe('TASK_STATE_FAILED');
    });

    it('a Message reply once the task exists is refused and the task FAILS', async () => {
      const reply = await rpc(server.url, 'SendMessage', userMessage('message-after-task'));
      expect(await refused.promise).toBeInstanceOf(InvalidAgentEventError);
      expect(reply.body.result.message).toBeUndefined();
      expect(reply.body.result.task.status.state).toBe('TASK_STATE_FAILED');
    });
  });

  describe('direct Message replies and the task copy', () => {
    it('the first reply answers; a second one is refused; an unawaited reply still answers', async () => {
      const reply = await rpc(server.url, 'SendMessage', userMessage('double-reply'));
      expect(reply.body.result.message.parts).toEqual([{ text: 'first' }]);
      expect(await refused.promise).toBeInstanceOf(InvalidAgentEventError);
      const unawaited = await rpc(server.url, 'SendMessage', userMessage('reply-unawaited'));
      expect(unawaited.body.result.message.parts).toEqual([{ text: 'not awaited' }]);
    });

    it("the agent's ctx.task is a copy: mutating it changes neither the task nor what is stored", async () => {
      const first = await rpc(server.url, 'SendMessage', userMessage('mutates-task'));
      const taskId = first.body.result.task.id;
      const second = await rpc(server.url, 'SendMessage', userMessage('mutates-task', { taskId }));
      const task = second.body.result.task;
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.metadata).toBeUndefined();
      expect(task.history.map((m: { parts: Array<{ text: string }> }) => m.parts[0].text)).toEqual(['mutates-task', 'more?', 'mutates-task', 'done']);
      expect(await getTask(taskId)).toEqual(task);
    });
  });

  describe('execute() that does not finish the turn', () => {
    it('returning without an interrupted or terminal state FAILS the task with the generic message', async () => {
      const reply = await rpc(server.url, 'SendMessage', userMessage('return-early'));
      const task = reply.body.result.task;
      expect(task.status).toMatchObject({ state: 'TASK_STATE_FAILED', message: { role: 'ROLE_AGENT', parts: [{ text: GENERIC }] } });
      expect((await getTask(task.id)).status.state).toBe('TASK_STATE_FAILED');
    });

    it('returning without any event creates a FAILED task', async () => {
      const reply = await rpc(server.url, 'SendMessage', userMessage('return-without-events'));
      expect(reply.body.result.task.status.state).toBe('TASK_STATE_FAILED');
      expect((await getTask(reply.body.result.task.id)).status.state).toBe('TASK_STATE_FAILED');
    });

    it('throwing FAILS the task with the generic message (streaming too)', async () => {
      const reply = await rpc(server.url, 'SendMessage', userMessage('throws'));
      expect(reply.body.result.task.status).toMatchObject({ state: 'TASK_STATE_FAILED', message: { parts: [{ text: GENERIC }] } });
      expect(reply.text).not.toContain('boom in execute');

      const stream = await rpcStream(server.url, 'SendStreamingMessage', userMessage('throws'));
      const states = stream.events.map((e) => e.result.task?.status.state ?? e.result.statusUpdate?.status.state);
      expect(states.at(-1)).toBe('TASK_STATE_FAILED');
      expect(JSON.stringify(stream.events)).not.toContain('boom in execute');
    });
  });
});
