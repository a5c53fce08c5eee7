/** The TaskEventBus contract as a test suite; with `makePeer`, two buses on one backend, and `history` when it has one. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { TaskState } from '../protocol/schemas.js';
import type { CommittedEvent, TaskEventBus } from '../engine/seams/task-event-bus.js';
import { contractHarness, type ContractHarnessOptions } from './contract-harness.js';

/**
 * `cleanup` runs after each test for every bus it made, peers included (default: `bus.close?.()`);
 * `timeoutMs` is per test (default 10000).
 */
export interface TaskEventBusContractOptions<B extends TaskEventBus = TaskEventBus> extends ContractHarnessOptions<B> {
  /** A second bus on the same backend (another process): enables the rules across buses. */
  makePeer?: (bus: B) => B | Promise<B>;
  /** Resolves once `bus`'s subscriptions are live (an asynchronous bus): a cancel request sent before may be missed. */
  whenSubscribed?: (bus: B) => Promise<void>;
  /** How long an expected delivery may take, in ms. Default 2000. */
  deliveryMs?: number;
}

interface Context<B> {
  readonly bus: B;
  /** Whether peer() can make a second bus. */
  readonly hasPeer: boolean;
  /** A bus on the same backend (made on first call). */
  peer(): Promise<B>;
  /** How long an expected delivery may take. */
  readonly ms: number;
  /** Waits until `bus`'s subscriptions are live (no-op without `whenSubscribed`). */
  live(bus: B): Promise<void>;
}

type Body<B> = (context: Context<B>) => Promise<void>;
type Test<B> = (rule: string, body: Body<B>) => void;

/** Registers the contract suite for the bus `makeBus` builds; it is called once per test. */
export function describeTaskEventBusContract<B extends TaskEventBus>(
  name: string,
  makeBus: () => B | Promise<B>,
  options: TaskEventBusContractOptions<B> = {},
): void {
  const { describe, test: harnessTest } = contractHarness('describeTaskEventBusContract', options, {
    timeoutMs: 10_000,
    cleanup: (bus: B) => bus.close?.(),
  });
  const deliveryMs = options.deliveryMs ?? 2_000;
  const { makePeer, whenSubscribed } = options;

  const test: Test<B> = (rule, body) =>
    harnessTest(rule, async (made) => {
      const bus = await makeBus();
      made.push(bus);
      let peer: Promise<B> | undefined;
      await body({
        bus,
        hasPeer: makePeer !== undefined,
        ms: deliveryMs,
        peer: () => {
          assert.ok(makePeer, 'this rule needs makePeer');
          peer ??= Promise.resolve(makePeer(bus)).then((p) => {
            made.push(p);
            return p;
          });
          return peer;
        },
        live: async (b) => {
          await whenSubscribed?.(b);
        },
      });
    });

  describe(`TaskEventBus contract: ${name}`, () => {
    describe('delivery', () => defineDelivery(test));
    describe('cancel requests', () => defineCancel(test));
    if (makePeer) describe('two buses on one backend', () => definePeers(test));
    describe('history', () => defineHistory(test));
  });
}

// Fixtures

const newKey = (): string => `bus-${randomUUID()}`;

/** A committed status update of `key`'s task at `version` (the task id names the key, to tell keys apart). */
function committed(key: string, version: number, state: TaskState = 'TASK_STATE_WORKING'): CommittedEvent {
  const status = { state, timestamp: new Date(Date.UTC(2026, 0, 5, 10, 0, version)).toISOString() };
  return {
    event: { statusUpdate: { taskId: key, contextId: `ctx-${key}`, status } },
    task: { id: key, contextId: `ctx-${key}`, status },
    version,
  };
}

/** Publishes in order without waiting in between (as the engine does), then waits for every publish. */
async function publish(bus: TaskEventBus, key: string, versions: number[]): Promise<void> {
  const pending = versions.map((v) => bus.publish(key, committed(key, v)));
  await Promise.all(pending);
}

/** A listener that records what it gets, and lets a test wait for a number of deliveries. */
function recorder(deliveryMs: number, what: string) {
  const events: CommittedEvent[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  return {
    events,
    versions: () => events.map((e) => e.version),
    listener: (event: CommittedEvent) => {
      events.push(event);
      for (const waiter of waiters.filter((w) => events.length >= w.count)) waiter.resolve();
    },
    /** Resolves once `count` events arrived; fails after deliveryMs. */
    received: (count: number): Promise<void> => {
      if (events.length >= count) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`${what}: expected ${count} events within ${deliveryMs} ms, got [${events.map((e) => e.version).join(', ')}]`)),
          deliveryMs,
        );
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
  };
}

/** A cancel listener that counts calls and lets a test wait for them. */
function cancelRecorder(deliveryMs: number, what: string) {
  const counter = recorder(deliveryMs, what);
  return { calls: () => counter.events.length, listener: () => counter.listener(committed('cancel', 1)), called: counter.received };
}

// The rules

function defineDelivery<B extends TaskEventBus>(test: Test<B>): void {
  test('a subscriber receives the events of its key published after subscribe() returns, in order and intact', async ({ bus, ms }) => {
    const key = newKey();
    const got = recorder(ms, 'subscriber');
    bus.subscribe(key, got.listener);
    // No waiting after subscribe(): an event published right away must not be missed.
    await publish(bus, key, [1, 2, 3, 4, 5]);
    await got.received(5);
    assert.deepEqual(
      got.events,
      [1, 2, 3, 4, 5].map((v) => committed(key, v)),
    );
  });

  test('every subscriber of a key receives every event, in order', async ({ bus, ms }) => {
    const key = newKey();
    const subscribers = [recorder(ms, 'first'), recorder(ms, 'second'), recorder(ms, 'third')];
    for (const s of subscribers) bus.subscribe(key, s.listener);
    await publish(bus, key, [1, 2, 3]);
    for (const s of subscribers) {
      await s.received(3);
      assert.deepEqual(s.versions(), [1, 2, 3]);
    }
  });

  test("a subscriber never receives another key's events", async ({ bus, ms }) => {
    const [a, b] = [newKey(), newKey()];
    const gotA = recorder(ms, 'key A');
    const gotB = recorder(ms, 'key B');
    bus.subscribe(a, gotA.listener);
    bus.subscribe(b, gotB.listener);
    await publish(bus, a, [1]);
    await publish(bus, b, [1, 2, 3]);
    await gotB.received(3);
    await publish(bus, a, [2]);
    await gotA.received(2);
    assert.deepEqual(gotA.events, [committed(a, 1), committed(a, 2)]);
    assert.deepEqual(
      gotB.events,
      [1, 2, 3].map((v) => committed(b, v)),
    );
  });

  test('after unsubscribe() a listener receives nothing more, and subscriberCount drops back', async ({ bus, ms }) => {
    const key = newKey();
    const before = bus.subscriberCount;
    const leaving = recorder(ms, 'leaving');
    const staying = recorder(ms, 'staying');
    const unsubscribe = bus.subscribe(key, leaving.listener);
    bus.subscribe(key, staying.listener);
    assert.equal(bus.subscriberCount, before + 2);
    await publish(bus, key, [1]);
    await leaving.received(1);
    await staying.received(1);
    unsubscribe();
    assert.equal(bus.subscriberCount, before + 1);
    await publish(bus, key, [2, 3]);
    // Both are called for each event, so once the one staying has them, the other would have too.
    await staying.received(3);
    assert.deepEqual(leaving.versions(), [1]);
  });

  test('unsubscribe() is idempotent, and once every subscriber left the count is back where it was', async ({ bus }) => {
    const before = bus.subscriberCount;
    const keys = [newKey(), newKey()];
    const stops = keys.flatMap((key) => [bus.subscribe(key, () => {}), bus.subscribe(key, () => {})]);
    assert.equal(bus.subscriberCount, before + 4);
    stops[0]();
    stops[0]();
    assert.equal(bus.subscriberCount, before + 3);
    for (const stop of stops) stop();
    assert.equal(bus.subscriberCount, before);
  });

  test('a subscriber that leaves and comes back receives the events published after it came back', async ({ bus, ms }) => {
    const key = newKey();
    const first = recorder(ms, 'first time');
    const stop = bus.subscribe(key, first.listener);
    await publish(bus, key, [1]);
    await first.received(1);
    stop();
    const again = recorder(ms, 'second time');
    bus.subscribe(key, again.listener);
    await publish(bus, key, [2, 3]);
    await again.received(2);
    assert.deepEqual(again.versions().slice(-2), [2, 3]);
    assert.deepEqual(first.versions(), [1]);
  });

  test('a version at or below one already delivered is not delivered again', async ({ bus, ms }) => {
    const key = newKey();
    const got = recorder(ms, 'subscriber');
    bus.subscribe(key, got.listener);
    await publish(bus, key, [1, 2]);
    await got.received(2);
    await publish(bus, key, [2, 1, 3]);
    await got.received(3);
    // One more, so a late duplicate would show before we look.
    await publish(bus, key, [4]);
    await got.received(4);
    assert.deepEqual(got.versions(), [1, 2, 3, 4]);
  });
}

function defineCancel<B extends TaskEventBus>(test: Test<B>): void {
  test("requestCancel(key) reaches every onCancelRequest listener of that key, and no other key's", async ({ bus, live, ms }) => {
    const [a, b] = [newKey(), newKey()];
    const onA1 = cancelRecorder(ms, 'first listener of A');
    const onA2 = cancelRecorder(ms, 'second listener of A');
    const onB = cancelRecorder(ms, 'listener of B');
    bus.onCancelRequest(a, onA1.listener);
    bus.onCancelRequest(a, onA2.listener);
    bus.onCancelRequest(b, onB.listener);
    await live(bus);
    bus.requestCancel(a);
    await onA1.called(1);
    await onA2.called(1);
    // Then B: once its listener ran, a stray call for A's request would have reached it first.
    bus.requestCancel(b);
    await onB.called(1);
    assert.deepEqual([onA1.calls(), onA2.calls(), onB.calls()], [1, 1, 1]);
  });

  test('a removed cancel listener is not called', async ({ bus, live, ms }) => {
    const key = newKey();
    const removed = cancelRecorder(ms, 'removed');
    const kept = cancelRecorder(ms, 'kept');
    const remove = bus.onCancelRequest(key, removed.listener);
    bus.onCancelRequest(key, kept.listener);
    await live(bus);
    remove();
    remove();
    bus.requestCancel(key);
    await kept.called(1);
    assert.equal(removed.calls(), 0);
  });

  test('cancel listeners are not event subscribers', async ({ bus }) => {
    const before = bus.subscriberCount;
    const remove = bus.onCancelRequest(newKey(), () => {});
    assert.equal(bus.subscriberCount, before);
    remove();
  });
}

function definePeers<B extends TaskEventBus>(test: Test<B>): void {
  test('a subscriber on one bus receives, in order, the events published on the other', async ({ bus, peer, live, ms }) => {
    const other = await peer();
    const key = newKey();
    const here = recorder(ms, 'subscriber on the first bus');
    const there = recorder(ms, 'subscriber on the second bus');
    bus.subscribe(key, here.listener);
    other.subscribe(key, there.listener);
    await live(bus);
    await live(other);
    await publish(other, key, [1, 2, 3]);
    await publish(bus, key, [4, 5]);
    await here.received(5);
    await there.received(5);
    assert.deepEqual(
      here.events,
      [1, 2, 3, 4, 5].map((v) => committed(key, v)),
    );
    assert.deepEqual(there.versions(), [1, 2, 3, 4, 5]);
  });

  test('a version one bus published is not delivered again when the other publishes it', async ({ bus, peer, live, ms }) => {
    const other = await peer();
    const key = newKey();
    const got = recorder(ms, 'subscriber');
    bus.subscribe(key, got.listener);
    await live(bus);
    await publish(bus, key, [1, 2]);
    await publish(other, key, [2, 1, 3]);
    await got.received(3);
    await publish(other, key, [4]);
    await got.received(4);
    assert.deepEqual(got.versions(), [1, 2, 3, 4]);
  });

  test('requestCancel on one bus reaches the onCancelRequest listeners on the other', async ({ bus, peer, live, ms }) => {
    const other = await peer();
    const key = newKey();
    const runner = cancelRecorder(ms, 'listener on the bus running the turn');
    other.onCancelRequest(key, runner.listener);
    await live(other);
    bus.requestCancel(key);
    await runner.called(1);
  });

  test('subscriberCount counts only the subscriptions of its own bus', async ({ bus, peer }) => {
    const other = await peer();
    const [mine, theirs] = [bus.subscriberCount, other.subscriberCount];
    const stop = bus.subscribe(newKey(), () => {});
    assert.equal(bus.subscriberCount, mine + 1);
    assert.equal(other.subscriberCount, theirs);
    stop();
  });
}

function defineHistory<B extends TaskEventBus>(test: Test<B>): void {
  const historyOf = (bus: TaskEventBus) => {
    assert.ok(bus.history, 'history() is optional; this rule runs only where it exists');
    return bus.history.bind(bus);
  };

  test('history(key, v) returns the events after version v, oldest first, and [] when there are none yet', async ({ bus }) => {
    if (!bus.history) return; // optional: a bus without it resumes nothing
    const history = historyOf(bus);
    const key = newKey();
    await publish(bus, key, [1, 2, 3, 4]);
    assert.deepEqual(await history(key, 2), [committed(key, 3), committed(key, 4)]);
    assert.deepEqual(
      await history(key, 0),
      [1, 2, 3, 4].map((v) => committed(key, v)),
    );
    assert.deepEqual(await history(key, 4), []);
  });

  test('history() of a key whose events the bus does not hold is undefined', async ({ bus }) => {
    if (!bus.history) return;
    assert.equal(await historyOf(bus)(newKey(), 3), undefined);
  });

  test('history() keeps each version once, in version order, whatever was published again', async ({ bus }) => {
    if (!bus.history) return;
    const key = newKey();
    await publish(bus, key, [1, 2, 2, 1, 3]);
    assert.deepEqual(
      (await historyOf(bus)(key, 0))?.map((e) => e.version),
      [1, 2, 3],
    );
  });

  test('history() on one bus includes what the other published', async ({ bus, peer, hasPeer }) => {
    if (!bus.history || !hasPeer) return;
    const other = await peer();
    const key = newKey();
    await publish(other, key, [1, 2]);
    assert.deepEqual(await historyOf(bus)(key, 1), [committed(key, 2)]);
  });
}
