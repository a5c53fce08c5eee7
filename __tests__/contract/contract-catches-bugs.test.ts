/**
 * The contract suite must fail a store that breaks the contract, or it proves nothing. Its tests are
 * collected with fake describe/it, then run here against a last-write-wins store (update ignores
 * expectedVersion) and, as a control, against the correct store.
 */
import {
  InMemoryTaskStore,
  TaskVersionConflictError,
  describeTaskStoreContract,
  type Task,
  type TaskScope,
  type TaskStore,
} from 'a2a-express-kit/testing';
import { isTerminal } from 'a2a-express-kit';

interface Collected {
  name: string;
  body: () => Promise<void>;
}

function collect(makeStore: () => TaskStore): Collected[] {
  const collected: Collected[] = [];
  const path: string[] = [];
  describeTaskStoreContract('under test', makeStore, {
    describe: (name, body) => {
      path.push(name);
      body();
      path.pop();
    },
    it: (name, body) => {
      collected.push({ name: [...path, name].join(' > '), body });
    },
  });
  return collected;
}

async function failures(tests: Collected[]): Promise<string[]> {
  const failed: string[] = [];
  for (const t of tests) {
    await t.body().catch(() => failed.push(t.name));
  }
  return failed;
}

/** Writes whatever it is given over the stored task: the bug versioned writes exist to prevent. */
class LastWriteWinsStore extends InMemoryTaskStore {
  override async update(scope: TaskScope, given: Task, expectedVersion: number): Promise<number> {
    const task = structuredClone(given); // copied at the call, as the contract asks: only the versioning is broken
    for (;;) {
      const current = await this.get(scope, task.id);
      // Missing or terminal: let the real store answer with its usual error.
      if (!current || isTerminal(current.task.status.state)) return super.update(scope, task, expectedVersion);
      try {
        return await super.update(scope, task, current.version);
      } catch (error) {
        if (!(error instanceof TaskVersionConflictError)) throw error;
      }
    }
  }
}

/** Retention that removes everything before the cutoff at once, whatever the limit. */
class UnboundedSweepStore extends InMemoryTaskStore {
  override removeFinished(finishedBefore: string): Promise<number> {
    return super.removeFinished(finishedBefore, Number.MAX_SAFE_INTEGER);
  }
}

/** Retention that removes the tasks but says it removed none (a sweeper would stop at once). */
class SilentSweepStore extends InMemoryTaskStore {
  override async removeFinished(finishedBefore: string, limit: number): Promise<number> {
    await super.removeFinished(finishedBefore, limit);
    return 0;
  }
}

describe('the contract suite catches a broken store', () => {
  it('passes every test on the correct store (control)', async () => {
    const tests = collect(() => new InMemoryTaskStore());
    expect(tests.length).toBeGreaterThan(30);
    expect(await failures(tests)).toEqual([]);
  });

  it('fails the compare-and-set and concurrency tests on a last-write-wins store', async () => {
    const failed = await failures(collect(() => new LastWriteWinsStore()));
    expect(failed).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/compare-and-set > update\(\) at a stale expectedVersion/),
        expect.stringMatching(/compare-and-set > update\(\) at a version the task has not reached/),
        expect.stringMatching(/concurrency > of 50 concurrent updates/),
        expect.stringMatching(/concurrency > concurrent read-modify-write writers/),
        expect.stringMatching(/change hint > an artifact change at a stale version/),
      ]),
    );
    // Only the version rules break (the failure-propagation tests provoke a conflict too); scoping,
    // listing, clone isolation and large tasks still hold for this store.
    for (const name of failed) expect(name).toMatch(/> (compare-and-set|concurrency|change hint|failure propagation) >/);
  });

  it('fails the retention tests on a store whose removeFinished() ignores the limit or miscounts', async () => {
    const unbounded = await failures(collect(() => new UnboundedSweepStore()));
    expect(unbounded).toEqual([expect.stringMatching(/retention .* > limit bounds each call/)]);
    const silent = await failures(collect(() => new SilentSweepStore()));
    expect(silent.length).toBeGreaterThanOrEqual(4);
    for (const name of silent) expect(name).toMatch(/> retention .* >/);
  });
});
