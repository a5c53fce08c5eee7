/**
 * The whole scoping matrix through the real a2aAuth (bearer JWT, anonymous session keys) and
 * a2aTenant in front of the router: alice, bob and an anonymous session each own a running and a
 * parked task in tenants t1 and t2; every other (caller, tenant) tries every method on each task and
 * gets exactly the answer of an id that never existed, with no side effect anywhere.
 */
import { randomUUID } from 'node:crypto';
import { InMemoryTaskStore, type AgentExecutor, type Task, type TaskScope } from '../../lib';
import { a2aAuth, a2aTenant, bearerJwt, header } from '../../lib/middleware';
import { deferred, until } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { V1, rpc, userMessage } from '../helpers/http';
import { HS_SECRET, signToken } from './helpers';

type Headers = Record<string, string>;

/** Counts create/update calls per (tenant, owner) partition. */
class PartitionCountingStore extends InMemoryTaskStore {
  readonly writes = new Map<string, number>();
  #count(scope: TaskScope) {
    const key = `${scope.tenant}/${scope.owner}`;
    this.writes.set(key, (this.writes.get(key) ?? 0) + 1);
  }
  override async create(scope: TaskScope, task: Task) {
    this.#count(scope);
    return super.create(scope, task);
  }
  override async update(scope: TaskScope, task: Task, expectedVersion: number) {
    this.#count(scope);
    return super.update(scope, task, expectedVersion);
  }
}

const OWNERS = ['alice', 'bob', 'anonymous'] as const;
const TENANTS = ['t1', 't2'] as const;
const STATES = ['running', 'parked'] as const;
type Owner = (typeof OWNERS)[number];
type Tenant = (typeof TENANTS)[number];
type State = (typeof STATES)[number];

/** One cell owner: a (caller, tenant) pair; the extra anonymous callers own nothing. */
const principalName = (caller: string, tenant: Tenant) => `${caller}@${tenant}`;
const OWNING = OWNERS.flatMap((owner) => TENANTS.map((tenant) => principalName(owner, tenant)));
const ATTACKERS_ONLY = ['anonymous without a session', 'another anonymous session'].flatMap((caller) =>
  TENANTS.map((tenant) => principalName(caller, tenant)),
);
const TASKS = OWNERS.flatMap((owner) => TENANTS.flatMap((tenant) => STATES.map((state) => ({ owner, tenant, state }))));
const taskLabel = ({ owner, tenant, state }: { owner: Owner; tenant: Tenant; state: State }) => `${owner}'s ${state} task in ${tenant}`;

const TASK_METHODS = ['GetTask', 'CancelTask', 'SendMessage follow-up', 'SendStreamingMessage follow-up', 'SubscribeToTask'] as const;
type TaskMethod = (typeof TASK_METHODS)[number];

/** JSON-RPC method and params of each attempt; the messageId is fixed so answers can be compared. */
function request(method: TaskMethod, taskId: string): { method: string; params: unknown } {
  switch (method) {
    case 'GetTask':
    case 'CancelTask':
    case 'SubscribeToTask':
      return { method, params: { id: taskId } };
    case 'SendMessage follow-up':
      return { method: 'SendMessage', params: userMessage('hijack', { taskId, messageId: 'm-fixed' }) };
    case 'SendStreamingMessage follow-up':
      return { method: 'SendStreamingMessage', params: userMessage('hijack', { taskId, messageId: 'm-fixed' }) };
  }
}

const PUSH_METHODS = [
  ['CreateTaskPushNotificationConfig', (taskId: string) => ({ taskId, configId: 'c1', config: { url: 'https://hooks.example.com/a2a' } })],
  ['GetTaskPushNotificationConfig', (taskId: string) => ({ taskId, id: 'c1' })],
  ['ListTaskPushNotificationConfigs', (taskId: string) => ({ taskId })],
  ['DeleteTaskPushNotificationConfig', (taskId: string) => ({ taskId, id: 'c1' })],
] as const;

interface Answer {
  readonly status: number;
  readonly headers: [string, string][];
  readonly text: string;
}

describe('scoping matrix: 3 callers × 2 tenants × every method, through a2aAuth + a2aTenant', () => {
  let server: TestServer;
  let store: PartitionCountingStore;
  const release = deferred();
  const signals = new Map<string, AbortSignal>();
  const principals: Record<string, Headers> = {};
  const taskIds = new Map<string, string>();
  let executeCalls = 0;
  let cancelCalls = 0;
  let writesAfterSetup: Map<string, number>;
  let observersAfterSetup: number;
  let tasksAfterSetup: Record<string, Task>;

  const executor: AgentExecutor = {
    async execute(ctx, events) {
      executeCalls++;
      if (ctx.userText === 'park') return events.requireInput('more?');
      if (ctx.userText !== 'run') return events.reject('not part of this test');
      signals.set(ctx.taskId, ctx.signal);
      await events.start('working');
      await Promise.race([release.promise, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))]);
      if (!ctx.signal.aborted) await events.complete('done');
    },
    async cancel(_ctx, events) {
      cancelCalls++;
      await events.canceled();
    },
  };

  /** One POST; an SSE answer is not read to its end (a running task's stream would wait for the gate). */
  async function call(method: string, params: unknown, headers: Headers): Promise<Answer> {
    const streaming = method === 'SendStreamingMessage' || method === 'SubscribeToTask';
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...V1, ...(streaming ? { Accept: 'text/event-stream' } : {}), ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params }),
      signal: AbortSignal.timeout(5_000),
    });
    const kept = [...response.headers].filter(([name]) => name !== 'date');
    if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      await response.body?.cancel();
      return { status: response.status, headers: kept, text: '<an event stream was opened>' };
    }
    return { status: response.status, headers: kept, text: await response.text() };
  }

  /** The answer for an id that never existed, per principal and method, with the id swapped for `taskId`. */
  const missingId = randomUUID();
  const missingAnswers = new Map<string, Promise<Answer>>();
  async function answerForMissing(principal: string, method: TaskMethod, taskId: string): Promise<Answer> {
    const key = `${principal} ${method}`;
    if (!missingAnswers.has(key)) {
      const { method: rpcMethod, params } = request(method, missingId);
      missingAnswers.set(key, call(rpcMethod, params, principals[principal]));
    }
    const answer = await missingAnswers.get(key)!;
    const swap = (text: string) => text.split(missingId).join(taskId);
    return { ...answer, text: swap(answer.text), headers: answer.headers.map(([name, value]) => [name, swap(value)]) };
  }

  const ownerOf = (task: (typeof TASKS)[number]) => principals[principalName(task.owner, task.tenant)];

  /** Every task as its owner sees it with GetTask, by label. */
  async function ownersView(): Promise<Record<string, Task>> {
    const view: Record<string, Task> = {};
    for (const task of TASKS) {
      view[taskLabel(task)] = (await rpc(server.url, 'GetTask', { id: taskIds.get(taskLabel(task)) }, { headers: ownerOf(task) })).body.result;
    }
    return view;
  }

  beforeAll(async () => {
    store = new PartitionCountingStore();
    server = await startAgent(executor, {
      taskStore: store,
      before: [
        a2aAuth({ user: bearerJwt({ key: HS_SECRET }), allowAnonymous: { sessionHeader: 'X-Anonymous-Session' } }),
        a2aTenant({ from: header('x-tenant-id') }),
      ],
    });
    const callers: Record<string, Headers> = {
      alice: { authorization: `Bearer ${await signToken({ sub: 'alice' })}` },
      bob: { authorization: `Bearer ${await signToken({ sub: 'bob' })}` },
      anonymous: { 'x-anonymous-session': `session-A-${'a'.repeat(32)}` },
      'anonymous without a session': {},
      'another anonymous session': { 'x-anonymous-session': `session-B-${'b'.repeat(32)}` },
    };
    for (const [caller, headers] of Object.entries(callers)) {
      for (const tenant of TENANTS) principals[principalName(caller, tenant)] = { ...headers, 'x-tenant-id': tenant };
    }
    for (const task of TASKS) {
      const params = task.state === 'parked' ? userMessage('park') : { ...userMessage('run'), configuration: { returnImmediately: true } };
      const reply = await rpc(server.url, 'SendMessage', params, { headers: ownerOf(task) });
      expect(reply.body.result.task.status.state).toBe(task.state === 'parked' ? 'TASK_STATE_INPUT_REQUIRED' : 'TASK_STATE_WORKING');
      taskIds.set(taskLabel(task), reply.body.result.task.id);
    }
    await until(() => signals.size === 6, 'six running tasks');
    writesAfterSetup = new Map(store.writes);
    observersAfterSetup = server.router.liveObservers;
    tasksAfterSetup = await ownersView();
    for (const task of TASKS) {
      const state = tasksAfterSetup[taskLabel(task)].status.state;
      expect(state).toBe(task.state === 'parked' ? 'TASK_STATE_INPUT_REQUIRED' : 'TASK_STATE_WORKING');
    }
    // Three owners in two tenants: six partitions, none shared.
    expect(writesAfterSetup.size).toBe(6);
  });

  afterAll(async () => {
    release.resolve();
    await until(() => server.router.liveExecutions === 0, 'running tasks finished');
    await server.close();
  });

  /** Nothing happened anywhere: no hook, no turn, no write, the running tasks still live and working. */
  async function expectNoSideEffect(): Promise<void> {
    expect(cancelCalls).toBe(0);
    expect(executeCalls).toBe(TASKS.length);
    expect(store.writes).toEqual(writesAfterSetup);
    expect(server.router.liveExecutions).toBe(6);
    expect(server.router.liveObservers).toBe(observersAfterSetup);
    expect([...signals.values()].filter((signal) => signal.aborted)).toEqual([]);
    expect(await ownersView()).toEqual(tasksAfterSetup);
  }

  describe.each(TASKS.map((task) => [taskLabel(task), task] as const))('%s', (label, task) => {
    const attackers = [...OWNING, ...ATTACKERS_ONLY].filter((name) => name !== principalName(task.owner, task.tenant));

    it(`every other caller and tenant (${attackers.length}) gets a missing task's answer for every method, with no side effect`, async () => {
      const taskId = taskIds.get(label)!;
      const mismatches: string[] = [];
      await Promise.all(
        attackers.flatMap((attacker) =>
          TASK_METHODS.map(async (method) => {
            const { method: rpcMethod, params } = request(method, taskId);
            const forTask = await call(rpcMethod, params, principals[attacker]);
            const forMissing = await answerForMissing(attacker, method, taskId);
            const code = (() => {
              try {
                return JSON.parse(forTask.text).error?.code;
              } catch {
                return undefined;
              }
            })();
            if (JSON.stringify(forTask) !== JSON.stringify(forMissing) || code !== -32001) {
              mismatches.push(`${attacker} ${method}: ${forTask.status} ${forTask.text} ≠ ${forMissing.status} ${forMissing.text}`);
            }
          }),
        ),
      );
      expect(mismatches).toEqual([]);
      await expectNoSideEffect();
    });
  });

  it('push config methods answer PushNotificationNotSupported (-32003) identically for owned, foreign and missing tasks', async () => {
    const replies = new Set<string>();
    const ids = [...taskIds.values(), missingId];
    // An authenticated owner, an anonymous owner and a caller owning nothing, on all twelve tasks.
    const askers = ['alice@t1', 'anonymous@t2', 'anonymous without a session@t1'].map((name) => principals[name]);
    await Promise.all(
      askers.flatMap((headers) =>
        PUSH_METHODS.flatMap(([method, params]) =>
          ids.map(async (taskId) => {
            const answer = await call(method, params(taskId), headers);
            expect(JSON.parse(answer.text).error.code).toBe(-32003);
            replies.add(JSON.stringify(answer));
          }),
        ),
      ),
    );
    // One answer for every caller, method and task: the task id is not even looked at.
    expect(replies.size).toBe(1);
    await expectNoSideEffect();
  });

  it.each([...OWNING, ...ATTACKERS_ONLY])('ListTasks for %s shows exactly its own tasks in its tenant', async (principal) => {
    const reply = await rpc(server.url, 'ListTasks', {}, { headers: principals[principal] });
    const own = TASKS.filter((task) => principalName(task.owner, task.tenant) === principal).map((task) => taskIds.get(taskLabel(task)));
    expect(reply.body.result.tasks.map((t: Task) => t.id).sort()).toEqual(own.sort());
  });

  it('the owners still reach their tasks: the running ones finish when released, a parked one cancels through the hook', async () => {
    await expectNoSideEffect();
    release.resolve();
    await until(() => server.router.liveExecutions === 0, 'running tasks finished');
    for (const task of TASKS.filter((t) => t.state === 'running')) {
      const reply = await rpc(server.url, 'GetTask', { id: taskIds.get(taskLabel(task)) }, { headers: ownerOf(task) });
      expect(reply.body.result.status.state).toBe('TASK_STATE_COMPLETED');
    }
    const parked = TASKS.find((t) => t.state === 'parked' && t.owner === 'anonymous' && t.tenant === 't2')!;
    const canceled = await rpc(server.url, 'CancelTask', { id: taskIds.get(taskLabel(parked)) }, { headers: ownerOf(parked) });
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
    expect(cancelCalls).toBe(1);
  });
});
