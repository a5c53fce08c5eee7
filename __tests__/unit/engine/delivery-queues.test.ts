/**
 * Push delivery queues without HTTP: per (task, config) one delivery at a time in version order,
 * each in its event's async context, removed from the outbox once done; a final delivery tells the
 * dispatcher; queues are dropped when empty and, after a close, what is left is only in the outbox.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DeliveryQueues, type DeliveryQueuesOwner, type RunIn } from '../../../lib/engine/push/delivery-queues';
import { InMemoryPushOutbox, type PushDelivery } from '../../../lib/engine/seams/push-outbox';
import { recordingLogger } from '../../push/helpers';
import { deferred, type Deferred } from '../../helpers/async';
import { scope } from './engine-fixtures';

const runHere: RunIn = (fn) => fn();

const delivery = (version: number, configId = 'c1', final = false): PushDelivery => ({
  id: `${configId}-v${version}`,
  scope,
  taskId: 'task-1',
  configId,
  version,
  body: '{}',
  contentType: 'application/a2a+json',
  final,
  attempts: 0,
});

/** Queues whose deliverer records each delivery and holds it until `finish(id)`. */
async function harness() {
  const outbox = new InMemoryPushOutbox();
  const logger = recordingLogger();
  const started: string[] = [];
  const waiting = new Map<string, Deferred>();
  const finals: string[] = [];
  let drained = 0;
  const abort = new AbortController();
  const owner: DeliveryQueuesOwner = { finalDone: async (_scope, taskId) => void finals.push(taskId), drained: () => void drained++ };
  const deliverer = {
    deliver: (d: PushDelivery) => {
      started.push(d.id);
      const done = deferred();
      waiting.set(d.id, done);
      return done.promise;
    },
  };
  const queues = new DeliveryQueues({ deliverer, outbox, logger, signal: abort.signal, owner });
  const add = async (...deliveries: PushDelivery[]) => {
    await outbox.add(deliveries);
    for (const d of deliveries) queues.add({ delivery: d, run: runHere });
  };
  const finish = async (id: string, error?: Error) => {
    const done = waiting.get(id)!;
    if (error) done.reject(error);
    else done.resolve();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { queues, outbox, logger, started, finals, abort, add, finish, drained: () => drained };
}

describe('DeliveryQueues', () => {
  it("delivers a config's deliveries one at a time in version order; an older one taken over later goes behind the one in flight", async () => {
    const h = await harness();
    await h.add(delivery(1), delivery(3));
    await h.add(delivery(2)); // e.g. taken over from a durable outbox after a later live event
    expect(h.started).toEqual(['c1-v1']);
    expect(h.queues.queued).toBe(3);
    await h.finish('c1-v1');
    expect(h.started).toEqual(['c1-v1', 'c1-v2']);
    await h.finish('c1-v2');
    await h.finish('c1-v3');
    expect(h.started).toEqual(['c1-v1', 'c1-v2', 'c1-v3']);
    expect(h.outbox.size).toBe(0);
    expect(h.queues.size).toBe(0);
    expect(h.queues.queued).toBe(0);
    expect(h.drained()).toBe(1);
  });

  it('delivers to different configs side by side', async () => {
    const h = await harness();
    await h.add(delivery(1, 'c1'), delivery(1, 'c2'));
    expect(h.started).toEqual(['c1-v1', 'c2-v1']);
    expect(h.queues.size).toBe(2);
  });

  it("runs each delivery in its event's async context", async () => {
    const context = new AsyncLocalStorage<string>();
    const seen: Array<string | undefined> = [];
    const queues = new DeliveryQueues({
      deliverer: { deliver: async () => void seen.push(context.getStore()) },
      outbox: new InMemoryPushOutbox(),
      logger: recordingLogger(),
      signal: new AbortController().signal,
      owner: { finalDone: async () => undefined, drained: () => undefined },
    });
    const run = context.run('the producing request', () => AsyncLocalStorage.snapshot());
    queues.add({ delivery: delivery(1), run });
    await queues.settled();
    expect(seen).toEqual(['the producing request']);
  });

  it('tells the dispatcher when a final delivery is done, and goes on after a delivery that failed unexpectedly', async () => {
    const h = await harness();
    await h.add(delivery(1), delivery(2, 'c1', true));
    await h.finish('c1-v1', new Error('boom'));
    expect(h.logger.lines.map((line) => line.message)).toEqual(['push notifications: a delivery failed unexpectedly']);
    expect(h.finals).toEqual([]);
    await h.finish('c1-v2');
    expect(h.finals).toEqual(['task-1']);
    expect(h.outbox.size).toBe(0);
  });

  it('drops what is queued once closed, leaving it in the outbox, and queues nothing more', async () => {
    const h = await harness();
    await h.add(delivery(1), delivery(2));
    h.abort.abort();
    await h.finish('c1-v1');
    await h.queues.settled();
    expect(h.queues.queued).toBe(0);
    expect(h.queues.size).toBe(0);
    expect(h.outbox.size).toBe(2);
    await h.add(delivery(3));
    expect(h.started).toEqual(['c1-v1']);
    expect(h.queues.size).toBe(0);
  });
});
