/**
 * A v0.3 webhook's body is the whole task, built after the dispatcher's awaits, while the engine's
 * writer keeps appending to that task's arrays in place: each delivery must show the task as of its
 * own commit, never later chunks (issue 21, item 6).
 */
import { InMemoryPushConfigStore, InMemoryPushOutbox, type Task } from '../../lib';
import { PushDispatcher } from '../../lib/engine/push/push-dispatcher';
import { PushNotificationsOptionSchema } from '../../lib/engine/push/push-options';
import { SsrfGuard } from '../../lib/engine/push/ssrf-guard';
import { recordingLogger } from './helpers';
import { startReceiver } from './receiver';

it('delivers each event of a task with a v0.3 config with the task as it was committed, though the writer appends in place', async () => {
  const receiver = await startReceiver();
  const settings = PushNotificationsOptionSchema.parse({ allow: ['127.0.0.1'] })!;
  const configs = new InMemoryPushConfigStore();
  const dispatcher = new PushDispatcher({
    configs,
    outbox: new InMemoryPushOutbox(),
    guard: new SsrfGuard({ allow: ['127.0.0.1'] }),
    logger: recordingLogger(),
    settings: { timeoutMs: settings.timeoutMs, maxAttempts: 1, retryBaseMs: 1, retryMaxMs: 1, maxInFlightPerHost: 4 },
  });
  const scope = { tenant: '', owner: 'alice' };
  try {
    // As PushNotificationService.create() does for a config registered by a v0.3 client.
    dispatcher.expectV03(scope, 't-1');
    await configs.put(scope, { id: 'c-1', taskId: 't-1', url: receiver.url, protocol: '0.3' }, 10);
    const artifact = { artifactId: 'a', parts: [{ text: 'one' }] };
    const task: Task = {
      id: 't-1',
      contextId: 'ctx',
      status: { state: 'TASK_STATE_WORKING', timestamp: '2026-01-01T00:00:00.000Z' },
      artifacts: [artifact],
      history: [],
    };
    const run = <R>(fn: () => R): R => fn();
    dispatcher.eventCommitted(scope, 't-1', { artifactUpdate: { taskId: 't-1', contextId: 'ctx', artifact } }, task, 2, run);
    // The writer folds the next chunk into the same arrays (TaskWriter / foldTaskInPlace), synchronously.
    artifact.parts.push({ text: 'two' });
    const chunk = { artifactId: 'a', parts: [{ text: 'two' }] };
    dispatcher.eventCommitted(scope, 't-1', { artifactUpdate: { taskId: 't-1', contextId: 'ctx', artifact: chunk, append: true } }, task, 3, run);
    const delivered = await receiver.deliveredCount(2);
    expect(delivered.map((r) => r.body.artifacts[0].parts.map((p: { text: string }) => p.text))).toEqual([['one'], ['one', 'two']]);
  } finally {
    await dispatcher.close(0);
    await receiver.close();
  }
});
