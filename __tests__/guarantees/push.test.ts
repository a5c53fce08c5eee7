/**
 * The guarantees, for push notifications, over both bindings (and, through the jest projects, on
 * Express 4 and 5, through a slow store, on the Redis store and on Node 24): each delivery runs in
 * the async context of the request whose message produced its event, follow-ups included; another
 * owner's or tenant's task and configs answer exactly like missing ones, with no side effect; once
 * a task ended and its events were delivered, nothing of it is left in memory (deliveries, configs,
 * executions, observers).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type express from 'express';
import { InMemoryPushConfigStore, InMemoryPushOutbox, type A2ATaskEventInfo, type Logger } from '../../lib';
import { deferred, until, type Deferred } from '../helpers/async';
import { a2aClient, BINDINGS } from '../helpers/bindings';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { pushAgent, pushCall } from '../push/helpers';
import { startReceiver, type Receiver } from '../push/receiver';

const als = new AsyncLocalStorage<string>();
/** The host app's own per-request value: the `x-turn` header, in its own AsyncLocalStorage. */
const fromHeader: express.RequestHandler = (req, _res, next) => als.run(req.get('x-turn') ?? 'none', next);

describe.each(BINDINGS)('push guarantees over %s', (binding) => {
  let gate: Deferred<void>;
  let server: TestServer;
  let receiver: Receiver;
  const configs = new InMemoryPushConfigStore();
  const outbox = new InMemoryPushOutbox();
  const committed: (A2ATaskEventInfo & { turn: string | undefined })[] = [];
  const attempts: { taskId: unknown; version: unknown; turn: string | undefined }[] = [];
  const logger: Logger = {
    debug: (fields: unknown, message?: string) => {
      if (message !== 'push notification attempt') return;
      const { taskId, version } = fields as { taskId: unknown; version: unknown };
      attempts.push({ taskId, version, turn: als.getStore() });
    },
    info: () => undefined,
    warn: () => undefined,
    error: () => undefined,
  } as never;
  const a2a = () => a2aClient(binding, server.url);
  const as = (user: string, tenant = 'acme', turn?: string) => ({
    'x-user': user,
    'x-tenant': tenant,
    ...(turn ? { 'x-turn': turn } : {}),
  });

  beforeAll(async () => {
    gate = deferred();
    receiver = await startReceiver();
    server = await startAgent(
      pushAgent(() => gate),
      {
        logger,
        before: [fromHeader],
        callContext: (req) => ({ caller: { id: String(req.headers['x-user']), authenticated: true }, tenant: String(req.headers['x-tenant']) }),
        onTaskEvent: (info) => committed.push({ ...info, turn: als.getStore() }),
        pushNotifications: { allow: ['127.0.0.1'], configStore: configs, outbox },
      },
    );
  });
  afterAll(async () => {
    gate.resolve();
    await server.close();
    await receiver.close();
  });

  it('delivers each event in the async context of the request whose message produced it, follow-ups included', async () => {
    const first = await a2a().call(
      'SendMessage',
      { ...userMessage('park'), configuration: { taskPushNotificationConfig: { url: receiver.url } } },
      { headers: as('alice', 'acme', 'one') },
    );
    const taskId: string = first.result.task.id;
    const second = await a2a().call('SendMessage', userMessage('friday', { taskId }), { headers: as('alice', 'acme', 'two') });
    expect(second.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const mine = committed.filter((info) => info.taskId === taskId);
    const attemptsFor = () => attempts.filter((a) => a.taskId === taskId);
    await until(() => attemptsFor().length >= mine.length, 'every event delivered');
    const delivered = attemptsFor();
    expect(new Set(mine.map((info) => info.turn))).toEqual(new Set(['one', 'two']));
    // Event by event, the delivery ran where the event was committed.
    expect(delivered.map((a) => a.turn)).toEqual(mine.map((info) => info.turn));
  });

  it("a follow-up's return to WORKING reaches the webhook, between the parked and the final state (issue 19, item 4)", async () => {
    const mine = new URL(receiver.url);
    mine.searchParams.set('follow-up', binding);
    const path = `${mine.pathname}${mine.search}`;
    const first = await a2a().call(
      'SendMessage',
      { ...userMessage('park'), configuration: { taskPushNotificationConfig: { url: mine.toString() } } },
      { headers: as('alice') },
    );
    const taskId: string = first.result.task.id;
    await a2a().call('SendMessage', userMessage('friday', { taskId }), { headers: as('alice') });
    const states = () => receiver.delivered.filter((r) => r.path === path).map((r) => (r.body.task ?? r.body.statusUpdate)?.status.state as string);
    await until(() => states().length >= 3, 'three deliveries');
    expect(states()).toEqual(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
  });

  it("answers another owner's or tenant's task and configs exactly like missing ones, and changes nothing", async () => {
    const created = await a2a().call('SendMessage', userMessage('park'), { headers: as('alice') });
    const taskId: string = created.result.task.id;
    const config = await pushCall(binding, server.url, 'CreateTaskPushNotificationConfig', { taskId, url: receiver.url }, as('alice'));
    expect(config.error).toBeUndefined();
    const configId: string = config.result.id;
    const missingTask = 'no-such-task';
    for (const stranger of [as('mallory'), as('alice', 'other-tenant')]) {
      for (const [method, params, missing] of [
        ['GetTaskPushNotificationConfig', { taskId, id: configId }, { taskId: missingTask, id: configId }],
        ['ListTaskPushNotificationConfigs', { taskId }, { taskId: missingTask }],
        ['DeleteTaskPushNotificationConfig', { taskId, id: configId }, { taskId: missingTask, id: configId }],
        ['CreateTaskPushNotificationConfig', { taskId, url: receiver.url }, { taskId: missingTask, url: receiver.url }],
      ] as const) {
        const theirs = await pushCall(binding, server.url, method, { ...params }, stranger, 7);
        const absent = await pushCall(binding, server.url, method, { ...missing }, stranger, 7);
        expect(theirs.status).toBe(absent.status);
        // Byte-identical but for the task id the error names.
        expect(theirs.text.split(taskId).join('ID')).toBe(absent.text.split(missingTask).join('ID'));
      }
    }
    const listed = await pushCall(binding, server.url, 'ListTaskPushNotificationConfigs', { taskId }, as('alice'));
    expect(listed.result.configs.map((c: { id: string }) => c.id)).toEqual([configId]);
  });

  it('keeps nothing in memory once a task ended and its events were delivered', async () => {
    const sent = await a2a().call(
      'SendMessage',
      { ...userMessage('report'), configuration: { taskPushNotificationConfig: { url: receiver.url } } },
      { headers: as('bob') },
    );
    expect(sent.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const taskId: string = sent.result.task.id;
    await until(() => server.router.livePushDeliveries === 0, 'deliveries done');
    expect(receiver.delivered.filter((r) => JSON.stringify(r.body).includes(taskId)).length).toBeGreaterThanOrEqual(4);
    expect(server.router.liveExecutions).toBe(0);
    expect(server.router.liveObservers).toBe(0);
    // The ended task's configs are gone from the store.
    const after = await pushCall(binding, server.url, 'ListTaskPushNotificationConfigs', { taskId }, as('bob'));
    expect(after.result?.configs ?? []).toEqual([]);
  });
});
