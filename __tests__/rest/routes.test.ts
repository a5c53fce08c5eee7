/** Every v1.0 HTTP+JSON route (§11.3, §5.3) over real HTTP: success shapes, status codes, 404/405. */
import { testCard, startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, sseFrames, userMessage } from '../helpers/http';
import { gates, restAgent, type Gates } from './agent';
import { errorInfo, openRestStream, rest, restStream, sendBody } from './helpers';

let g: Gates;
const executor = restAgent(() => g);

describe('HTTP+JSON routes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor);
  });
  afterAll(() => server.close());
  beforeEach(() => {
    g = gates();
  });
  afterEach(() => g.gate.resolve());

  const send = async (text: string, message: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) => {
    const reply = await rest(server.url, 'POST', '/message:send', { body: sendBody(text, message, extra) });
    expect(reply.status).toBe(200);
    return reply.body;
  };

  describe('POST /message:send', () => {
    it('answers a Message wrapped in {message}, as application/a2a+json', async () => {
      const reply = await rest(server.url, 'POST', '/message:send', { body: sendBody('hello') });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('application/a2a+json');
      expect(reply.body.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'hello, anonymous' }] });
      expect(reply.body.message.contextId).toEqual(expect.any(String));
      expect(reply.body.task).toBeUndefined();
    });

    it('answers a Task wrapped in {task}, after the turn ends (blocking by default)', async () => {
      const { task } = await send('report');
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(task.artifacts[0]).toMatchObject({ artifactId: 'r-1', parts: [{ text: 'line 1\n' }, { text: 'line 2\n' }] });
    });

    it('continues an input-required task', async () => {
      const { task: first } = await send('book');
      expect(first.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
      const { task: second } = await send('Friday', { taskId: first.id });
      expect(second).toMatchObject({ id: first.id, contextId: first.contextId, status: { state: 'TASK_STATE_COMPLETED' } });
    });

    it('returns at once with returnImmediately', async () => {
      const { task } = await send('long', {}, { configuration: { returnImmediately: true } });
      expect(task.status.state).toBe('TASK_STATE_WORKING');
      expect(await g.running.promise).toBe(task.id);
    });
  });

  describe('POST /message:stream', () => {
    it('streams bare StreamResponse objects, in order, and closes at the terminal state', async () => {
      const reply = await restStream(server.url, 'POST', '/message:stream', { body: sendBody('report') });
      expect(reply.status).toBe(200);
      expect(reply.headers.get('content-type')).toBe('text/event-stream');
      expect(reply.events.map((e) => Object.keys(e))).toEqual([['task'], ['artifactUpdate'], ['artifactUpdate'], ['statusUpdate']]);
      expect(reply.events[0].task.status.state).toBe('TASK_STATE_WORKING');
      expect(reply.events[3].statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
      expect(reply.eventTypes.every((t) => t === 'message')).toBe(true);
      expect(reply.events.some((e) => 'jsonrpc' in e || 'result' in e)).toBe(false);
    });

    it('a Message reply is the only event', async () => {
      const reply = await restStream(server.url, 'POST', '/message:stream', { body: sendBody('hello') });
      expect(reply.events).toEqual([{ message: expect.objectContaining({ role: 'ROLE_AGENT' }) }]);
    });
  });

  describe('GET /tasks/{id}', () => {
    it('returns the task, capped by ?historyLength', async () => {
      const { task } = await send('report');
      const full = await rest(server.url, 'GET', `/tasks/${task.id}`);
      expect(full.status).toBe(200);
      expect(full.headers.get('content-type')).toBe('application/a2a+json');
      expect(full.body).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_COMPLETED' } });
      expect(full.body.history.length).toBeGreaterThanOrEqual(2);
      const one = await rest(server.url, 'GET', `/tasks/${task.id}?historyLength=1`);
      expect(one.body.history).toHaveLength(1);
      const none = await rest(server.url, 'GET', `/tasks/${task.id}?historyLength=0`);
      expect(none.body.history).toBeUndefined();
    });

    it('TaskNotFound: 404 NOT_FOUND with ErrorInfo TASK_NOT_FOUND', async () => {
      const reply = await rest(server.url, 'GET', '/tasks/no-such-task');
      expect(reply.status).toBe(404);
      expect(reply.headers.get('content-type')).toBe('application/a2a+json');
      expect(reply.body).toEqual({
        error: {
          code: 404,
          status: 'NOT_FOUND',
          message: 'Task no-such-task not found',
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'TASK_NOT_FOUND',
              domain: 'a2a-protocol.org',
              metadata: { taskId: 'no-such-task' },
            },
          ],
        },
      });
    });

    it('decodes the id (a %-escaped one too)', async () => {
      const reply = await rest(server.url, 'GET', '/tasks/a%20b%2Fc');
      expect(reply.status).toBe(404);
      expect(errorInfo(reply.body).metadata).toEqual({ taskId: 'a b/c' });
    });
  });

  describe('GET /tasks', () => {
    it('lists with query filters; every response field present', async () => {
      const contextId = `ctx-${Date.now()}`;
      const one = (await send('report', { contextId })).task;
      const two = (await send('report', { contextId })).task;
      const reply = await rest(server.url, 'GET', `/tasks?contextId=${contextId}&pageSize=10&status=TASK_STATE_COMPLETED`);
      expect(reply.status).toBe(200);
      expect(reply.body.tasks.map((t: { id: string }) => t.id).sort()).toEqual([one.id, two.id].sort());
      expect(reply.body).toMatchObject({ nextPageToken: '', pageSize: 10, totalSize: 2 });
      for (const task of reply.body.tasks) expect(task.artifacts).toBeUndefined();
      const withArtifacts = await rest(server.url, 'GET', `/tasks?contextId=${contextId}&includeArtifacts=true&historyLength=0`);
      for (const task of withArtifacts.body.tasks) {
        expect(task.artifacts).toHaveLength(1);
        expect(task.history).toBeUndefined();
      }
    });

    it('pages with pageToken', async () => {
      const contextId = `ctx-page-${Date.now()}`;
      for (let i = 0; i < 3; i++) await send('report', { contextId });
      const first = await rest(server.url, 'GET', `/tasks?contextId=${contextId}&pageSize=2`);
      expect(first.body.tasks).toHaveLength(2);
      expect(first.body.nextPageToken).not.toBe('');
      const second = await rest(
        server.url,
        'GET',
        `/tasks?contextId=${contextId}&pageSize=2&pageToken=${encodeURIComponent(first.body.nextPageToken)}`,
      );
      expect(second.body.tasks).toHaveLength(1);
      expect(second.body.nextPageToken).toBe('');
    });
  });

  describe('POST /tasks/{id}:cancel', () => {
    it('cancels a running task (no body at all)', async () => {
      const { task } = await send('long', {}, { configuration: { returnImmediately: true } });
      await g.running.promise;
      const reply = await rest(server.url, 'POST', `/tasks/${task.id}:cancel`);
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_CANCELED' } });
    });

    it('takes {metadata} in the body, and an empty JSON body', async () => {
      const { task } = await send('long', {}, { configuration: { returnImmediately: true } });
      await g.running.promise;
      const reply = await rest(server.url, 'POST', `/tasks/${task.id}:cancel`, { body: { metadata: { reason: 'test' } } });
      expect(reply.body.status.state).toBe('TASK_STATE_CANCELED');
      // Idempotent on a canceled task; an empty body with a JSON Content-Type (the official client's) is fine.
      const again = await rest(server.url, 'POST', `/tasks/${task.id}:cancel`, { headers: { 'Content-Type': 'application/json' } });
      expect(again.status).toBe(200);
    });

    it('TaskNotCancelable on a completed task: 400 FAILED_PRECONDITION', async () => {
      const { task } = await send('report');
      const reply = await rest(server.url, 'POST', `/tasks/${task.id}:cancel`);
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ code: 400, status: 'FAILED_PRECONDITION' });
      expect(errorInfo(reply.body)).toMatchObject({ reason: 'TASK_NOT_CANCELABLE', domain: 'a2a-protocol.org' });
    });
  });

  describe.each(['GET', 'POST'])('%s /tasks/{id}:subscribe', (method) => {
    it('the task first, then its live events to the terminal state', async () => {
      const { task } = await send('long', {}, { configuration: { returnImmediately: true } });
      await g.running.promise;
      const response = await openRestStream(server.url, method, `/tasks/${task.id}:subscribe`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/event-stream');
      const events: Record<string, unknown>[] = [];
      for await (const frame of sseFrames(response)) {
        if (frame.data === undefined) continue;
        events.push(JSON.parse(frame.data));
        if (events.length === 1) g.gate.resolve();
      }
      expect(events.map((e) => Object.keys(e)[0])).toEqual(['task', 'artifactUpdate', 'statusUpdate']);
      expect(events[0]).toMatchObject({ task: { id: task.id, status: { state: 'TASK_STATE_WORKING' } } });
      expect(events[2]).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } });
    });

    it('a terminal task: 400 UNSUPPORTED_OPERATION before any event', async () => {
      const { task } = await send('report');
      const reply = await restStream(server.url, method, `/tasks/${task.id}:subscribe`);
      expect(reply.status).toBe(400);
      expect(reply.headers.get('content-type')).toBe('application/a2a+json');
      expect(errorInfo(reply.json).reason).toBe('UNSUPPORTED_OPERATION');
    });
  });

  describe('push notification configs', () => {
    const routes: [string, string][] = [
      ['POST', '/tasks/t-1/pushNotificationConfigs'],
      ['GET', '/tasks/t-1/pushNotificationConfigs'],
      ['GET', '/tasks/t-1/pushNotificationConfigs/c-1'],
      ['DELETE', '/tasks/t-1/pushNotificationConfigs/c-1'],
      ['GET', '/acme/tasks/t-1/pushNotificationConfigs/c-1'],
    ];
    it.each(routes)('%s %s: 400 PUSH_NOTIFICATION_NOT_SUPPORTED', async (method, path) => {
      const body = method === 'POST' ? { url: 'https://client.example.com/hook' } : undefined;
      const reply = await rest(server.url, method, path, { body });
      expect(reply.status).toBe(400);
      expect(reply.body.error).toMatchObject({ code: 400, status: 'FAILED_PRECONDITION' });
      expect(errorInfo(reply.body)).toMatchObject({ reason: 'PUSH_NOTIFICATION_NOT_SUPPORTED', domain: 'a2a-protocol.org' });
    });
  });

  describe('GET /extendedAgentCard', () => {
    it('UnsupportedOperation when the card does not declare one', async () => {
      const reply = await rest(server.url, 'GET', '/extendedAgentCard');
      expect(reply.status).toBe(400);
      expect(errorInfo(reply.body).reason).toBe('UNSUPPORTED_OPERATION');
    });

    it('401 with a challenge for an anonymous caller, the card for an authenticated one', async () => {
      const agentCard = { ...testCard, capabilities: { ...testCard.capabilities, extendedAgentCard: true } };
      const extendedAgentCard = { ...agentCard, name: 'Test Agent (extended)' };
      const anonymous = await startAgent(executor, { agentCard, extendedAgentCard });
      const signedIn = await startAgent(executor, {
        agentCard,
        extendedAgentCard,
        callContext: () => ({ caller: { id: 'alice', authenticated: true } }),
      });
      try {
        const refused = await rest(anonymous.url, 'GET', '/extendedAgentCard');
        expect(refused.status).toBe(401);
        expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
        expect(refused.body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
        const served = await rest(signedIn.url, 'GET', '/extendedAgentCard');
        expect(served.status).toBe(200);
        expect(served.headers.get('content-type')).toBe('application/a2a+json');
        expect(served.body.name).toBe('Test Agent (extended)');
        expect(served.body.supportedInterfaces.filter((i: { protocolVersion: string }) => i.protocolVersion === '1.0')).toEqual([
          { url: signedIn.url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
          { url: signedIn.url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        ]);
      } finally {
        await Promise.all([anonymous.close(), signedIn.close()]);
      }
    });
  });

  describe('one engine behind both bindings', () => {
    it('a task started over one binding is read, subscribed to and canceled over the other', async () => {
      const viaRest = (await send('book')).task;
      const read = await rpc(server.url, 'GetTask', { id: viaRest.id });
      expect(read.body.result).toMatchObject({ id: viaRest.id, status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
      const viaRpc = (await rpc(server.url, 'SendMessage', { ...userMessage('long'), configuration: { returnImmediately: true } })).body.result.task;
      await g.running.promise;
      expect((await rest(server.url, 'GET', `/tasks/${viaRpc.id}`)).body.status.state).toBe('TASK_STATE_WORKING');
      const response = await openRestStream(server.url, 'GET', `/tasks/${viaRpc.id}:subscribe`);
      const frames = sseFrames(response);
      expect(JSON.parse((await frames.next()).value!.data!)).toMatchObject({ task: { id: viaRpc.id } });
      const canceled = await rest(server.url, 'POST', `/tasks/${viaRpc.id}:cancel`);
      expect(canceled.body.status.state).toBe('TASK_STATE_CANCELED');
      const rest2: unknown[] = [];
      for await (const frame of frames) if (frame.data) rest2.push(JSON.parse(frame.data));
      expect(rest2.at(-1)).toMatchObject({ statusUpdate: { status: { state: 'TASK_STATE_CANCELED' } } });
      expect((await rpc(server.url, 'GetTask', { id: viaRpc.id })).body.result.status.state).toBe('TASK_STATE_CANCELED');
    });
  });

  describe('paths and methods', () => {
    it('another method on a served path: 405 with Allow, a google.rpc.Status', async () => {
      const cases: [string, string, string][] = [
        ['GET', '/message:send', 'POST, OPTIONS'],
        ['DELETE', '/tasks/t-1', 'GET, OPTIONS'],
        ['PUT', '/tasks/t-1:subscribe', 'GET, POST, OPTIONS'],
        ['PUT', '/tasks/t-1/pushNotificationConfigs', 'POST, GET, OPTIONS'],
        ['POST', '/extendedAgentCard', 'GET, OPTIONS'],
      ];
      for (const [method, path, allow] of cases) {
        const reply = await rest(server.url, method, path);
        expect([method, path, reply.status, reply.headers.get('allow')]).toEqual([method, path, 405, allow]);
        expect(reply.body.error).toMatchObject({ code: 405, status: 'UNIMPLEMENTED' });
      }
    });

    it('OPTIONS on a served path: 204 with Allow', async () => {
      const reply = await fetch(`${server.url}/tasks/t-1:cancel`, { method: 'OPTIONS' });
      expect(reply.status).toBe(204);
      expect(reply.headers.get('allow')).toBe('POST, OPTIONS');
    });

    it('a path the binding does not have: 404 NOT_FOUND', async () => {
      for (const path of ['/message:sendx', '/tasks/t-1/other', '/a/b/tasks', '/tasks/t-1/pushNotificationConfigs/c-1/x', '/tasks/t-1:cancel/x']) {
        const reply = await rest(server.url, 'GET', path);
        expect([path, reply.status]).toEqual([path, 404]);
        expect(reply.body.error).toMatchObject({ code: 404, status: 'NOT_FOUND' });
      }
    });

    it('one trailing slash is ignored, as in Express routes', async () => {
      const reply = await rest(server.url, 'GET', '/tasks/?pageSize=1');
      expect(reply.status).toBe(200);
      expect(reply.body.pageSize).toBe(1);
    });
  });
});
