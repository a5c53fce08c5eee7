/** Deadlines on seam calls: a call that never settles fails with SeamTimeoutError; the rest pass through untouched. */
import { Deadlines, deadlineHook, SeamTimeoutError } from '../../../lib/engine/deadlines';
import { interceptSeam } from '../../../lib/engine/seams/intercept';

const never = <T>(): Promise<T> => new Promise<T>(() => {});

describe('Deadlines', () => {
  it('rejects a call that never settles with SeamTimeoutError naming it', async () => {
    const deadlines = new Deadlines(20);
    const error = await deadlines.bound(never(), 'store.get()').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SeamTimeoutError);
    expect((error as SeamTimeoutError).message).toBe('store.get() did not answer within 20 ms');
  });

  it('passes values and rejections through, and times out only the calls that hang', async () => {
    const deadlines = new Deadlines(30);
    const failure = new Error('store down');
    const results = await Promise.allSettled([
      deadlines.bound(Promise.resolve(1), 'a'),
      deadlines.bound(never(), 'b'),
      deadlines.bound(Promise.reject(failure), 'c'),
      deadlines.bound(new Promise((resolve) => setTimeout(resolve, 5, 4)), 'd'),
      deadlines.bound(never(), 'e'),
    ]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : ((r.reason as Error).name ?? r.reason)))).toEqual([
      1,
      'SeamTimeoutError',
      'Error',
      4,
      'SeamTimeoutError',
    ]);
    expect((results[2] as PromiseRejectedResult).reason).toBe(failure);
  });

  it('gives a call with extra time its own longer deadline', async () => {
    const deadlines = new Deadlines(10);
    let settled = false;
    const waiting = deadlines.bound(new Promise((resolve) => setTimeout(resolve, 40, 'lease')), 'leases.acquire()', 100);
    void waiting.then(() => (settled = true));
    // A plain call made after it times out first; the long one is still waiting, then resolves.
    await expect(deadlines.bound(never(), 'x')).rejects.toBeInstanceOf(SeamTimeoutError);
    expect(settled).toBe(false);
    await expect(waiting).resolves.toBe('lease');
  });
});

describe('the deadline hook', () => {
  class Store {
    #hits = 0;
    get hits(): number {
      return this.#hits;
    }
    get(id: string): Promise<string> {
      this.#hits++;
      return id === 'hang' ? never() : Promise.resolve(`task ${id}`);
    }
    close(): Promise<void> {
      this.#hits = -1;
      return never();
    }
  }

  it('bounds the named methods, runs every method on the original (private fields work), and reads getters from it', async () => {
    const store = new Store();
    const bounded = interceptSeam(store, 'taskStore', [deadlineHook(new Deadlines(20))]);
    await expect(bounded.get('1')).resolves.toBe('task 1');
    await expect(bounded.get('hang')).rejects.toThrow('taskStore.get() did not answer within 20 ms');
    expect(bounded.hits).toBe(2);
    // Not bounded: passes through as it is (never settles here, and that is the store's business).
    const closing = bounded.close();
    expect(bounded.hits).toBe(-1);
    expect(closing).toBeInstanceOf(Promise);
  });
});
