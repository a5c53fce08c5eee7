/**
 * The batched task-row writes of the PostgreSQL store (lib/backends/postgres/postgres-row-writes.ts)
 * without a database: writes asked while a statement is in flight share the next one; a task asked
 * twice at once is written alone; a deadlock between two processes' batches (40P01) falls back to
 * one statement per write instead of failing every write of the batch.
 */
import type { PostgresDatabase } from '../../lib/backends/postgres/postgres-client';
import { RowWrites, type RowOutcome } from '../../lib/backends/postgres/postgres-row-writes';

/** A database that records each statement's ids and answers each row written; `fail` may throw instead. */
function fakeDb(fail?: (ids: string[]) => Error | undefined) {
  const statements: string[][] = [];
  const db = {
    table: (name: string) => `"s"."a2a_${name}"`,
    async query(_text: string, values: unknown[]): Promise<RowOutcome[]> {
      const ids = values[0] as string[];
      statements.push(ids);
      await Promise.resolve();
      const error = fail?.(ids);
      if (error) throw error;
      return ids.map(() => ({ version: 2, stored: 1, terminal: false, released: false }));
    },
  };
  return { db: db as unknown as PostgresDatabase, statements };
}

const write = (id: string) => ({
  id,
  tenant: 't',
  owner: 'o',
  expected: 1,
  head: ['TASK_STATE_WORKING', false, 'c', '2026-01-01T00:00:00.000Z', '{}'] as const,
  statusOnly: true,
  event: null,
  payloadTask: null,
  key: null,
  wire: null,
  holder: null,
});

describe('PostgreSQL row writes in one statement', () => {
  it('sends a lone write at once, and the writes asked meanwhile together in the next statement', async () => {
    const { db, statements } = fakeDb();
    const rows = new RowWrites(db, undefined, undefined);
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((id) => rows.write(write(id))));
    expect(statements).toEqual([['a'], ['b', 'c', 'd']]);
    expect(results.map((outcome) => outcome.version)).toEqual([2, 2, 2, 2]);
  });

  it('writes a task asked twice at once in statements of its own', async () => {
    const { db, statements } = fakeDb();
    const rows = new RowWrites(db, undefined, undefined);
    await Promise.all(['a', 'b', 'b'].map((id) => rows.write(write(id))));
    expect(statements).toEqual([['a'], ['b'], ['b']]);
  });

  it('after a deadlock, writes each row of the batch alone; any other failure fails the batch', async () => {
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const { db, statements } = fakeDb((ids) => (ids.length > 1 ? deadlock : undefined));
    const rows = new RowWrites(db, undefined, undefined);
    const results = await Promise.all(['a', 'b', 'c'].map((id) => rows.write(write(id))));
    expect(results.map((outcome) => outcome.version)).toEqual([2, 2, 2]);
    expect(statements).toEqual([['a'], ['b', 'c'], ['b'], ['c']]);

    const down = fakeDb((ids) => (ids.length > 1 ? new Error('connection terminated') : undefined));
    const failing = new RowWrites(down.db, undefined, undefined);
    const settled = await Promise.allSettled(['a', 'b', 'c'].map((id) => failing.write(write(id))));
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
  });
});
