/**
 * The engine under store faults (issue 21): a store call that never settles answers 503 / -32603
 * within the deadline instead of hanging; a final write an outage refused is made once the store
 * answers again (no task left WORKING with nothing running); an outage is logged once, not per call.
 */
import type { A2ATaskEventInfo, AgentExecutor } from '../../lib';
import { deferred, until, type Deferred } from '../helpers/async';
import { a2aClient, BINDINGS } from '../helpers/bindings';
import { recordingLogger } from '../push/helpers';
import { FaultyStore } from '../helpers/faulty-store';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';

const parkingAgent: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'park') return events.requireInput('which day?');
    return events.complete('ok');
  },
};

describe('a store call that never settles', () => {
  let server: TestServer;
  afterEach(() => server.close());

  it('answers 503 UNAVAILABLE (HTTP+JSON) and -32603 (JSON-RPC) within the deadline (storeTimeoutMs), on both bindings', async () => {
    const store = new FaultyStore();
    server = await startAgent(parkingAgent, { taskStore: store, storeTimeoutMs: 300 });
    const parked = (await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('park'))).result.task;
    store.mode = 'hang-reads';
    const [rpc, rest] = await Promise.all([
      a2aClient('jsonrpc', server.url).call('GetTask', { id: parked.id }),
      a2aClient('rest', server.url).call('GetTask', { id: parked.id }),
    ]);
    expect(rpc.error?.code).toBe(-32603);
    expect(rest.status).toBe(503);
    expect(JSON.parse(rest.text).error.status).toBe('UNAVAILABLE');
    store.mode = 'ok';
    expect((await a2aClient('rest', server.url).call('GetTask', { id: parked.id })).result.id).toBe(parked.id);
  });
});

describe.each(BINDINGS)('a store outage over %s', (binding) => {
  let server: TestServer;
  let store: FaultyStore;
  let gate: Deferred;
  let started: Deferred;
  let logger: ReturnType<typeof recordingLogger>;
  const committed: A2ATaskEventInfo[] = [];
  const a2a = () => a2aClient(binding, server.url);
  const gatedAgent: AgentExecutor = {
    async execute(ctx, events) {
      await events.start('working');
      started.resolve();
      await gate.promise;
      if (ctx.signal.aborted) return;
      await events.complete('done');
    },
  };
  beforeEach(async () => {
    store = new FaultyStore();
    gate = deferred();
    started = deferred();
    logger = recordingLogger();
    committed.length = 0;
    server = await startAgent(gatedAgent, { taskStore: store, logger, onTaskEvent: (info) => committed.push(info) });
  });
  afterEach(async () => {
    gate.resolve();
    await server.close();
  });

  const stateOf = async (taskId: string): Promise<string> => (await a2a().call('GetTask', { id: taskId })).result.status.state;
  /** Resolves once the engine committed `state` for the task (its onTaskEvent hook). */
  const committedState = (taskId: string, state: string): Promise<void> =>
    until(() => committed.some((c) => c.taskId === taskId && c.task.status.state === state), `${state} committed`);

  it('a turn whose writes fail ends FAILED once the store answers again, without a restart; nothing stays live', async () => {
    const sent = await a2a().call('SendMessage', { ...userMessage('work'), configuration: { returnImmediately: true } });
    const taskId: string = sent.result.task.id;
    await started.promise;
    store.mode = 'fail-writes';
    gate.resolve();
    // The turn's COMPLETED and the engine's FAILED are both refused: the FAILED is owed.
    await until(() => store.refusedWrites >= 2 && server.router.liveExecutions === 0, 'both writes refused');
    expect(await stateOf(taskId)).toBe('TASK_STATE_WORKING');
    store.mode = 'ok';
    await committedState(taskId, 'TASK_STATE_FAILED');
    expect(await stateOf(taskId)).toBe('TASK_STATE_FAILED');
    await until(() => server.router.liveExecutions === 0, 'nothing live');
    expect(server.router.liveObservers).toBe(0);
  });

  it('a cancel whose CANCELED write fails ends CANCELED once the store answers again', async () => {
    const sent = await a2a().call('SendMessage', { ...userMessage('work'), configuration: { returnImmediately: true } });
    const taskId: string = sent.result.task.id;
    await started.promise;
    store.mode = 'fail-writes';
    const canceled = a2a().call('CancelTask', { id: taskId });
    gate.resolve();
    expect((await canceled).error?.code).toBe(-32603);
    store.mode = 'ok';
    await committedState(taskId, 'TASK_STATE_CANCELED');
    expect(await stateOf(taskId)).toBe('TASK_STATE_CANCELED');
    await until(() => server.router.liveExecutions === 0, 'nothing live');
  });

  it('logs the outage once when it starts (error, with its cause) and once when it ends (info, with the count)', async () => {
    const tasks: string[] = [];
    for (let i = 0; i < 3; i++) {
      const sent = await a2a().call('SendMessage', { ...userMessage('work'), configuration: { returnImmediately: true } });
      tasks.push(sent.result.task.id);
    }
    await until(() => server.router.liveExecutions === 3, 'three turns running');
    store.mode = 'fail-writes';
    gate.resolve();
    await until(() => server.router.liveExecutions === 0 && store.refusedWrites >= 6, 'every turn ended');
    // Failed requests meanwhile: a new message, a follow-up would be refused, a cancel.
    expect((await a2a().call('SendMessage', userMessage('more'))).error?.code).toBe(-32603);
    store.mode = 'ok';
    await until(() => logger.lines.some((l) => l.level === 'info' && l.message === 'the store answers again'), 'the end of the outage logged');
    const errors = logger.lines.filter((l) => l.level === 'error' || l.level === 'warn');
    expect(errors.map((l) => l.message)).toEqual(['a store is failing; further failures are counted until it answers again']);
    expect(String((errors[0].fields.err as Error).message)).toMatch(/ENOSPC/);
    const ended = logger.lines.find((l) => l.message === 'the store answers again')!;
    expect(ended.fields.failures).toBeGreaterThanOrEqual(7);
    for (const taskId of tasks) {
      await committedState(taskId, 'TASK_STATE_FAILED');
      expect(await stateOf(taskId)).toBe('TASK_STATE_FAILED');
    }
  });
});
