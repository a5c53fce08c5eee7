// StatementBatch (PostgreSQL backend): one statement in flight per kind; requests made meanwhile share the next one.
import { StatementBatch } from '../../lib/backends/postgres/postgres-statement-batch.js';

function controlledRun() {
  const calls: { items: readonly number[]; finish: (error?: Error) => void }[] = [];
  const run = (items: readonly number[]) =>
    new Promise<readonly string[]>((resolve, reject) => {
      calls.push({ items, finish: (error) => (error ? reject(error) : resolve(items.map((item) => `r${item}`))) });
    });
  return { calls, run };
}

describe('StatementBatch', () => {
  it('sends a lone request at once, and gathers the ones made while it runs into one statement', async () => {
    const { calls, run } = controlledRun();
    const batch = new StatementBatch<number, string>(run);
    const first = batch.add(1);
    expect(calls.map((call) => call.items)).toEqual([[1]]);
    const second = batch.add(2);
    const third = batch.add(3);
    calls[0].finish();
    await expect(first).resolves.toBe('r1');
    await Promise.resolve();
    expect(calls.map((call) => call.items)).toEqual([[1], [2, 3]]);
    calls[1].finish();
    await expect(Promise.all([second, third])).resolves.toEqual(['r2', 'r3']);
  });

  it('rejects every request of a failed statement, and the next batch still runs', async () => {
    const { calls, run } = controlledRun();
    const batch = new StatementBatch<number, string>(run);
    const first = batch.add(1);
    const second = batch.add(2);
    calls[0].finish(new Error('connection lost'));
    await expect(first).rejects.toThrow('connection lost');
    await Promise.resolve();
    calls[1].finish(new Error('still down'));
    await expect(second).rejects.toThrow('still down');
    const third = batch.add(3);
    calls[2].finish();
    await expect(third).resolves.toBe('r3');
  });
});
