/**
 * createA2ARouter({ onTaskEvent }): the lifecycle hook sees every committed event, in order, with the
 * task after it; a hook that throws is logged and changes nothing for the task or the client.
 */
import { A2A_METRICS, isTerminal, type A2ATaskEventInfo, type AgentExecutor, type Logger } from '../../lib';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, rpcStream, userMessage } from '../helpers/http';
import { testMeter } from './helpers';

const executor: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'reply') return events.reply('hello');
    await events.start('working');
    await events.artifact({ name: 'result', text: 'forty-two' });
    await events.complete('done');
  },
};

const kindOf = (info: A2ATaskEventInfo) => Object.keys(info.event)[0];

describe('onTaskEvent', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('receives every committed event in order, the same the stream delivers, with the task after it', async () => {
    const seen: A2ATaskEventInfo[] = [];
    server = await startAgent(executor, { onTaskEvent: (info) => seen.push(info) });

    const stream = await rpcStream(server.url, 'SendStreamingMessage', { ...userMessage('go'), tenant: 'acme' });
    const streamed = stream.events.map((envelope) => envelope.result);
    const taskId = streamed[0].task.id;

    expect(seen.map((info) => info.event)).toEqual(streamed);
    expect(seen.map(kindOf)).toEqual(['task', 'artifactUpdate', 'statusUpdate']);
    for (const info of seen) {
      expect(info.taskId).toBe(taskId);
      expect(info.tenant).toBe('acme');
    }
    expect(seen.map((info) => info.task.status.state)).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
    expect(seen[1].task.artifacts?.[0].parts).toEqual([{ text: 'forty-two' }]);
    // A terminal task state is seen exactly once per task: where a counter of finished tasks goes.
    expect(seen.filter((info) => isTerminal(info.task.status.state))).toHaveLength(1);

    const stored = await rpc(server.url, 'GetTask', { id: taskId, tenant: 'acme' });
    expect(stored.body.result).toEqual(seen[2].task);
  });

  it('is not called for a Message reply (nothing is committed)', async () => {
    const seen: A2ATaskEventInfo[] = [];
    server = await startAgent(executor, { onTaskEvent: (info) => seen.push(info) });
    const reply = await rpc(server.url, 'SendMessage', userMessage('reply'));
    expect(reply.body.result.message.parts).toEqual([{ text: 'hello' }]);
    expect(seen).toEqual([]);
  });

  it('a hook that throws is logged and ignored: the task completes, metrics still count', async () => {
    const errors: unknown[][] = [];
    const logger: Logger = { debug() {}, info() {}, warn() {}, error: (...args: unknown[]) => void errors.push(args) };
    const otel = testMeter();
    let calls = 0;
    server = await startAgent(executor, {
      logger,
      metrics: { meter: otel.meter },
      onTaskEvent: () => {
        calls++;
        throw new Error('hook blew up');
      },
    });

    const reply = await rpc(server.url, 'SendMessage', userMessage('go'));
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(reply.body.result.task.artifacts).toHaveLength(1);
    const stored = await rpc(server.url, 'GetTask', { id: reply.body.result.task.id });
    expect(stored.body.result.status.state).toBe('TASK_STATE_COMPLETED');
    expect(calls).toBe(3);
    expect(errors).toHaveLength(3);
    expect(errors[0][1]).toMatch(/taskEvent.*threw/);
    expect(server.router.liveExecutions).toBe(0);

    const collected = await otel.collect();
    expect(collected.value(A2A_METRICS.tasksFinished, { 'a2a.task.state': 'completed' })).toBe(1);
  });
});
