/** The seam interceptor and its deadline hook: a call that never settles fails with SeamTimeoutError, once per request; the rest pass through untouched. */
import { Deadlines, deadlineHook, SeamTimeoutError } from '../../../lib/engine/deadlines';
import { interceptSeam, type SeamCall, type SeamHook } from '../../../lib/engine/seams/intercept';
import { immediateReadOf, immediateWritesOf } from '../../../lib/engine/immediate-writes';
import { InMemoryTaskStore } from '../../../lib/backends/memory/in-memory-task-store';
import { runWithA2AContext } from '../../../lib/context/carrier';

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

  it("is the request's: after one of its calls timed out, its next calls fail unmade; another request's are made", async () => {
    const store = new Store();
    const bounded = interceptSeam(store, 'taskStore', [deadlineHook(new Deadlines(20))]);
    const request = { caller: { id: 'a', authenticated: false }, tenant: '' };
    const other = { caller: { id: 'b', authenticated: false }, tenant: '' };
    await runWithA2AContext(request, async () => {
      await expect(bounded.get('hang')).rejects.toBeInstanceOf(SeamTimeoutError);
      // The second call of the same request: refused at once, never made, so the request waits one deadline in all.
      await expect(bounded.get('1')).rejects.toBeInstanceOf(SeamTimeoutError);
    });
    expect(store.hits).toBe(1);
    await runWithA2AContext(other, () => expect(bounded.get('1')).resolves.toBe('task 1'));
    expect(store.hits).toBe(2);
  });
});

describe('interceptSeam', () => {
  const order: string[] = [];
  const named = (name: string, wraps: (call: SeamCall) => boolean): SeamHook => ({
    wraps,
    around: (call, args, next) => {
      order.push(`${name} ${call.name}`);
      return next(args);
    },
  });

  it('returns the seam itself when no hook wraps any of its methods', () => {
    const store = new InMemoryTaskStore();
    expect(interceptSeam(store, 'taskStore', [])).toBe(store);
    expect(interceptSeam(store, 'taskStore', [named('push only', (call) => call.seam === 'pushOutbox')])).toBe(store);
  });

  it('runs the hooks that wrap a call, outermost first, each once per call', async () => {
    order.length = 0;
    const store = interceptSeam(new InMemoryTaskStore(), 'taskStore', [
      named('outer', () => true),
      named('reads', (call) => call.method === 'get'),
      named('inner', () => true),
    ]);
    await store.get({ tenant: '', owner: 'o' }, 'missing');
    await store.list({ tenant: '', owner: 'o' }, { pageSize: 10 });
    expect(order).toEqual([
      'outer taskStore.get()',
      'reads taskStore.get()',
      'inner taskStore.get()',
      'outer taskStore.list()',
      'inner taskStore.list()',
    ]);
  });

  it("keeps the in-memory store's within-call writes on offer only while every hook on them skips them", () => {
    const store = new InMemoryTaskStore();
    expect(immediateWritesOf(interceptSeam(store, 'taskStore', [deadlineHook(new Deadlines(20))]))).toBeDefined();
    expect(immediateReadOf(interceptSeam(store, 'taskStore', [deadlineHook(new Deadlines(20))]))).toBeDefined();
    const measured = interceptSeam(store, 'taskStore', [deadlineHook(new Deadlines(20)), named('metrics', () => true)]);
    expect(immediateWritesOf(measured)).toBeUndefined();
    expect(immediateReadOf(measured)).toBeUndefined();
  });
});
