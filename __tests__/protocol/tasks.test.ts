/** Task queries and gated operations (§3.1.3, §3.1.4, §3.1.7-§3.1.11): GetTask, ListTasks, push config, GetExtendedAgentCard. */
import type { AgentExecutor, TaskState } from '../../lib';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';

interface Plan {
  /** Status timestamp the agent stamps on its final status (controls ListTasks order). */
  ts: string;
  state?: TaskState;
  artifact?: boolean;
}

/** Ends each task in the state and at the status timestamp the message metadata asks for. */
const executor: AgentExecutor = {
  async execute(ctx, events) {
    const plan = (ctx.userMessage.metadata ?? {}) as Partial<Plan>;
    if (plan.artifact) await events.artifact({ artifactId: 'art', text: 'payload' });
    const state = plan.state ?? 'TASK_STATE_COMPLETED';
    await events.publish({
      statusUpdate: {
        taskId: ctx.taskId,
        contextId: ctx.contextId,
        status: {
          state,
          timestamp: plan.ts ?? new Date().toISOString(),
          message: {
            messageId: `s-${ctx.taskId}`,
            role: 'ROLE_AGENT',
            parts: [{ text: `now ${state}` }],
            taskId: ctx.taskId,
            contextId: ctx.contextId,
          },
        },
      },
    });
  },
};

const at = (minute: number) => new Date(Date.UTC(2030, 0, 1, 12, minute)).toISOString();

describe('GetTask and ListTasks', () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startAgent(executor);
  });
  afterEach(() => server.close());

  async function create(plan: Plan, extra: Record<string, unknown> = {}) {
    const sent = userMessage(`task at ${plan.ts}`, { metadata: plan, ...extra });
    const reply = await rpc(server.url, 'SendMessage', sent);
    expect(reply.body.result.task).toBeDefined();
    return reply.body.result.task as { id: string; contextId: string };
  }

  const list = async (params: Record<string, unknown> = {}) => {
    const reply = await rpc(server.url, 'ListTasks', params);
    expect(reply.body.error).toBeUndefined();
    return reply.body.result;
  };

  describe('GetTask', () => {
    it('returns the stored task', async () => {
      const { id, contextId } = await create({ ts: at(1), artifact: true });
      const task = (await rpc(server.url, 'GetTask', { id })).body.result;
      expect(task).toMatchObject({ id, contextId, status: { state: 'TASK_STATE_COMPLETED', timestamp: at(1) } });
      expect(task.artifacts[0].parts[0].text).toBe('payload');
      expect(task.history.map((m: { role: string }) => m.role)).toEqual(['ROLE_USER', 'ROLE_AGENT']);
    });

    it('answers -32001 for an unknown id', async () => {
      const reply = await rpc(server.url, 'GetTask', { id: 'does-not-exist' });
      expect(reply.body.error.code).toBe(-32001);
      expect(reply.body.error.data[0]).toMatchObject({ reason: 'TASK_NOT_FOUND', domain: 'a2a-protocol.org' });
    });

    it('applies historyLength: 0 omits history, 1 keeps the newest, negative is -32602', async () => {
      const { id } = await create({ ts: at(1) });
      const none = (await rpc(server.url, 'GetTask', { id, historyLength: 0 })).body.result;
      expect(none).not.toHaveProperty('history');
      const one = (await rpc(server.url, 'GetTask', { id, historyLength: 1 })).body.result;
      expect(one.history).toHaveLength(1);
      expect(one.history[0]).toMatchObject({ role: 'ROLE_AGENT', messageId: `s-${id}` });
      const negative = await rpc(server.url, 'GetTask', { id, historyLength: -1 });
      expect(negative.body.error.code).toBe(-32602);
    });
  });

  describe('ListTasks', () => {
    it('always emits tasks, nextPageToken, pageSize and totalSize, even when empty', async () => {
      const reply = await rpc(server.url, 'ListTasks', {});
      expect(reply.body.result).toEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
    });

    it('sorts by status timestamp, newest first', async () => {
      const b = await create({ ts: at(2) });
      const d = await create({ ts: at(4) });
      const a = await create({ ts: at(1) });
      const c = await create({ ts: at(3) });
      const page = await list();
      expect(page.tasks.map((t: { id: string }) => t.id)).toEqual([d.id, c.id, b.id, a.id]);
      expect(page).toMatchObject({ nextPageToken: '', pageSize: 50, totalSize: 4 });
    });

    it('defaults pageSize to 50', async () => {
      for (let i = 0; i < 51; i++) await create({ ts: at(i) });
      const first = await list();
      expect(first.pageSize).toBe(50);
      expect(first.tasks).toHaveLength(50);
      expect(first.totalSize).toBe(51);
      expect(first.nextPageToken).not.toBe('');
      const second = await list({ pageToken: first.nextPageToken });
      expect(second.tasks).toHaveLength(1);
      expect(second.tasks[0].status.timestamp).toBe(at(0));
      expect(second.nextPageToken).toBe('');
    });

    it('pages through 5 tasks with pageSize 2 in 3 pages, every task exactly once', async () => {
      const created = [];
      for (const minute of [5, 1, 4, 2, 3]) created.push((await create({ ts: at(minute) })).id);
      const seen: string[] = [];
      const tokens: string[] = [];
      let token: string | undefined;
      let pages = 0;
      do {
        const page = await list({ pageSize: 2, ...(token ? { pageToken: token } : {}) });
        pages++;
        expect(page.pageSize).toBe(2);
        expect(page.totalSize).toBe(5);
        expect(typeof page.nextPageToken).toBe('string');
        seen.push(...page.tasks.map((t: { id: string }) => t.id));
        token = page.nextPageToken;
        tokens.push(page.nextPageToken);
      } while (token && pages < 10);
      expect(pages).toBe(3);
      expect(tokens[2]).toBe('');
      expect(seen).toHaveLength(5);
      expect(new Set(seen)).toEqual(new Set(created));
      // Newest first across pages.
      const stamps = [];
      for (const id of seen) stamps.push((await rpc(server.url, 'GetTask', { id })).body.result.status.timestamp);
      expect(stamps).toEqual([at(5), at(4), at(3), at(2), at(1)]);
    });

    it('filters by contextId', async () => {
      const one = await create({ ts: at(1) }, { contextId: 'ctx-a' });
      await create({ ts: at(2) }, { contextId: 'ctx-b' });
      const two = await create({ ts: at(3) }, { contextId: 'ctx-a' });
      const page = await list({ contextId: 'ctx-a' });
      expect(page.tasks.map((t: { id: string }) => t.id)).toEqual([two.id, one.id]);
      expect(page.totalSize).toBe(2);
    });

    it('filters by status', async () => {
      await create({ ts: at(1), state: 'TASK_STATE_COMPLETED' });
      const waiting = await create({ ts: at(2), state: 'TASK_STATE_INPUT_REQUIRED' });
      await create({ ts: at(3), state: 'TASK_STATE_FAILED' });
      const page = await list({ status: 'TASK_STATE_INPUT_REQUIRED' });
      expect(page.tasks.map((t: { id: string }) => t.id)).toEqual([waiting.id]);
      expect(page.totalSize).toBe(1);
      expect((await list({ status: 'TASK_STATE_WORKING' })).tasks).toEqual([]);
    });

    it('filters by statusTimestampAfter, inclusively', async () => {
      await create({ ts: at(1) });
      const two = await create({ ts: at(2) });
      const three = await create({ ts: at(3) });
      const page = await list({ statusTimestampAfter: at(2) });
      expect(page.tasks.map((t: { id: string }) => t.id)).toEqual([three.id, two.id]);
      expect(page.totalSize).toBe(2);
    });

    it('omits artifacts unless includeArtifacts is true', async () => {
      await create({ ts: at(1), artifact: true });
      const plain = await list();
      expect(plain.tasks[0]).not.toHaveProperty('artifacts');
      const explicitFalse = await list({ includeArtifacts: false });
      expect(explicitFalse.tasks[0]).not.toHaveProperty('artifacts');
      const withArtifacts = await list({ includeArtifacts: true });
      expect(withArtifacts.tasks[0].artifacts[0]).toMatchObject({ artifactId: 'art', parts: [{ text: 'payload' }] });
    });

    it('applies historyLength to each listed task', async () => {
      await create({ ts: at(1) });
      expect((await list({ historyLength: 0 })).tasks[0]).not.toHaveProperty('history');
      expect((await list({ historyLength: 1 })).tasks[0].history).toHaveLength(1);
    });

    // LIBRARY BUG (lib/engine/task-reducer.ts (status) stores the agent's status.timestamp verbatim;
    // stores/task-store.ts compares timestamps as strings): a timestamp published with an offset is
    // emitted with that offset (§5.6.1: MUST be UTC with 'Z') and sorted by its text, not its instant
    // (§3.1.4: newest status timestamp first).
    it('normalises agent timestamps with an offset to UTC and orders by instant', async () => {
      const offset = await create({ ts: '2030-01-01T13:30:00+01:00' }); // 12:30Z
      const later = await create({ ts: at(45) }); // 12:45Z
      const fetched = (await rpc(server.url, 'GetTask', { id: offset.id })).body.result;
      expect(fetched.status.timestamp).toMatch(/Z$/);
      expect(new Date(fetched.status.timestamp).toISOString()).toBe(at(30));
      const page = await list();
      expect(page.tasks.map((t: { id: string }) => t.id)).toEqual([later.id, offset.id]);
    });

    it('answers -32602 for a page token it did not issue', async () => {
      await create({ ts: at(1) });
      const reply = await rpc(server.url, 'ListTasks', { pageToken: 'not-a-real-token' });
      expect(reply.body.error.code).toBe(-32602);
    });

    it.each([0, 101, -5])('answers -32602 for pageSize %d', async (pageSize) => {
      const reply = await rpc(server.url, 'ListTasks', { pageSize });
      expect(reply.body.error.code).toBe(-32602);
    });

    it('accepts pageSize 1 and 100', async () => {
      expect((await list({ pageSize: 1 })).pageSize).toBe(1);
      expect((await list({ pageSize: 100 })).pageSize).toBe(100);
    });
  });
});

describe('push notification config methods without pushNotifications capability', () => {
  it.each([
    ['CreateTaskPushNotificationConfig', { taskId: 't-1', url: 'https://client.example.com/hook' }],
    ['GetTaskPushNotificationConfig', { taskId: 't-1', id: 'c-1' }],
    ['ListTaskPushNotificationConfigs', { taskId: 't-1' }],
    ['DeleteTaskPushNotificationConfig', { taskId: 't-1', id: 'c-1' }],
  ])('%s answers -32003', async (method, params) => {
    const server = await startAgent(executor);
    try {
      const reply = await rpc(server.url, method, params);
      expect(reply.body.error.code).toBe(-32003);
      expect(reply.body.error.data[0]).toMatchObject({ reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED', domain: 'a2a-protocol.org' });
    } finally {
      await server.close();
    }
  });
});

describe('GetExtendedAgentCard', () => {
  const declaring = { ...testCard, capabilities: { ...testCard.capabilities, extendedAgentCard: true } };
  const extended = { ...testCard, name: 'Test Agent (extended)', capabilities: { ...testCard.capabilities, extendedAgentCard: true } };
  const alice = () => ({ caller: { id: 'alice', authenticated: true } });

  it('answers -32004 when the card does not declare an extended card', async () => {
    const server = await startAgent(executor, { extendedAgentCard: extended, callContext: alice });
    try {
      const reply = await rpc(server.url, 'GetExtendedAgentCard', {});
      expect(reply.body.error.code).toBe(-32004);
      expect(reply.body.error.data[0]).toMatchObject({ reason: 'UNSUPPORTED_OPERATION' });
    } finally {
      await server.close();
    }
  });

  it('answers -32007 when declared but not configured', async () => {
    const server = await startAgent(executor, { agentCard: declaring, callContext: alice });
    try {
      const reply = await rpc(server.url, 'GetExtendedAgentCard', {});
      expect(reply.body.error.code).toBe(-32007);
      expect(reply.body.error.data[0]).toMatchObject({ reason: 'EXTENDED_AGENT_CARD_NOT_CONFIGURED' });
    } finally {
      await server.close();
    }
  });

  it('serves the extended card to an authenticated caller (params may be omitted)', async () => {
    const server = await startAgent(executor, { agentCard: declaring, extendedAgentCard: extended, callContext: alice });
    try {
      const reply = await rpc(server.url, 'GetExtendedAgentCard', {});
      expect(reply.status).toBe(200);
      expect(reply.body.result.name).toBe('Test Agent (extended)');
      const noParams = await rpc(server.url, 'GetExtendedAgentCard', undefined);
      expect(noParams.body.result.name).toBe('Test Agent (extended)');
    } finally {
      await server.close();
    }
  });

  it('answers an anonymous caller with HTTP 401 and a WWW-Authenticate challenge', async () => {
    const server = await startAgent(executor, { agentCard: declaring, extendedAgentCard: extended });
    try {
      const reply = await rpc(server.url, 'GetExtendedAgentCard', {});
      expect(reply.status).toBe(401);
      expect(reply.headers.get('www-authenticate')).toBeTruthy();
      expect(reply.body.result).toBeUndefined();
      expect(reply.text).not.toContain('(extended)');
    } finally {
      await server.close();
    }
  });
});
