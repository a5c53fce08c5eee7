/**
 * examples/push as a user runs it: the report agent hands its work to the background worker, and
 * the example's webhook receiver gets every event by push, in order, up to the final state.
 */
import { silentLogger } from '../../lib';
import { createApp } from '../../examples/push/app';
import { startReceiver, type ReceivedNotification, type WebhookReceiver } from '../../examples/push/receiver';
import { deferred, type Deferred } from '../helpers/async';
import { listen, rpc, userMessage, type Listening } from '../helpers/http';

const TOKEN = 'acceptance-token';
const FINAL = /: TASK_STATE_(COMPLETED|CANCELED|FAILED)/;

describe('examples/push', () => {
  let receiver: WebhookReceiver;
  let received: ReceivedNotification[];
  let finished: Deferred<void>;
  let example: ReturnType<typeof createApp>;
  let server: Listening;
  let url: string;

  const start = async (stepMs: number) => {
    example = createApp({ stepMs, router: { logger: silentLogger } });
    server = await listen(example.app);
    url = `${server.baseUrl}/agent`;
  };
  const push = () => ({ url: receiver.url, token: TOKEN });

  beforeEach(async () => {
    received = [];
    finished = deferred();
    receiver = await startReceiver({
      token: TOKEN,
      onNotification: (notification) => {
        received.push(notification);
        if (FINAL.test(notification.summary)) finished.resolve();
      },
    });
  });
  afterEach(async () => {
    await example.close(0);
    await server.close();
    await receiver.close();
  });

  it('states push support in its card', async () => {
    await start(0);
    const card = (await (await fetch(`${server.baseUrl}/.well-known/agent-card.json`)).json()) as { capabilities: Record<string, unknown> };
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: true });
  });

  it('answers WORKING at once, then pushes the worker’s progress, the report and COMPLETED, in order', async () => {
    await start(0);
    const reply = await rpc(url, 'SendMessage', {
      ...userMessage('the history of the bicycle'),
      configuration: { returnImmediately: true, taskPushNotificationConfig: push() },
    });
    const task = reply.body.result.task;
    expect(task.status.state).toBe('TASK_STATE_WORKING');
    await finished.promise;
    expect(received.map((n) => n.summary)).toEqual([
      `task ${task.id}: TASK_STATE_WORKING Queued a report on "the history of the bicycle".`,
      `task ${task.id}: TASK_STATE_WORKING Section 1 of 3 written: Background`,
      `task ${task.id}: TASK_STATE_WORKING Section 2 of 3 written: Findings`,
      `task ${task.id}: TASK_STATE_WORKING Section 3 of 3 written: Conclusion`,
      `task ${task.id}: artifact report.md`,
      `task ${task.id}: TASK_STATE_COMPLETED Your report is ready.`,
    ]);
    const stored = (await rpc(url, 'GetTask', { id: task.id })).body.result;
    expect(stored.status.state).toBe('TASK_STATE_COMPLETED');
    expect(stored.artifacts[0].parts[0].text).toContain('# the history of the bicycle');
    expect(example.agent.liveExecutions).toBe(0);
  });

  it('a blocking SendMessage waits for the worker and answers the completed task', async () => {
    await start(0);
    const reply = await rpc(url, 'SendMessage', { ...userMessage('tides'), configuration: { taskPushNotificationConfig: push() } });
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    await finished.promise;
    expect(received.at(-1)!.summary).toBe(`task ${reply.body.result.task.id}: TASK_STATE_COMPLETED Your report is ready.`);
  });

  it('a CancelTask stops the worker and the receiver hears CANCELED last', async () => {
    // Sections would take a minute each: only the cancel ends this task.
    await start(60_000);
    const reply = await rpc(url, 'SendMessage', {
      ...userMessage('glaciers'),
      configuration: { returnImmediately: true, taskPushNotificationConfig: push() },
    });
    const taskId = reply.body.result.task.id;
    const canceled = await rpc(url, 'CancelTask', { id: taskId });
    expect(canceled.body.result.status.state).toBe('TASK_STATE_CANCELED');
    await finished.promise;
    expect(received.map((n) => n.summary.split(':')[1].trim().split(' ')[0])).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_CANCELED']);
    expect(example.agent.liveExecutions).toBe(0);
  });
});
