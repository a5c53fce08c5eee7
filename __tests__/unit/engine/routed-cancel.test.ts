/**
 * The receiving end of a cancel routed from another process, without an Execution: which turns it
 * touches, and a turn ended by an end committed before the bus was followed. (The end heard from the
 * bus and the grace period are in resume-and-routed-cancel.test.ts, through an Execution.)
 */
import { cancelRoutedHere } from '../../../lib/engine/execution/cancel';
import { runTurn } from '../../../lib/engine/execution/turn-runner';
import type { AgentExecutor } from '../../../lib/engine/executor';
import { aborted, deferred } from '../../helpers/async';
import { recorder, scope, storeWith, task, turnHost, turnRequest, userMessage } from './engine-fixtures';

/** execute() starts the task, says it runs, then waits for its signal. */
function waitingAgent() {
  const running = deferred();
  const executor: AgentExecutor = {
    async execute(ctx, events) {
      await events.start();
      running.resolve();
      await aborted(ctx.signal);
    },
  };
  return { executor, running: running.promise };
}

describe('cancelRoutedHere', () => {
  it('does nothing without a running turn', async () => {
    const { host, ends } = turnHost(await storeWith(), { execute: jest.fn() });
    cancelRoutedHere(host);
    expect(ends).toEqual([]);
  });

  it('only aborts a handed-off turn: it follows the bus for its end already', async () => {
    const { host, start, ends, deps } = turnHost(await storeWith(), { execute: jest.fn() });
    const turn = start(turnRequest(userMessage('go')));
    turn.handOff();
    cancelRoutedHere(host);
    expect(turn.signal.aborted).toBe(true);
    expect(deps.bus.subscriberCount).toBe(0); // no watch for the end
    expect(ends).toEqual([]);
  });

  it('ends the turn with the end found stored when it was committed before the bus was followed', async () => {
    const store = await storeWith(task('TASK_STATE_INPUT_REQUIRED'));
    const agent = waitingAgent();
    const { host, start, ends } = turnHost(store, agent.executor, { stored: await store.get(scope, 'task-1'), cancelGraceMs: 600_000 });
    const observer = recorder();
    const run = runTurn(host, start(turnRequest(userMessage('go'), observer)));
    await agent.running;
    // "Another process" commits CANCELED through a channel of its own (its bus is not this one).
    const other = turnHost(store, { execute: jest.fn() }, { stored: await store.get(scope, 'task-1') });
    await other.host.channel.enqueue(() => other.host.channel.commitEngineStatus('TASK_STATE_CANCELED', 'The task was canceled.'));
    cancelRoutedHere(host);
    const ended = await observer.ended;
    expect(ended.kind === 'task' && ended.task.status.state).toBe('TASK_STATE_CANCELED');
    const last = observer.events.at(-1)!;
    expect('statusUpdate' in last && last.statusUpdate.status.state).toBe('TASK_STATE_CANCELED');
    expect(ends).toHaveLength(1);
    await run;
    expect((await store.get(scope, 'task-1'))!.task.status.state).toBe('TASK_STATE_CANCELED');
    host.guard.release(); // the watch for the end a routed cancel starts
  });
});
