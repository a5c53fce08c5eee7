/**
 * The router's `retention` option: finished tasks older than finishedTaskTtlMs leave the store (GetTask
 * answers TaskNotFound, ListTasks no longer lists them) while a parked task stays; a store without
 * removeFinished() is refused at construction, naming the option.
 */
import { A2AOptionsError, createA2ARouter, silentLogger, type AgentExecutor, type TaskStore } from '../../lib';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';

const executor: AgentExecutor = {
  execute: (ctx, events) => (ctx.userText === 'park' ? events.requireInput('more?') : events.complete('done')),
};

describe('the retention option', () => {
  let server: TestServer;
  afterEach(() => server?.close());

  it('removes finished tasks after finishedTaskTtlMs and keeps parked ones', async () => {
    server = await startAgent(executor, { retention: { finishedTaskTtlMs: 1_000, intervalMs: 20 } });
    const finished = (await rpc(server.url, 'SendMessage', userMessage('finish'))).body.result.task;
    const parked = (await rpc(server.url, 'SendMessage', userMessage('park'))).body.result.task;
    expect(finished.status.state).toBe('TASK_STATE_COMPLETED');
    // The sweep runs every 20 ms; the finished task goes once it is a second old.
    for (;;) {
      const answer = (await rpc(server.url, 'GetTask', { id: finished.id })).body;
      if (answer.error) {
        expect(answer.error.code).toBe(-32001); // TaskNotFound
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const listed = (await rpc(server.url, 'ListTasks', {})).body.result.tasks.map((task: { id: string }) => task.id);
    expect(listed).toEqual([parked.id]);
    expect((await rpc(server.url, 'GetTask', { id: parked.id })).body.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
  });

  it('refuses a task store without removeFinished(), naming the option', () => {
    const store: TaskStore = {
      get: async () => undefined,
      create: async () => 1,
      update: async () => 2,
      list: async () => ({ tasks: [], nextPageToken: '', totalSize: 0 }),
    };
    const build = () =>
      createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, taskStore: store, retention: { finishedTaskTtlMs: 60_000 } });
    expect(build).toThrow(A2AOptionsError);
    expect(build).toThrow(/option "retention": the task store has no removeFinished/);
  });
});
