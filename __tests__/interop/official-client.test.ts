/** Interop: the official @a2a-js/sdk 1.3.0 client (JSON-RPC transport) drives the server over real HTTP. */
// The SDK's CJS build requires jose v6, which is ESM-only; Jest's CommonJS runtime cannot load it and the
// client never calls it, so it is replaced by an empty module (test-environment workaround only).
jest.mock(require.resolve('jose', { paths: [require('node:path').dirname(require.resolve('@a2a-js/sdk/client'))] }), () => ({}));

import { ClientFactory, type Client } from '@a2a-js/sdk/client';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import type express from 'express';
import type { AgentExecutor } from '../../lib';
import { clientSend } from '../helpers/official-client';
import { deferred, type Deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';

let gate: Deferred<void>;
let running: Deferred<string>;

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
        running.resolve(ctx.taskId);
        await Promise.race([gate.promise, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))]);
        if (ctx.signal.aborted) return; // the engine writes CANCELED
        await events.artifact({ artifactId: 'late', text: 'late result' });
        return events.complete('long done');
      default:
        if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') return events.complete(`booked for ${ctx.userText}`);
        return events.reject('unknown request');
    }
  },
};

const send = (text: string, extra: Partial<Message> = {}, returnImmediately = false) => clientSend(text, extra, returnImmediately);

const textOf = (m: Message | undefined) => (m?.parts[0]?.content?.$case === 'text' ? m.parts[0].content.value : undefined);
const isTask = (r: Message | Task): r is Task => 'status' in r;

describe('official @a2a-js/sdk client', () => {
  let server: TestServer;
  let client: Client;
  const versions: (string | undefined)[] = [];
  const recordVersion: express.RequestHandler = (req, _res, next) => {
    if (req.method === 'POST') versions.push(req.get('a2a-version'));
    next();
  };

  beforeAll(async () => {
    server = await startAgent(executor, { before: [recordVersion] });
    // The trailing slash matters: the client resolves the relative '.well-known/agent-card.json' against it.
    client = await new ClientFactory().createFromUrl(`${server.url}/`);
  });
  afterAll(() => server.close());
  beforeEach(() => {
    gate = deferred();
    running = deferred();
  });
  afterEach(() => gate.resolve());

  it('selects the JSON-RPC 1.0 interface from the served card and sends A2A-Version: 1.0 on every call', async () => {
    expect(client.protocolVersion).toBe('1.0');
    expect(client.transport.protocolName).toBe('JSONRPC');
    await client.sendMessage(send('hello'));
    expect(versions.length).toBeGreaterThan(0);
    expect(new Set(versions)).toEqual(new Set(['1.0']));
  });

  it('sendMessage: a direct Message reply', async () => {
    const result = await client.sendMessage(send('hello'));
    expect(isTask(result)).toBe(false);
    const reply = result as Message;
    expect(reply.role).toBe(Role.ROLE_AGENT);
    expect(textOf(reply)).toBe('hello, anonymous');
    expect(reply.contextId).not.toBe('');
  });

  it('sendMessage: a completed Task with its artifact', async () => {
    const result = await client.sendMessage(send('report'));
    expect(isTask(result)).toBe(true);
    const task = result as Task;
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(task.status?.message)).toBe('report ready');
    expect(task.artifacts).toHaveLength(1);
    expect(task.artifacts[0].artifactId).toBe('r-1');
    expect(task.artifacts[0].parts.map((p) => (p.content?.$case === 'text' ? p.content.value : ''))).toEqual(['line 1\n', 'line 2\n']);
  });

  it('a two-turn input-required task', async () => {
    const first = (await client.sendMessage(send('book'))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(textOf(first.status?.message)).toBe('which day?');
    const second = (await client.sendMessage(send('Friday', { taskId: first.id }))) as Task;
    expect(second.id).toBe(first.id);
    expect(second.contextId).toBe(first.contextId);
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(textOf(second.status?.message)).toBe('booked for Friday');
  });

  it('sendMessageStream: every event, in order, the last one completed', async () => {
    const cases: string[] = [];
    const states: TaskState[] = [];
    for await (const event of client.sendMessageStream(send('report'))) {
      const payload = event.payload!;
      cases.push(payload.$case);
      if (payload.$case === 'task') states.push(payload.value.status!.state);
      if (payload.$case === 'statusUpdate') states.push(payload.value.status!.state);
    }
    expect(cases).toEqual(['task', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
    expect(states).toEqual([TaskState.TASK_STATE_WORKING, TaskState.TASK_STATE_COMPLETED]);
  });

  it('sendMessageStream: a Message reply is the only event', async () => {
    const cases: string[] = [];
    for await (const event of client.sendMessageStream(send('hello'))) cases.push(event.payload!.$case);
    expect(cases).toEqual(['message']);
  });

  it('getTask, with historyLength, and TaskNotFoundError for an unknown id', async () => {
    const created = (await client.sendMessage(send('report'))) as Task;
    const fetched = await client.getTask({ tenant: '', id: created.id });
    expect(fetched.id).toBe(created.id);
    expect(fetched.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(fetched.history.length).toBeGreaterThanOrEqual(2);
    const short = await client.getTask({ tenant: '', id: created.id, historyLength: 1 });
    expect(short.history).toHaveLength(1);
    await expect(client.getTask({ tenant: '', id: 'no-such-task' })).rejects.toMatchObject({ name: 'TaskNotFoundError' });
  });

  it('listTasks', async () => {
    const contextId = `ctx-list-${Date.now()}`;
    const one = (await client.sendMessage(send('report', { contextId }))) as Task;
    const two = (await client.sendMessage(send('report', { contextId }))) as Task;
    const page = await client.listTasks({
      tenant: '',
      contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageToken: '',
      statusTimestampAfter: undefined,
      pageSize: 10,
    });
    expect(page.tasks.map((t) => t.id).sort()).toEqual([one.id, two.id].sort());
    expect(page.totalSize).toBe(2);
    expect(page.pageSize).toBe(10);
    expect(page.nextPageToken).toBe('');
    for (const task of page.tasks) expect(task.artifacts).toEqual([]);
  });

  it('cancelTask on a running task', async () => {
    const created = (await client.sendMessage(send('long', {}, true))) as Task;
    expect(created.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    expect(await running.promise).toBe(created.id);
    const canceled = await client.cancelTask({ tenant: '', id: created.id, metadata: undefined });
    expect(canceled.id).toBe(created.id);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await client.getTask({ tenant: '', id: created.id })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ tenant: '', id: created.id, metadata: undefined })).resolves.toMatchObject({ id: created.id });
  });

  it('resubscribeTask to a running task: the current task first, then the live events to completion', async () => {
    const created = (await client.sendMessage(send('long', {}, true))) as Task;
    await running.promise;
    const stream = client.resubscribeTask({ tenant: '', id: created.id });
    const first = await stream.next();
    expect(first.done).toBe(false);
    const snapshot = first.value!.payload!;
    expect(snapshot.$case).toBe('task');
    if (snapshot.$case === 'task') {
      expect(snapshot.value.id).toBe(created.id);
      expect(snapshot.value.status?.state).toBe(TaskState.TASK_STATE_WORKING);
    }
    gate.resolve();
    const rest: string[] = [];
    let last: TaskState | undefined;
    for (let next = await stream.next(); !next.done; next = await stream.next()) {
      const payload = next.value.payload!;
      rest.push(payload.$case);
      if (payload.$case === 'statusUpdate') last = payload.value.status?.state;
    }
    expect(rest).toEqual(['artifactUpdate', 'statusUpdate']);
    expect(last).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('resubscribeTask to a finished task fails with UnsupportedOperationError', async () => {
    const done = (await client.sendMessage(send('report'))) as Task;
    const stream = client.resubscribeTask({ tenant: '', id: done.id });
    await expect(stream.next()).rejects.toMatchObject({ name: 'UnsupportedOperationError' });
  });
});
