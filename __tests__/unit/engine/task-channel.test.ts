/** The task channel alone: reduce -> versioned write -> fan-out, in order; refusals, ended tasks, conflicts. */
import { TaskChannel, type ChannelListener, type Committed } from '../../../lib/engine/execution/task-channel';
import { InProcessTaskEventBus } from '../../../lib/engine/seams/task-event-bus';
import type { EngineEvents } from '../../../lib/engine/engine-events';
import type { InMemoryTaskStore } from '../../../lib/backends/memory/in-memory-task-store';
import type { VersionedTask } from '../../../lib/engine/seams/task-store';
import type { TaskEvent } from '../../../lib/engine/task-reducer';
import { silentLogger } from '../../../lib/options';
import type { Task } from '../../../lib/protocol/schemas';
import { scope, status, storeWith, task, userMessage } from './engine-fixtures';

const ids = { taskId: 'task-1', contextId: 'ctx-1' };
const WORDING = { refused: 'refused in a test', endedBy: 'by another request' };

/** A channel over `store` whose listener, bus subscriber and hooks all write into one log. */
function channelOn(store: InMemoryTaskStore, stored?: VersionedTask) {
  const log: string[] = [];
  const ended: Task[] = [];
  const bus = new InProcessTaskEventBus();
  bus.subscribe('k', (committed) => log.push(`bus ${committed.version}`));
  const events: EngineEvents = {
    taskEvent: ({ version }) => log.push(`hook ${version}`),
    taskFinished: ({ state }) => log.push(`finished ${state}`),
  };
  const listener: ChannelListener<number> = {
    openingMessage: () => userMessage('hello'),
    created: () => log.push('created'),
    committed: (commit: Committed) => {
      log.push(`observer ${commit.version}`);
      return commit.version;
    },
    announced: (commit, _published, target) => log.push(`announced ${commit.version} (${target})`),
    endedElsewhere: (t) => ended.push(t),
    engineWriteFailed: () => log.push('engine write failed'),
  };
  const channel = new TaskChannel({ store, bus, logger: silentLogger, events }, 'k', scope, ids, stored, listener, WORDING);
  const publish = (event: TaskEvent) => channel.enqueue(() => channel.publish(event));
  return { channel, log, ended, publish };
}

describe('TaskChannel', () => {
  it('writes events in the order published and fans each out before the next: observer, bus, hooks, then the turn end check', async () => {
    const store = await storeWith();
    const { log, publish } = channelOn(store);
    // Published without waiting, as an agent may.
    const writes = [
      publish(status('TASK_STATE_WORKING', 'on it')),
      publish({ artifactUpdate: { ...ids, artifact: { artifactId: 'a', parts: [{ text: 'x' }] } } }),
      publish(status('TASK_STATE_COMPLETED', 'done')),
    ];
    await Promise.all(writes);
    expect(log).toEqual([
      'created',
      'observer 1',
      'bus 1',
      'hook 1',
      'announced 1 (1)',
      'observer 2',
      'bus 2',
      'hook 2',
      'announced 2 (2)',
      'observer 3',
      'bus 3',
      'hook 3',
      'finished TASK_STATE_COMPLETED',
      'announced 3 (3)',
    ]);
    const stored = await store.get(scope, 'task-1');
    expect(stored!.version).toBe(3);
    expect(stored!.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(stored!.task.history![0]).toEqual(userMessage('hello'));
    expect(stored!.task.artifacts).toHaveLength(1);
  });

  it('a refused event fails the task (FAILED written and fanned out) and rejects to its publisher', async () => {
    const store = await storeWith();
    const { log, publish } = channelOn(store);
    await publish(status('TASK_STATE_WORKING'));
    // A Task event may only create the task.
    await expect(publish({ task: task('TASK_STATE_WORKING') })).rejects.toThrow('a Task event may only create the task');
    const stored = (await store.get(scope, 'task-1'))!;
    expect(stored.task.status.state).toBe('TASK_STATE_FAILED');
    expect(stored.task.status.message?.parts[0]).toEqual({ text: 'The agent failed while processing this task.' });
    expect(log.slice(-5)).toEqual(['observer 2', 'bus 2', 'hook 2', 'finished TASK_STATE_FAILED', 'announced 2 (2)']);
  });

  it('an event for a task another writer ended is refused, and the listener hears the end as stored', async () => {
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const stale = await store.get(scope, 'task-1');
    const { ended, log, publish } = channelOn(store, stale);
    // Another request cancels the task meanwhile.
    const other = channelOn(store, await store.get(scope, 'task-1'));
    await other.publish(status('TASK_STATE_CANCELED', 'canceled elsewhere'));
    await expect(publish(status('TASK_STATE_WORKING', 'still going'))).rejects.toThrow(
      'task task-1 was ended (TASK_STATE_CANCELED) by another request; the event was refused',
    );
    expect(ended.map((t) => t.status.state)).toEqual(['TASK_STATE_CANCELED']);
    expect(log).toEqual([]); // nothing fanned out by this channel
    expect((await store.get(scope, 'task-1'))!.version).toBe(2);
  });

  it('after a version conflict it reads the task again and folds the event on what it now is', async () => {
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const stale = await store.get(scope, 'task-1');
    const { channel, log, publish } = channelOn(store, stale);
    const other = channelOn(store, await store.get(scope, 'task-1'));
    await other.publish({ artifactUpdate: { ...ids, artifact: { artifactId: 'theirs', parts: [{ text: 'x' }] } } });
    await publish(status('TASK_STATE_INPUT_REQUIRED', 'ours'));
    const stored = (await store.get(scope, 'task-1'))!;
    expect(stored.version).toBe(3);
    expect(stored.task.artifacts?.map((a) => a.artifactId)).toEqual(['theirs']);
    expect(stored.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(channel.version).toBe(3);
    expect(log).toEqual(['observer 3', 'bus 3', 'hook 3', 'announced 3 (3)']);
  });

  it('a recheck refuses a write after a conflict on what the task now is', async () => {
    const store = await storeWith(task('TASK_STATE_INPUT_REQUIRED'));
    const stale = await store.get(scope, 'task-1');
    const { channel } = channelOn(store, stale);
    const other = channelOn(store, await store.get(scope, 'task-1'));
    await other.publish(status('TASK_STATE_WORKING'));
    const refusal = new Error('busy now');
    await expect(
      channel.commit({ userMessage: userMessage('again') }, (fresh) =>
        fresh.status.state === 'TASK_STATE_WORKING' ? (refusal as never) : undefined,
      ),
    ).rejects.toBe(refusal);
  });

  it('a store failure reaches the publisher as Unavailable, and nothing is fanned out', async () => {
    const store = await storeWith(task('TASK_STATE_WORKING'));
    const stored = await store.get(scope, 'task-1');
    store.update = async () => {
      throw new Error('disk on fire');
    };
    const { log, publish } = channelOn(store, stored);
    await expect(publish(status('TASK_STATE_COMPLETED'))).rejects.toMatchObject({ kind: 'Unavailable' });
    expect(log).toEqual([]);
  });
});
