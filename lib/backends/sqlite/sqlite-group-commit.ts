/**
 * Group commit for SqliteTaskStore: the writes called in one event-loop turn commit in one transaction, each still a compare-and-set in its own
 * savepoint, each promise settled after the commit that holds it.
 */
import type BetterSqlite3 from 'better-sqlite3';

interface PendingWrite {
  readonly run: () => number;
  readonly resolve: (version: number) => void;
  readonly reject: (error: unknown) => void;
}

type WriteOutcome = { readonly ok: true; readonly version: number } | { readonly ok: false; readonly error: unknown };

/**
 * A commit costs far more than its statements (a WAL frame per dirty page, and the hot index pages are the same for every task), so writes wait for
 * the end of the turn and commit together. Durability is unchanged: a promise settles only after its commit.
 */
export class GroupCommit {
  readonly #batchTx: (batch: readonly PendingWrite[], outcomes: WriteOutcome[]) => void;
  /** Writes called and not yet committed. */
  #queue: PendingWrite[] = [];
  #flushScheduled = false;

  constructor(db: BetterSqlite3.Database) {
    // Each write in its own savepoint (the writes are nested transactions), so one refused write undoes only itself; anything that ends the whole
    // transaction fails the batch.
    this.#batchTx = db.transaction((batch: readonly PendingWrite[], outcomes: WriteOutcome[]) => {
      for (const write of batch) {
        try {
          outcomes.push({ ok: true, version: write.run() });
        } catch (error) {
          if (!db.inTransaction) throw error;
          outcomes.push({ ok: false, error });
        }
      }
    }).immediate;
  }

  /** Queues `run` (a write transaction returning the new version) for the commit at the end of this turn. */
  enqueue(run: () => number): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      this.#queue.push({ run, resolve, reject });
      if (this.#flushScheduled) return;
      this.#flushScheduled = true;
      setImmediate(() => {
        this.#flushScheduled = false;
        this.flush();
      });
    });
  }

  /** Commits the queued writes now. */
  flush(): void {
    if (this.#queue.length === 0) return;
    const batch = this.#queue;
    this.#queue = [];
    if (batch.length === 1) {
      const [write] = batch;
      try {
        write.resolve(write.run());
      } catch (error) {
        write.reject(error);
      }
      return;
    }
    const outcomes: WriteOutcome[] = [];
    try {
      this.#batchTx(batch, outcomes);
    } catch (error) {
      // Rolled back (or never begun): none of them is stored.
      for (const write of batch) write.reject(error);
      return;
    }
    batch.forEach((write, i) => {
      const outcome = outcomes[i];
      if (outcome.ok) write.resolve(outcome.version);
      else write.reject(outcome.error);
    });
  }
}
