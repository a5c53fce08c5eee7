/**
 * Who can reach whose tasks when a2aAuth (with anonymous access on) and a2aTenant run in front of the
 * real router: authenticated users, anonymous session holders and per-request anonymous callers
 * never see each other's tasks; only the owner (in the owner's tenant) does.
 */
import { randomUUID } from 'node:crypto';
import type { AgentExecutor, Task } from '../../lib';
import { a2aAuth, a2aTenant, bearerJwt, header } from '../../lib/middleware';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { HS_SECRET, signToken } from './helpers';

type Headers = Record<string, string>;

const executor: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.task) await events.complete(`done: ${ctx.userText}`);
    else await events.requireInput('more?');
  },
};

describe('task scoping with a2aAuth + a2aTenant in front of the router', () => {
  let server: TestServer;
  const principals: Record<string, Headers> = {};
  const tasks: Record<string, string> = {};

  beforeAll(async () => {
    server = await startAgent(executor, {
      agentCard: { ...testCard, capabilities: { streaming: true, extendedAgentCard: true } },
      extendedAgentCard: { ...testCard, description: 'for signed-in callers' },
      before: [
        a2aAuth({ user: bearerJwt({ key: HS_SECRET }), allowAnonymous: { sessionHeader: 'X-Anonymous-Session' } }),
        a2aTenant({ from: header('x-tenant'), required: false }),
      ],
    });
    principals.alice = { authorization: `Bearer ${await signToken({ sub: 'alice' })}`, 'x-tenant': 't1' };
    principals.bob = { authorization: `Bearer ${await signToken({ sub: 'bob' })}`, 'x-tenant': 't1' };
    principals['anonymous session A'] = { 'x-anonymous-session': `A-${'a'.repeat(40)}`, 'x-tenant': 't1' };
    principals['anonymous session B'] = { 'x-anonymous-session': `B-${'b'.repeat(40)}`, 'x-tenant': 't1' };
    principals['anonymous, no session'] = { 'x-tenant': 't1' };
    for (const [name, headers] of Object.entries(principals)) {
      const reply = await rpc(server.url, 'SendMessage', userMessage(`task of ${name}`), { headers });
      expect(reply.body.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      tasks[name] = reply.body.result.task.id;
    }
  });
  afterAll(() => server.close());

  const owners = ['alice', 'bob', 'anonymous session A', 'anonymous session B', 'anonymous, no session'];
  const pairs = owners.flatMap((owner) => owners.filter((other) => other !== owner).map((other) => [owner, other] as const));

  it.each(pairs)("%s's task is invisible to %s: GetTask, CancelTask and a follow-up answer like a missing task", async (owner, other) => {
    const taskId = tasks[owner];
    const missing = randomUUID();
    const headers = principals[other];
    const calls = [
      (id: string) => rpc(server.url, 'GetTask', { id }, { headers, id: 1 }),
      (id: string) => rpc(server.url, 'CancelTask', { id }, { headers, id: 1 }),
      (id: string) => rpc(server.url, 'SendMessage', userMessage('hijack', { taskId: id, messageId: 'm-fixed' }), { headers, id: 1 }),
    ];
    for (const call of calls) {
      const forOwned = (await call(taskId)).text;
      const forMissing = (await call(missing)).text;
      expect(forOwned).toBe(forMissing.split(missing).join(taskId));
      expect(JSON.parse(forOwned).error.code).toBe(-32001);
    }
    const list = await rpc(server.url, 'ListTasks', {}, { headers });
    expect(list.body.result.tasks.map((task: Task) => task.id)).not.toContain(taskId);
  });

  it.each(['alice', 'bob', 'anonymous session A', 'anonymous session B'])('%s lists and reads exactly its own task', async (owner) => {
    const headers = principals[owner];
    const list = await rpc(server.url, 'ListTasks', {}, { headers });
    expect(list.body.result.tasks.map((task: Task) => task.id)).toEqual([tasks[owner]]);
    expect((await rpc(server.url, 'GetTask', { id: tasks[owner] }, { headers })).body.result.id).toBe(tasks[owner]);
  });

  it('a per-request anonymous caller cannot come back to its own task (documented: use a session key)', async () => {
    const headers = principals['anonymous, no session'];
    expect((await rpc(server.url, 'GetTask', { id: tasks['anonymous, no session'] }, { headers })).body.error.code).toBe(-32001);
    expect((await rpc(server.url, 'ListTasks', {}, { headers })).body.result.tasks).toEqual([]);
  });

  it('the owner in another tenant does not see the task, and a params.tenant that contradicts the resolved one is refused', async () => {
    const elsewhere = { ...principals.alice, 'x-tenant': 't2' };
    expect((await rpc(server.url, 'GetTask', { id: tasks.alice }, { headers: elsewhere })).body.error.code).toBe(-32001);
    expect((await rpc(server.url, 'ListTasks', {}, { headers: elsewhere })).body.result.tasks).toEqual([]);
    const contradicting = await rpc(server.url, 'GetTask', { id: tasks.alice, tenant: 't2' }, { headers: principals.alice });
    expect(contradicting.body.error.code).toBe(-32602);
    expect(contradicting.body.error.message).toMatch(/tenant/);
    const agreeing = await rpc(server.url, 'GetTask', { id: tasks.alice, tenant: 't1' }, { headers: principals.alice });
    expect(agreeing.body.result.id).toBe(tasks.alice);
  });

  it('the owner can continue its task', async () => {
    const headers = principals['anonymous session A'];
    const reply = await rpc(server.url, 'SendMessage', userMessage('go', { taskId: tasks['anonymous session A'] }), { headers });
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('the extended agent card needs an authenticated caller', async () => {
    const anonymous = await rpc(server.url, 'GetExtendedAgentCard', {}, { headers: principals['anonymous session B'] });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe(-32600);
    const signedIn = await rpc(server.url, 'GetExtendedAgentCard', {}, { headers: principals.bob });
    expect(signedIn.body.result.description).toBe('for signed-in callers');
  });

  it('a missing or bad token never reaches the router', async () => {
    const bad = await rpc(server.url, 'ListTasks', {}, { headers: { authorization: 'Bearer nope.nope.nope' }, id: 4 });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer realm="a2a", error="invalid_token"/);
    expect(bad.body.error.data[0].reason).toBe('A2A_AUTH_INVALID');
  });
});
