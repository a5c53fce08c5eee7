/**
 * Guarantee 3: every operation resolves the task through the store with the caller's (tenant, owner)
 * scope before touching a live execution. Another owner's or tenant's task answers TaskNotFound,
 * byte-identical to an id that never existed, and nothing happens: no cancel hook, no write, the
 * running task keeps running. Over both bindings (JSON-RPC and HTTP+JSON).
 */
import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { InMemoryTaskStore, type AgentExecutor, type Task, type TaskScope } from '../../lib';
import { deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { a2aClient, BINDINGS } from '../helpers/bindings';

class CountingStore extends InMemoryTaskStore {
  writes = 0;
  override async create(scope: TaskScope, task: Task) {
    this.writes++;
    return super.create(scope, task);
  }
  override async update(scope: TaskScope, task: Task, expectedVersion: number) {
    this.writes++;
    return super.update(scope, task, expectedVersion);
  }
}

const identity = (req: Request) => ({
  caller: { id: req.get('x-user') ?? 'nobody', authenticated: true },
  tenant: req.get('x-tenant') ?? '',
});

describe.each(BINDINGS)('owner and tenant scoping over %s', (binding) => {
  let server: TestServer;
  const a2a = () => a2aClient(binding, server.url);
  let store: CountingStore;
  let cancelCalls: number;
  const release = deferred();
  let parkedId: string;
  let runningId: string;
  const alice = { 'x-user': 'alice', 'x-tenant': 't1' };

  beforeAll(async () => {
    cancelCalls = 0;
    store = new CountingStore();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        if (ctx.userText === 'park') return events.requireInput('more?');
        await events.start('working');
        await release.promise;
        await events.complete('done');
      },
      cancel() {
        cancelCalls++;
      },
    };
    server = await startAgent(executor, { taskStore: store, callContext: identity });
    parkedId = (await a2a().call('SendMessage', userMessage('park'), { headers: alice })).result.task.id;
    const running = await a2a().call('SendMessage', { ...userMessage('run'), configuration: { returnImmediately: true } }, { headers: alice });
    runningId = running.result.task.id;
    expect(running.result.task.status.state).toBe('TASK_STATE_WORKING');
  });
  afterAll(async () => {
    release.resolve();
    await server.close();
  });

  const strangers = [
    ['bob in the same tenant', { 'x-user': 'bob', 'x-tenant': 't1' }],
    ['alice in another tenant', { 'x-user': 'alice', 'x-tenant': 't2' }],
    ['an anonymous-looking caller', { 'x-user': 'nobody', 'x-tenant': '' }],
  ] as const;

  /** The raw answer (for byte identity) and its JSON-RPC error code. */
  type Attempt = (taskId: string, headers: Record<string, string>) => Promise<{ text?: string; code?: number }>;
  const unary =
    (method: string, params: (id: string) => Record<string, unknown>): Attempt =>
    async (id, headers) => {
      const reply = await a2a().call(method, params(id), { headers, id: 7 });
      return { text: reply.text, code: reply.error?.code };
    };
  const streaming =
    (method: string, params: (id: string) => Record<string, unknown>): Attempt =>
    async (id, headers) => {
      const reply = await a2a().stream(method, params(id), { headers, id: 7 });
      return { text: reply.text, code: reply.error?.code };
    };
  const attempts: Record<string, Attempt> = {
    GetTask: unary('GetTask', (id) => ({ id })),
    CancelTask: unary('CancelTask', (id) => ({ id })),
    'SendMessage follow-up': unary('SendMessage', (id) => userMessage('hijack', { taskId: id, messageId: 'fixed' })),
    'SendStreamingMessage follow-up': streaming('SendStreamingMessage', (id) => userMessage('hijack', { taskId: id, messageId: 'fixed' })),
    SubscribeToTask: streaming('SubscribeToTask', (id) => ({ id })),
  };

  describe.each(strangers)('%s', (_who, headers) => {
    it.each(Object.keys(attempts))('%s on a parked and on a running task answers exactly like a missing task, with no side effect', async (name) => {
      const writesBefore = store.writes;
      for (const taskId of [parkedId, runningId]) {
        const missing = randomUUID();
        const forOwned = await attempts[name](taskId, headers);
        const forMissing = await attempts[name](missing, headers);
        expect(forOwned.text).toBe(forMissing.text!.split(missing).join(taskId));
        expect(forOwned.code).toBe(-32001);
      }
      expect(cancelCalls).toBe(0);
      expect(store.writes).toBe(writesBefore);
      // The running task is untouched and still running; the parked one still parked.
      expect(server.router.liveExecutions).toBe(1);
      const running = await a2a().call('GetTask', { id: runningId }, { headers: alice });
      expect(running.result.status.state).toBe('TASK_STATE_WORKING');
      const parked = await a2a().call('GetTask', { id: parkedId }, { headers: alice });
      expect(parked.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(parked.result.history).toHaveLength(2);
    });

    it('ListTasks shows none of the other scope’s tasks', async () => {
      const list = await a2a().call('ListTasks', {}, { headers });
      expect(list.result).toEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
    });
  });

  it('the owner sees both tasks', async () => {
    const list = await a2a().call('ListTasks', {}, { headers: alice });
    expect(list.result.tasks.map((t: Task) => t.id).sort()).toEqual([parkedId, runningId].sort());
  });

  it('a tenant stated in params (or the REST path) that differs from the resolved tenant is refused', async () => {
    const reply = await a2a().call('GetTask', { id: parkedId, tenant: 't2' }, { headers: alice });
    expect(reply.error?.code).toBe(-32602);
    expect(reply.error?.message).toMatch(/tenant/);
  });
});
