/**
 * A failing webhook is logged when its config starts failing, with the cause, and when it delivers
 * again; not once per event: a dead receiver of a busy task must not flood the log.
 */
import net from 'node:net';
import { deferred, until, type Deferred } from '../helpers/async';
import { a2aClient } from '../helpers/bindings';
import { startAgent } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { pushAgent, recordingLogger } from './helpers';
import { startReceiver } from './receiver';

let gate: Deferred<void>;
beforeEach(() => {
  gate = deferred();
});
afterEach(() => gate.resolve());

/** A loopback port nothing listens on (a dead receiver): connecting to it is refused. */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const settings = { allow: ['127.0.0.1'], retryBaseMs: 1, retryMaxMs: 2, maxAttempts: 2 };

describe('push config health in the log', () => {
  it('a dead receiver: one warning with the cause (ECONNREFUSED) when the config starts failing, none per later event', async () => {
    const logger = recordingLogger();
    const server = await startAgent(
      pushAgent(() => gate),
      { logger, pushNotifications: settings },
    );
    try {
      const url = `http://127.0.0.1:${await deadPort()}/hook`;
      // Working, two artifact chunks, completed: four events, each not delivered.
      const tasks = await Promise.all(
        Array.from({ length: 3 }, () =>
          a2aClient('jsonrpc', server.url).call('SendMessage', { ...userMessage('report'), configuration: { taskPushNotificationConfig: { url } } }),
        ),
      );
      expect(tasks.every((reply) => reply.result.task.status.state === 'TASK_STATE_COMPLETED')).toBe(true);
      await until(() => server.router.livePushDeliveries === 0, 'deliveries given up');
      const warnings = logger.lines.filter((line) => line.level === 'warn');
      // One per config (each task has its own), not one per event.
      expect(warnings).toHaveLength(3);
      for (const warning of warnings) {
        expect(warning.fields).toMatchObject({ cause: 'ECONNREFUSED', attempts: 2 });
        expect(warning.message).toContain('ECONNREFUSED');
      }
      expect(new Set(warnings.map((w) => w.fields.taskId))).toEqual(new Set(tasks.map((reply) => reply.result.task.id)));
      expect(logger.lines.filter((line) => line.level === 'info' || line.level === 'error')).toEqual([]);
    } finally {
      await server.router.close({ graceMs: 0 });
      await server.close();
    }
  });

  it('a receiver that recovers: one warning when it starts failing, one info line when it delivers again', async () => {
    // The first event's two attempts fail; everything after is delivered.
    const receiver = await startReceiver((index) => ({ status: index < 2 ? 503 : 200 }));
    const logger = recordingLogger();
    const server = await startAgent(
      pushAgent(() => gate),
      { logger, pushNotifications: settings },
    );
    try {
      const reply = await a2aClient('jsonrpc', server.url).call('SendMessage', {
        ...userMessage('wait'),
        configuration: { returnImmediately: true, taskPushNotificationConfig: { url: receiver.url } },
      });
      const taskId = reply.result.task.id;
      await until(() => logger.lines.some((line) => line.level === 'warn'), 'config failing');
      gate.resolve();
      await receiver.deliveredCount(2);
      await until(() => server.router.livePushDeliveries === 0, 'deliveries done');
      const health = logger.lines.filter((line) => line.level !== 'debug');
      expect(health.map((line) => line.level)).toEqual(['warn', 'info']);
      expect(health[0].fields).toMatchObject({ taskId, cause: 'HTTP 503', webhook: new URL(receiver.url).origin });
      expect(health[1].fields).toMatchObject({ taskId, webhook: new URL(receiver.url).origin });
      expect(health[1].message).toContain('no longer failing');
    } finally {
      await server.router.close({ graceMs: 0 });
      await server.close();
      await receiver.close();
    }
  });
});
