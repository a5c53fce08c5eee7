/**
 * The turn runner without an Execution: what execute() and resume() are told, the lease and the
 * follow-up's history write before them, the deadline, and how an unfinished turn is ended.
 */
import { runResume, runTurn } from '../../../lib/engine/execution/turn-runner';
import type { AgentExecutor, ExecutionContext } from '../../../lib/engine/executor';
import type { EngineEvents } from '../../../lib/engine/engine-events';
import { A2AError } from '../../../lib/errors';
import { resumeRequest } from '../../../lib/engine/execution/turn';
import { aborted, deferred } from '../../helpers/async';
import { recordingLogger } from '../../push/helpers';
import { FakeLeases, recorder, scope, storeWith, task, turnHost, turnRequest, userMessage } from './engine-fixtures';

const GENERIC = 'The agent failed while processing this task.';

const endState = (outcome: { kind: string; task?: { status: { state: string } } } | undefined) =>
  outcome?.kind === 'task' ? outcome.task!.status.state : outcome?.kind;
const storedText = async (store: Awaited<ReturnType<typeof storeWith>>) => (await store.get(scope, 'task-1'))!.task.status.message?.parts[0];

describe('runTurn', () => {
  it("runs a follow-up's execute() after its message joined the history, with a copy of the task before it and the turn's signal", async () => {
    const store = await storeWith(task('TASK_STATE_INPUT_REQUIRED'));
    let seen: ExecutionContext | undefined;
    const started: Array<Parameters<NonNullable<EngineEvents['turnStarted']>>[0]> = [];
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        seen = ctx;
        await events.complete('done');
      },
    };
    const { host, start, ends } = turnHost(store, executor, {
      stored: await store.get(scope, 'task-1'),
      events: { turnStarted: (info) => started.push(info) },
    });
    const observer = recorder();
    const turn = start(turnRequest(userMessage('more'), observer));
    await runTurn(host, turn);
    expect(seen!.userMessage.parts[0]).toEqual({ text: 'more' });
    expect(seen!.task!.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(seen!.task!.history).toHaveLength(1); // the task before the follow-up joined
    expect(seen!.signal).toBe(turn.signal);
    expect(started).toEqual([{ taskId: 'task-1', tenant: 't', followUp: true }]);
    expect(ends.map(endState)).toEqual(['TASK_STATE_COMPLETED']);
    expect('task' in observer.events[0]).toBe(true); // the turn's stream opens with the task
    expect((await store.get(scope, 'task-1'))!.task.history!.map((message) => message.messageId).slice(0, 2)).toEqual(['m-hello', 'm-more']);
  });

  it('refuses the turn before execute() when another replica holds the lease', async () => {
    const store = await storeWith();
    const execute = jest.fn();
    const leases = new FakeLeases();
    leases.heldElsewhere.add('k');
    const { host, start, ends } = turnHost(store, { execute }, { leases });
    await runTurn(host, start(turnRequest(userMessage('go'))));
    expect(execute).not.toHaveBeenCalled();
    expect(ends).toHaveLength(1);
    expect(ends[0].kind === 'error' && ends[0].error.message).toMatch(/is processing another message/);
  });

  it('fails the task with the generic reason when execute() returns without an end state, and logs it', async () => {
    const store = await storeWith();
    const logger = recordingLogger();
    const { host, start, ends } = turnHost(store, { execute: async (_ctx, events) => events.start() }, { logger });
    await runTurn(host, start(turnRequest(userMessage('go'))));
    expect(ends.map(endState)).toEqual(['TASK_STATE_FAILED']);
    expect(await storedText(store)).toEqual({ text: GENERIC });
    expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual([
      'execute() returned before publishing a reply, an interrupted or a terminal state; the task is failed',
    ]);
  });

  it.each([
    ['an error', 'error', new Error('boom')],
    ['a store failure (logged once elsewhere)', 'debug', new A2AError('Unavailable')],
  ])('fails the task when execute() throws %s, logged at %s', async (_what, level, thrown) => {
    const store = await storeWith();
    const logger = recordingLogger();
    const executor: AgentExecutor = {
      async execute(_ctx, events) {
        await events.start();
        throw thrown;
      },
    };
    const { host, start, ends } = turnHost(store, executor, { logger });
    await runTurn(host, start(turnRequest(userMessage('go'))));
    expect(ends.map(endState)).toEqual(['TASK_STATE_FAILED']);
    const threw = logger.lines.filter((line) => line.message.includes('threw'));
    expect(threw.map((line) => line.level)).toEqual([level]);
  });

  it("fires the turn's signal at its deadline and fails the task with the reason", async () => {
    const store = await storeWith();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        await events.start();
        await aborted(ctx.signal);
      },
    };
    const { host, start, ends } = turnHost(store, executor, { turnTimeoutMs: 20 });
    const observer = recorder();
    await runTurn(host, start(turnRequest(userMessage('go'), observer)));
    expect(endState(await observer.ended)).toBe('TASK_STATE_FAILED');
    expect(ends).toHaveLength(1);
    expect(await storedText(store)).toEqual({ text: 'The agent did not finish within 20 ms.' });
  });

  it('leaves a turn past its deadline alone while a cancel runs (the cancel decides its end)', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const store = await storeWith();
      const running = deferred();
      const release = deferred();
      const executor: AgentExecutor = {
        async execute(_ctx, events) {
          await events.start();
          running.resolve();
          await release.promise;
        },
      };
      const { host, start, ends, cancel } = turnHost(store, executor, { turnTimeoutMs: 20 });
      const turn = start(turnRequest(userMessage('go')));
      const run = runTurn(host, turn);
      await running.promise;
      cancel.running = true;
      jest.advanceTimersByTime(1_000);
      expect(turn.signal.aborted).toBe(false);
      expect(turn.closed).toBe(false);
      // The cancel aborted the turn; execute() returns: the cancel, not the runner, writes CANCELED.
      turn.cancel();
      release.resolve();
      await run;
      expect(ends).toEqual([]);
      expect((await store.get(scope, 'task-1'))!.task.status.state).toBe('TASK_STATE_WORKING');
    } finally {
      jest.useRealTimers();
    }
  });

  it('ends a turn canceled from another process CANCELED when execute() returns', async () => {
    const store = await storeWith();
    const running = deferred();
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        await events.start();
        running.resolve();
        await aborted(ctx.signal);
      },
    };
    const { host, start, ends } = turnHost(store, executor);
    const turn = start(turnRequest(userMessage('go')));
    const run = runTurn(host, turn);
    await running.promise;
    turn.cancel();
    await run;
    expect(ends.map(endState)).toEqual(['TASK_STATE_CANCELED']);
  });
});

describe('runResume', () => {
  it("calls resume() with the task as stored in its owner's context; unfinished, the task is FAILED with the given reason", async () => {
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const stored = await store.get(scope, 'task-1');
    const logger = recordingLogger();
    const resume = jest.fn(async () => undefined);
    const { host, start, ends } = turnHost(store, { execute: jest.fn(), resume }, { stored, logger });
    const turn = start(resumeRequest(scope, stored!.task, 'task-1', 'ctx-1'));
    await runResume(host, turn, 'lost', 'restart');
    expect(resume).toHaveBeenCalledTimes(1);
    expect(resume.mock.calls[0]).toEqual([
      expect.objectContaining({ resumed: true, reason: 'restart', taskId: 'task-1', caller: { id: 'alice', authenticated: false } }),
      expect.anything(),
    ]);
    expect(ends.map(endState)).toEqual(['TASK_STATE_FAILED']);
    expect(await storedText(store)).toEqual({ text: 'lost' });
    expect(logger.lines.map((line) => line.message)).toContain(
      'resume() returned before publishing a reply, an interrupted or a terminal state; the task is failed',
    );
  });
});
