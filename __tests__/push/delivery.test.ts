/**
 * Push delivery to a real webhook receiver on loopback (allow-listed): every committed event, in
 * order, as a StreamResponse with the config's credentials and token; retries with backoff; a
 * receiver that gives up marks the config failing (a log line without credentials); a dead
 * receiver does not delay another task; redirects are not followed; DNS rebinding is refused at
 * delivery; configs and every in-memory structure are gone once the task ended and was delivered;
 * each delivery runs in the async context of the request whose message produced its event.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type express from 'express';
import { A2A_METRICS, InMemoryPushConfigStore, InMemoryPushOutbox, type A2ATaskEventInfo, type Logger, type StreamResponse } from '../../lib';
import { testMeter } from '../observability/helpers';
import { deferred, until, type Deferred } from '../helpers/async';
import { a2aClient } from '../helpers/bindings';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { pushAgent, pushCall, recordingLogger } from './helpers';
import { startReceiver, type Receiver } from './receiver';

let gate: Deferred<void>;

const send = (server: TestServer, text: string, push?: Record<string, unknown>, returnImmediately = false, headers: Record<string, string> = {}) =>
  a2aClient('jsonrpc', server.url).call(
    'SendMessage',
    { ...userMessage(text), configuration: { returnImmediately, ...(push ? { taskPushNotificationConfig: push } : {}) } },
    { headers },
  );

describe('push delivery', () => {
  beforeEach(() => {
    gate = deferred();
  });
  afterEach(() => gate.resolve());

  describe('to a healthy receiver', () => {
    let server: TestServer;
    let receiver: Receiver;
    const committed: A2ATaskEventInfo[] = [];
    const configs = new InMemoryPushConfigStore();
    const outbox = new InMemoryPushOutbox();

    beforeAll(async () => {
      receiver = await startReceiver();
      server = await startAgent(
        pushAgent(() => gate),
        {
          onTaskEvent: (info) => committed.push(info),
          pushNotifications: { allow: ['127.0.0.1'], configStore: configs, outbox },
        },
      );
    });
    afterAll(async () => {
      await server.close();
      await receiver.close();
    });

    it('POSTs every committed event of the task, in order, as a StreamResponse with the credentials and token', async () => {
      const reply = await send(server, 'report', {
        url: receiver.url,
        token: 'tok-123',
        authentication: { scheme: 'Bearer', credentials: 's3cr3t' },
      });
      const taskId = reply.result.task.id;
      const events = committed.filter((info) => info.taskId === taskId).map((info) => info.event);
      expect(events.length).toBeGreaterThanOrEqual(4);
      const received = await receiver.deliveredCount(events.length);
      expect(received.map((r) => r.body as StreamResponse)).toEqual(events);
      for (const request of received) {
        expect(request.path).toBe('/hook');
        expect(request.headers['content-type']).toBe('application/a2a+json');
        expect(request.headers.authorization).toBe('Bearer s3cr3t');
        expect(request.headers['x-a2a-notification-token']).toBe('tok-123');
      }
      // The last one is the terminal status; then the task's configs are gone, and nothing is held.
      expect((received[received.length - 1].body as { statusUpdate: { status: { state: string } } }).statusUpdate.status.state).toBe(
        'TASK_STATE_COMPLETED',
      );
      await until(() => server.router.livePushDeliveries === 0 && configs.size === 0, 'configs removed after the final delivery');
      expect(outbox.size).toBe(0);
      expect((await pushCall('jsonrpc', server.url, 'ListTaskPushNotificationConfigs', { taskId })).result.configs).toEqual([]);
    });

    it('a config created on a running task gets the events committed after it', async () => {
      receiver.delivered.length = 0;
      const taskId = (await send(server, 'wait', undefined, true)).result.task.id;
      await until(() => committed.some((i) => i.taskId === taskId && i.task.status.state === 'TASK_STATE_WORKING'), 'working');
      const created = await pushCall('jsonrpc', server.url, 'CreateTaskPushNotificationConfig', { taskId, url: receiver.url });
      expect(created.result.id).toBeDefined();
      const before = committed.filter((i) => i.taskId === taskId).length;
      gate.resolve();
      await until(() => committed.some((i) => i.taskId === taskId && i.task.status.state === 'TASK_STATE_COMPLETED'), 'completed');
      const after = committed
        .filter((i) => i.taskId === taskId)
        .slice(before)
        .map((i) => i.event);
      expect((await receiver.deliveredCount(after.length)).map((r) => r.body)).toEqual(after);
      await until(() => server.router.livePushDeliveries === 0 && configs.size === 0, 'idle');
    });

    it('a deleted config gets nothing more', async () => {
      receiver.delivered.length = 0;
      const taskId = (await send(server, 'wait', undefined, true)).result.task.id;
      const created = (await pushCall('jsonrpc', server.url, 'CreateTaskPushNotificationConfig', { taskId, url: receiver.url })).result;
      await pushCall('jsonrpc', server.url, 'DeleteTaskPushNotificationConfig', { taskId, id: created.id });
      gate.resolve();
      await until(() => committed.some((i) => i.taskId === taskId && i.task.status.state === 'TASK_STATE_COMPLETED'), 'completed');
      await until(() => server.router.livePushDeliveries === 0, 'idle');
      expect(receiver.requests.filter((r) => JSON.stringify(r.body).includes(taskId))).toEqual([]);
    });
  });

  it('retries with backoff: a receiver failing 3 times then succeeding gets each event delivered once, in order', async () => {
    const receiver = await startReceiver((index) => ({ status: index < 3 ? 503 : 200 }));
    const committed: A2ATaskEventInfo[] = [];
    const server = await startAgent(
      pushAgent(() => gate),
      {
        onTaskEvent: (info) => committed.push(info),
        pushNotifications: { allow: ['127.0.0.1'], retryBaseMs: 5, retryMaxMs: 20, maxAttempts: 5 },
      },
    );
    try {
      const taskId = (await send(server, 'report', { url: receiver.url })).result.task.id;
      const events = committed.filter((i) => i.taskId === taskId).map((i) => i.event);
      const delivered = await receiver.deliveredCount(events.length);
      expect(delivered.map((r) => r.body)).toEqual(events);
      expect(receiver.requests).toHaveLength(events.length + 3);
      // The three failures were all the first event, retried.
      expect(receiver.requests.slice(0, 4).map((r) => r.text)).toEqual(Array(4).fill(JSON.stringify(events[0])));
      await until(() => server.router.livePushDeliveries === 0, 'idle');
    } finally {
      await server.close();
      await receiver.close();
    }
  });

  it('gives up after maxAttempts: the config is marked failing, one warn line without credentials; later events get one attempt', async () => {
    const receiver = await startReceiver(() => ({ status: 500 }));
    const logger = recordingLogger();
    const configs = new InMemoryPushConfigStore();
    const server = await startAgent(
      pushAgent(() => gate),
      {
        logger,
        pushNotifications: { allow: ['127.0.0.1'], retryBaseMs: 1, retryMaxMs: 2, maxAttempts: 3, configStore: configs },
      },
    );
    try {
      const taskId = (await send(server, 'wait', undefined, true)).result.task.id;
      const created = (
        await pushCall('jsonrpc', server.url, 'CreateTaskPushNotificationConfig', {
          taskId,
          url: `${receiver.url}?key=in-the-query`,
          token: 'the-token',
          authentication: { scheme: 'Bearer', credentials: 'top-secret' },
        })
      ).result;
      gate.resolve();
      // Artifact (3 attempts, gives up), then completed (failing: 1 attempt).
      await receiver.requestCount(4);
      await until(() => server.router.livePushDeliveries === 0, 'idle');
      expect(receiver.requests).toHaveLength(4);
      // One warning when the config starts failing; the completion's failed attempt is not another.
      const warnings = logger.lines.filter((l) => l.level === 'warn' && l.message.includes('marked failing'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0].fields).toMatchObject({ taskId, configId: created.id, webhook: receiver.origin, attempts: 3 });
      const everything = JSON.stringify(logger.lines);
      for (const secret of ['top-secret', 'the-token', 'in-the-query']) expect(everything).not.toContain(secret);
    } finally {
      await server.close();
      await receiver.close();
    }
  });

  it('metrics: attempts by outcome, their duration, and deliveries given up', async () => {
    const receiver = await startReceiver((index) => ({ status: index === 0 ? 500 : 200 }));
    const failing = await startReceiver(() => ({ status: 500 }));
    const { meter, collect } = testMeter();
    const server = await startAgent(
      pushAgent(() => gate),
      {
        metrics: { meter },
        pushNotifications: { allow: ['127.0.0.1'], retryBaseMs: 1, retryMaxMs: 2, maxAttempts: 2 },
      },
    );
    try {
      await send(server, 'park', { url: receiver.url });
      await receiver.deliveredCount(1);
      await send(server, 'park', { url: failing.url });
      await failing.requestCount(2);
      await until(() => server.router.livePushDeliveries === 0, 'idle');
      const metrics = await collect();
      expect(metrics.value(A2A_METRICS.pushAttempts, { 'a2a.push.outcome': 'delivered' })).toBe(1);
      expect(metrics.value(A2A_METRICS.pushAttempts, { 'a2a.push.outcome': 'rejected' })).toBe(3);
      expect(metrics.value(A2A_METRICS.pushAttemptDuration)).toBe(4);
      expect(metrics.value(A2A_METRICS.pushFailures)).toBe(1);
    } finally {
      await server.close();
      await receiver.close();
      await failing.close();
    }
  });

  it('a dead receiver does not delay another task delivering to another host', async () => {
    const dead = await startReceiver(() => 'hang');
    const alive = await startReceiver();
    const committed: A2ATaskEventInfo[] = [];
    const server = await startAgent(
      pushAgent(() => gate),
      {
        onTaskEvent: (info) => committed.push(info),
        pushNotifications: { allow: ['127.0.0.1'], timeoutMs: 60_000, maxInFlightPerHost: 1 },
      },
    );
    try {
      await send(server, 'report', { url: dead.url });
      await dead.requestCount(1);
      const taskId = (await send(server, 'report', { url: alive.url })).result.task.id;
      const events = committed.filter((i) => i.taskId === taskId).map((i) => i.event);
      expect((await alive.deliveredCount(events.length)).map((r) => r.body)).toEqual(events);
      // The dead one still holds its first request, its other events waiting behind it.
      expect(dead.requests).toHaveLength(1);
      expect(server.router.livePushDeliveries).toBeGreaterThan(0);
    } finally {
      // Closing the router aborts the hanging attempt: nothing is held afterwards.
      await server.router.close({ graceMs: 0 });
      await server.close();
      await dead.close();
      await alive.close();
    }
    expect(server.router.livePushDeliveries).toBe(0);
  });

  it('does not follow a redirect (a 3xx is a failed attempt)', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver(() => ({ status: 302, location: target.url }));
    const server = await startAgent(
      pushAgent(() => gate),
      {
        pushNotifications: { allow: ['127.0.0.1'], retryBaseMs: 1, retryMaxMs: 2, maxAttempts: 2 },
      },
    );
    try {
      await send(server, 'report', { url: redirecting.url });
      await redirecting.requestCount(2);
      await until(() => server.router.livePushDeliveries === 0, 'idle');
      expect(target.requests).toHaveLength(0);
    } finally {
      await server.close();
      await target.close();
      await redirecting.close();
    }
  });

  it('DNS rebinding: a name that resolved to a public address at Create is checked again at delivery, and not connected to', async () => {
    const logger = recordingLogger();
    let lookups = 0;
    const server = await startAgent(
      pushAgent(() => gate),
      {
        logger,
        pushNotifications: {
          retryBaseMs: 1,
          retryMaxMs: 2,
          maxAttempts: 2,
          // First a public address (accepted at Create), then loopback (when the delivery resolves it).
          lookup: async () => (lookups++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]),
        },
      },
    );
    try {
      const taskId = (await send(server, 'wait', undefined, true)).result.task.id;
      const created = await pushCall('jsonrpc', server.url, 'CreateTaskPushNotificationConfig', { taskId, url: 'http://hooks.rebind.test/hook' });
      expect(created.result.id).toBeDefined();
      gate.resolve();
      await until(() => logger.lines.some((l) => l.level === 'warn' && l.message.includes('marked failing')), 'given up');
      const refused = logger.lines.filter((l) => l.message.includes('refused by the SSRF guard'));
      expect(refused.length).toBeGreaterThanOrEqual(2);
      expect(logger.lines.filter((l) => l.message === 'push notification attempt')).toEqual([]);
      await until(() => server.router.livePushDeliveries === 0, 'idle');
    } finally {
      await server.close();
    }
  });

  it('each delivery runs in the async context of the request whose message produced its event', async () => {
    const als = new AsyncLocalStorage<string>();
    const fromHeader: express.RequestHandler = (req, _res, next) => als.run(req.get('x-turn') ?? 'none', next);
    const seen: { version: unknown; turn: string | undefined }[] = [];
    const logger: Logger = {
      debug: (fields: unknown, message?: string) => {
        if (message === 'push notification attempt') seen.push({ version: (fields as { version: unknown }).version, turn: als.getStore() });
      },
      info: () => undefined,
      warn: () => undefined,
      error: () => undefined,
    } as never;
    const receiver = await startReceiver();
    const committed: (A2ATaskEventInfo & { turn: string | undefined })[] = [];
    const server = await startAgent(
      pushAgent(() => gate),
      {
        logger,
        before: [fromHeader],
        onTaskEvent: (info) => committed.push({ ...info, turn: als.getStore() }),
        pushNotifications: { allow: ['127.0.0.1'] },
      },
    );
    try {
      const first = await send(server, 'park', { url: receiver.url }, false, { 'x-turn': 'one' });
      const taskId = first.result.task.id;
      const second = await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('friday', { taskId }), { headers: { 'x-turn': 'two' } });
      expect(second.result.task.status.state).toBe('TASK_STATE_COMPLETED');
      const mine = committed.filter((i) => i.taskId === taskId);
      await receiver.deliveredCount(mine.length);
      await until(() => seen.length >= mine.length, 'attempts logged');
      expect(new Set(mine.map((i) => i.turn))).toEqual(new Set(['one', 'two']));
      // Every delivery saw the context its event was committed in, event by event.
      expect(seen.map((s) => s.turn)).toEqual(mine.map((i) => i.turn));
      const versions = seen.map((s) => s.version as number);
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
    } finally {
      await server.close();
      await receiver.close();
    }
  });
});
