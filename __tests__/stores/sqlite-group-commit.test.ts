/**
 * GroupCommit (lib/backends/sqlite/sqlite-group-commit.ts) on its own, on an in-memory better-sqlite3
 * database: the writes called in one event-loop turn commit in one transaction, a refused write
 * undoes only itself, a failure that ends the transaction fails the whole batch, and flush()
 * commits at once.
 */
import Database from 'better-sqlite3';
import { GroupCommit } from '../../lib/backends/sqlite/sqlite-group-commit';

type Db = InstanceType<typeof Database>;

let db: Db;
let commits: GroupCommit;

beforeEach(() => {
  db = new Database(':memory:');
  db.exec('CREATE TABLE rows (name TEXT PRIMARY KEY)');
  commits = new GroupCommit(db);
});
afterEach(() => db.close());

const names = (): string[] => (db.prepare('SELECT name FROM rows ORDER BY name').all() as Array<{ name: string }>).map((row) => row.name);

/** A write as the store's are: its own transaction (a savepoint inside a batch), returning a version. */
function insert(name: string, version: number, fail?: Error): () => number {
  const statement = db.prepare('INSERT INTO rows (name) VALUES (?)');
  return db.transaction(() => {
    statement.run(name);
    if (fail) throw fail;
    return version;
  });
}

describe('GroupCommit', () => {
  it('commits the writes of one turn in one transaction, each settled with its own version', async () => {
    const seen: boolean[] = [];
    const watched = (name: string, version: number) => {
      const write = insert(name, version);
      return () => {
        seen.push(db.inTransaction);
        return write();
      };
    };
    const versions = await Promise.all([commits.enqueue(watched('a', 1)), commits.enqueue(watched('b', 2)), commits.enqueue(watched('c', 3))]);
    expect(versions).toEqual([1, 2, 3]);
    // Each ran inside the batch's transaction, not one of its own at the top level.
    expect(seen).toEqual([true, true, true]);
    expect(names()).toEqual(['a', 'b', 'c']);
  });

  it('a lone write runs without a batch transaction around it', async () => {
    let inBatch: boolean | undefined;
    const write = insert('solo', 7);
    await expect(
      commits.enqueue(() => {
        inBatch = db.inTransaction;
        return write();
      }),
    ).resolves.toBe(7);
    expect(inBatch).toBe(false);
    expect(names()).toEqual(['solo']);
  });

  it('a refused write undoes only itself: the others of its batch commit', async () => {
    const refusal = new Error('version conflict');
    const results = await Promise.allSettled([
      commits.enqueue(insert('a', 1)),
      commits.enqueue(insert('b', 2, refusal)),
      commits.enqueue(insert('c', 3)),
    ]);
    expect(results).toEqual([
      { status: 'fulfilled', value: 1 },
      { status: 'rejected', reason: refusal },
      { status: 'fulfilled', value: 3 },
    ]);
    expect(names()).toEqual(['a', 'c']);
  });

  it('a failure that ends the transaction rejects every write of the batch and stores none', async () => {
    const results = await Promise.allSettled([
      commits.enqueue(insert('a', 1)),
      // Ends the batch's transaction, as SQLITE_FULL or an I/O error does: nothing of it may stay.
      commits.enqueue(() => {
        db.exec('ROLLBACK');
        throw new Error('the transaction is gone');
      }),
      commits.enqueue(insert('c', 3)),
    ]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(names()).toEqual([]);
  });

  it('flush() commits the queued writes at once, before the end of the turn', () => {
    const pending = commits.enqueue(insert('now', 1));
    expect(names()).toEqual([]);
    commits.flush();
    expect(names()).toEqual(['now']);
    return expect(pending).resolves.toBe(1);
  });

  it('writes queued after a flush commit at the end of their own turn', async () => {
    commits.enqueue(insert('first', 1));
    commits.flush();
    const later = commits.enqueue(insert('second', 2));
    expect(names()).toEqual(['first']);
    await expect(later).resolves.toBe(2);
    expect(names()).toEqual(['first', 'second']);
  });
});
