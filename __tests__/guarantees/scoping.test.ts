/**
 * Guarantee 3: every operation resolves the task through the store with the caller's (tenant, owner)
 * scope before touching a live execution. Another owner's or tenant's task answers TaskNotFound,
 * byte-identical to an id that never existed, and nothing happens: no cancel hook, no write, the
 * running task keeps running.
 */
import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { InMemoryTaskStore, type AgentExecutor, type Task, type TaskScope } from '../../lib';
import { deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, rpcStream, userMessage } from '../helpers/http';

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

describe('owner and tenant scoping', () => {
  let server: TestServer;
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
    parkedId = (await rpc(server.url, 'SendMessage', userMessage('park'), { headers: alice })).body.result.task.id;
    const running = await rpc(server.url, 'SendMessage', { ...userMessage('run'), configuration: { returnImmediately: true } }, { headers: alice });
    runningId = running.body.result.task.id;
    expect(running.body.result.task.status.state).toBe('TASK_STATE_WORKING');
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

  type Attempt = (taskId: string, headers: Record<string, string>) => Promise<string>;
  const attempts: Record<string, Attempt> = {
    GetTask: async (id, headers) => (await rpc(server.url, 'GetTask', { id }, { headers, id: 7 })).text,
    CancelTask: async (id, headers) => (await rpc(server.url, 'CancelTask', { id }, { headers, id: 7 })).text,
    'SendMessage follow-up': async (id, headers) =>
      (await rpc(server.url, 'SendMessage', userMessage('hijack', { taskId: id, messageId: 'fixed' }), { headers, id: 7 })).text,
    'SendStreamingMessage follow-up': async (id, headers) =>
      JSON.stringify((await rpcStream(server.url, 'SendStreamingMessage', userMessage('hijack', { taskId: id, messageId: 'fixed' }), { headers, id: 7 })).json),
    SubscribeToTask: async (id, headers) => JSON.stringify((await rpcStream(server.url, 'SubscribeToTask', { id }, { headers, id: 7 })).json),
  };

  describe.each(strangers)('%s', (_who, headers) => {
    it.each(Object.keys(attempts))('%s on a parked and on a running task answers exactly like a missing task, with no side effect', async (name) => {
      const writesBefore = store.writes;
      for (const taskId of [parkedId, runningId]) {
        const missing = randomUUID();
        const forOwned = await attempts[name](taskId, headers);
        const forMissing = await attempts[name](missing, headers);
        expect(forOwned).toBe(forMissing.split(missing).join(taskId));
        expect(JSON.parse(forOwned).error.code).toBe(-32001);
      }
      expect(cancelCalls).toBe(0);
      expect(store.writes).toBe(writesBefore);
      // The running task is untouched and still running; the parked one still parked.
      expect(server.router.liveExecutions).toBe(1);
      const running = await rpc(server.url, 'GetTask', { id: runningId }, { headers: alice });
      expect(running.body.result.status.state).toBe('TASK_STATE_WORKING');
      const parked = await rpc(server.url, 'GetTask', { id: parkedId }, { headers: alice });
      expect(parked.body.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(parked.body.result.history).toHaveLength(2);
    });

    it('ListTasks shows none of the other scope’s tasks', async () => {
      const list = await rpc(server.url, 'ListTasks', {}, { headers });
      expect(list.body.result).toEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
    });
  });

  it('the owner sees both tasks', async () => {
    const list = await rpc(server.url, 'ListTasks', {}, { headers: alice });
    expect(list.body.result.tasks.map((t: Task) => t.id).sort()).toEqual([parkedId, runningId].sort());
  });

  it('a tenant stated in params that differs from the resolved tenant is refused', async () => {
    const reply = await rpc(server.url, 'GetTask', { id: parkedId, tenant: 't2' }, { headers: alice });
    expect(reply.body.error.code).toBe(-32602);
    expect(reply.body.error.message).toMatch(/tenant/);
  });
});
