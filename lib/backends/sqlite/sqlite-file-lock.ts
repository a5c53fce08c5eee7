/**
 * One process per SQLite file: an exclusive SQLite lock on `<file>-a2a-lock`, held on a connection of its own for as long as a store uses the file.
 * The OS drops it when the process dies.
 */
import { resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

type Database = BetterSqlite3.Database;

const held = new Map<string, { lock: Database; users: number }>();

/** Takes the file's lock, or throws naming the replica-ready backends; returns its release. */
export function lockDatabaseFile(db: Database): () => void {
  if (db.memory || !db.name) return () => {};
  const path = resolve(db.name);
  let entry = held.get(path);
  if (!entry) {
    const Connection = db.constructor as typeof BetterSqlite3;
    let lock: Database | undefined;
    try {
      lock = new Connection(`${path}-a2a-lock`, { timeout: 0 });
      lock.pragma('journal_mode = MEMORY');
      // Never committed: its EXCLUSIVE lock is the claim, shared by the process's stores.
      lock.exec('BEGIN EXCLUSIVE');
    } catch (error) {
      lock?.close();
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY') throw error;
      throw new Error(
        `SqliteTaskStore: ${path} is in use by another process. A SQLite file serves one process (its start-up settles every unfinished task as its own); for several replicas use Redis (a2a-express-kit/redis) or PostgreSQL (a2a-express-kit/postgres)`,
        { cause: error },
      );
    }
    held.set(path, (entry = { lock, users: 0 }));
  }
  entry.users++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--entry.users > 0) return;
    held.delete(path);
    entry.lock.close();
  };
}
