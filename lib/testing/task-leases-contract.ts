/** The TaskLeases contract as a test suite, two or three instances on one backend as replicas would be. */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LeasedTask, TaskLease, TaskLeases } from '../engine/seams/task-leases.js';
import { contractHarness, type ContractHarnessOptions } from './contract-harness.js';

/**
 * `cleanup` runs after each test for every instance it made (default: its `close()`); `timeoutMs`
 * is per test (default 20000).
 */
export interface TaskLeasesContractOptions<L extends TaskLeases = TaskLeases> extends ContractHarnessOptions<L> {
  /** The lease time to live the factory configures, in ms. Default: the instance's sweepIntervalMs. */
  ttlMs?: number;
  /** Makes an instance behave as if its process died: no renewal, no release. Default: its `close()`. */
  stop?: (leases: L) => void | Promise<void>;
}

interface Context<L> {
  /** Another instance on the same backend (another replica). */
  make(): Promise<L>;
  /** The lease time to live. */
  readonly ttl: number;
  /** Makes `leases` behave as if its process died. */
  kill(leases: L): Promise<void>;
}

type Test<L> = (rule: string, body: (context: Context<L>) => Promise<void>) => void;

type Closable = { close?: () => void | Promise<void> };

/** Registers the contract suite for the leases `makeLeases` builds; each test calls it two or three times. */
export function describeTaskLeasesContract<L extends TaskLeases>(
  name: string,
  makeLeases: () => L | Promise<L>,
  options: TaskLeasesContractOptions<L> = {},
): void {
  const close = (leases: L) => (leases as Closable).close?.();
  const { describe, test: harnessTest } = contractHarness('describeTaskLeasesContract', options, { timeoutMs: 20_000, cleanup: close });
  const stop = options.stop ?? close;

  const test: Test<L> = (rule, body) =>
    harnessTest(rule, async (made) => {
      const first = await makeLeases();
      made.push(first);
      let handed = false;
      await body({
        make: async () => {
          // The first call hands out the instance made above (its ttl was read from it).
          if (!handed) {
            handed = true;
            return first;
          }
          const next = await makeLeases();
          made.push(next);
          return next;
        },
        ttl: options.ttlMs ?? first.sweepIntervalMs,
        kill: async (leases) => {
          await stop(leases);
        },
      });
    });

  describe(`TaskLeases contract: ${name}`, () => {
    describe('holding', () => defineHolding(test));
    describe('waiting', () => defineWaiting(test));
    describe('expiry', () => defineExpiry(test));
  });
}

// Fixtures

function newTask(): { key: string; task: LeasedTask } {
  const task = { scope: { tenant: `tenant-${randomUUID()}`, owner: 'alice' }, taskId: `task-${randomUUID()}` };
  return { key: `lease-${task.scope.tenant}-${task.taskId}`, task };
}

async function mustAcquire(leases: TaskLeases, key: string, task: LeasedTask, waitMs = 0): Promise<TaskLease> {
  const lease = await leases.acquire(key, task, waitMs);
  assert.ok(lease, `acquire(${key}) should take the lease`);
  return lease;
}

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now();
  const result = await run();
  return [result, Date.now() - started];
}

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Calls claimExpired() on every instance at once, until one of them returns `task`; all results. */
async function claimConcurrently(instances: TaskLeases[], task: LeasedTask, ttl: number): Promise<LeasedTask[][]> {
  const started = Date.now();
  for (;;) {
    const results = await Promise.all(instances.map((leases) => leases.claimExpired()));
    if (results.some((claimed) => claimed.some((t) => t.taskId === task.taskId))) return results;
    assert.ok(Date.now() - started < 10 * ttl, `nobody claimed ${task.taskId} within ${10 * ttl} ms`);
    // Expiry has no event to wait for: look again in a tenth of the time to live.
    await pause(Math.max(5, ttl / 10));
  }
}

const mine = (claimed: LeasedTask[], task: LeasedTask) => claimed.filter((t) => t.taskId === task.taskId);

// The rules

// Bounds in units of the lease's ttl (give the factory a few hundred ms): 1 ttl for "at once", 3 for a takeover, 10 to
// find an expired lease, 20 ms slack below. At 500 ms on a loaded 2-core box the worst seen was 884 of 5000 (claimExpired).

function defineHolding<L extends TaskLeases>(test: Test<L>): void {
  test('isHeld(), when offered, is true on every instance while a lease is held, false once released', async ({ make }) => {
    const [a, b] = [await make(), await make()];
    if (!a.isHeld) return;
    const { key, task } = newTask();
    assert.equal(await b.isHeld!(key), false);
    const lease = await mustAcquire(a, key, task);
    assert.equal(await a.isHeld(key), true);
    assert.equal(await b.isHeld!(key), true);
    await lease.release();
    assert.equal(await b.isHeld!(key), false);
  });

  test('acquire() takes a free lease at once; it is not lost', async ({ make, ttl }) => {
    const a = await make();
    const { key, task } = newTask();
    const [lease, ms] = await timed(() => a.acquire(key, task, 10 * ttl));
    assert.ok(lease);
    assert.equal(lease.lost, false);
    assert.ok(ms < ttl, `took ${ms} ms`);
    await lease.release();
  });

  test('of concurrent acquires from two instances, exactly one gets the lease', async ({ make }) => {
    const [a, b] = [await make(), await make()];
    const { key, task } = newTask();
    const attempts = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).acquire(key, task, 0)));
    const winners = attempts.filter((lease) => lease !== undefined);
    assert.equal(winners.length, 1, `exactly one acquire wins, got ${winners.length}`);
    await winners[0]!.release();
  });

  test('a held lease is refused to another instance, and to the same one, until it is released', async ({ make }) => {
    const [a, b] = [await make(), await make()];
    const { key, task } = newTask();
    const lease = await mustAcquire(a, key, task);
    assert.equal(await b.acquire(key, task, 0), undefined);
    assert.equal(await a.acquire(key, task, 0), undefined);
    await lease.release();
    const again = await mustAcquire(b, key, task);
    await again.release();
  });

  test('leases of different tasks are independent', async ({ make }) => {
    const [a, b] = [await make(), await make()];
    const one = newTask();
    const two = newTask();
    const first = await mustAcquire(a, one.key, one.task);
    const second = await mustAcquire(b, two.key, two.task);
    await Promise.all([first.release(), second.release()]);
  });

  test('release() is idempotent and never releases the lease another holder took since', async ({ make }) => {
    const [a, b, c] = [await make(), await make(), await make()];
    const { key, task } = newTask();
    const lease = await mustAcquire(a, key, task);
    await lease.release();
    await lease.release();
    const taken = await mustAcquire(b, key, task);
    await lease.release();
    assert.equal(await c.acquire(key, task, 0), undefined, "the old holder's release() left the new holder's lease alone");
    assert.equal(taken.lost, false);
    await taken.release();
  });

  test('renewals keep a lease past its time to live', async ({ make, ttl }) => {
    const [a, b] = [await make(), await make()];
    const { key, task } = newTask();
    const lease = await mustAcquire(a, key, task);
    // Waiting for it three times its time to live is the wait.
    const [refused, ms] = await timed(() => b.acquire(key, task, 3 * ttl));
    assert.equal(refused, undefined, 'a renewed lease does not expire');
    assert.ok(ms >= 3 * ttl - 20, `the wait lasted ${ms} ms`);
    assert.equal(lease.lost, false);
    await lease.release();
  });
}

function defineWaiting<L extends TaskLeases>(test: Test<L>): void {
  test('a waiting acquire() gets the lease soon after release()', async ({ make, ttl }) => {
    const [a, b] = [await make(), await make()];
    const { key, task } = newTask();
    const lease = await mustAcquire(a, key, task);
    const waiting = b.acquire(key, task, 20 * ttl);
    // Let the waiter get to waiting: one attempt and a subscription, well under the ttl.
    await pause(ttl / 2);
    const [next, ms] = await timed(async () => {
      await lease.release();
      return waiting;
    });
    assert.ok(next, 'the waiter gets the lease');
    assert.ok(ms < ttl, `handed over ${ms} ms after release (the lease itself would not have expired: it was renewed)`);
    await next.release();
  });

  test('acquire() gives up after waitMs and resolves with undefined', async ({ make, ttl }) => {
    const [a, b] = [await make(), await make()];
    const { key, task } = newTask();
    const lease = await mustAcquire(a, key, task);
    const waitMs = Math.ceil(ttl / 2);
    const [refused, ms] = await timed(() => b.acquire(key, task, waitMs));
    assert.equal(refused, undefined);
    assert.ok(ms >= waitMs - 20 && ms < waitMs + 1_000, `waited ${ms} ms for waitMs ${waitMs}`);
    assert.equal(await b.acquire(key, task, 0), undefined);
    await lease.release();
  });

  test('acquire() with waitMs 0 answers at once', async ({ make, ttl }) => {
    const [a, b] = [await make(), await make()];
    const { key, task } = newTask();
    const lease = await mustAcquire(a, key, task);
    const [refused, ms] = await timed(() => b.acquire(key, task, 0));
    assert.equal(refused, undefined);
    assert.ok(ms < ttl, `took ${ms} ms`);
    await lease.release();
  });

  test('of several waiters, one gets the lease at each release', async ({ make, ttl }) => {
    const [a, b, c] = [await make(), await make(), await make()];
    const { key, task } = newTask();
    const lease = await mustAcquire(a, key, task);
    const waiters = [b.acquire(key, task, 20 * ttl), c.acquire(key, task, 20 * ttl)];
    await lease.release();
    const first = await Promise.race(waiters.map((w) => w.then((l) => l)));
    assert.ok(first, 'one waiter gets it');
    await first.release();
    const both = await Promise.all(waiters);
    assert.ok(
      both.every((l) => l !== undefined),
      'the other gets it after the first released',
    );
    await Promise.all(both.map((l) => l!.release()));
  });
}

function defineExpiry<L extends TaskLeases>(test: Test<L>): void {
  test('the lease of a holder that stopped renewing expires, and another instance can take it', async ({ make, ttl, kill }) => {
    const [a, b] = [await make(), await make()];
    const { key, task } = newTask();
    await mustAcquire(a, key, task);
    await kill(a);
    const [lease, ms] = await timed(() => b.acquire(key, task, 10 * ttl));
    assert.ok(lease, 'taken once expired');
    assert.ok(ms < 3 * ttl, `took ${ms} ms`);
    await lease.release();
  });

  test('claimExpired() returns the task of a holder that stopped renewing to exactly one of two concurrent claimers, once', async ({
    make,
    ttl,
    kill,
  }) => {
    const [dead, b, c] = [await make(), await make(), await make()];
    const { key, task } = newTask();
    await mustAcquire(dead, key, task);
    await kill(dead);
    const results = await claimConcurrently([b, c], task, ttl);
    const claims = results.flatMap((claimed) => mine(claimed, task));
    assert.equal(claims.length, 1, `exactly one claimer gets the task, got ${claims.length}`);
    assert.deepEqual(claims[0], task);
    const later = await Promise.all([b.claimExpired(), c.claimExpired()]);
    assert.deepEqual(
      later.flatMap((claimed) => mine(claimed, task)),
      [],
      'a claimed task is not returned again',
    );
  });

  test('claimExpired() never returns a task whose lease is held or was released', async ({ make, ttl }) => {
    const [a, b] = [await make(), await make()];
    const held = newTask();
    const released = newTask();
    const holding = await mustAcquire(a, held.key, held.task);
    await (await mustAcquire(a, released.key, released.task)).release();
    // Let both outlive their first time to live: the refused wait is the wait.
    assert.equal(await b.acquire(held.key, held.task, 2 * ttl), undefined);
    const claimed = await b.claimExpired();
    assert.deepEqual(mine(claimed, held.task), []);
    assert.deepEqual(mine(claimed, released.task), []);
    await holding.release();
    assert.deepEqual(mine(await b.claimExpired(), held.task), []);
  });

  test('a task claimed and leased again by the claimer can expire and be claimed again', async ({ make, ttl, kill }) => {
    const [dead, claimer, other] = [await make(), await make(), await make()];
    const { key, task } = newTask();
    await mustAcquire(dead, key, task);
    await kill(dead);
    await claimConcurrently([claimer], task, ttl);
    // The claimer settles it under the lease, and dies too before releasing.
    await mustAcquire(claimer, key, task, 10 * ttl);
    await kill(claimer);
    const results = await claimConcurrently([other], task, ttl);
    assert.deepEqual(mine(results[0], task), [task]);
  });

  test('sweepIntervalMs is a positive number of ms', async ({ make }) => {
    const a = await make();
    assert.ok(Number.isFinite(a.sweepIntervalMs) && a.sweepIntervalMs > 0);
  });
}
