/**
 * openSqliteTaskStore: opens (or creates) a SQLite file and returns a SqliteTaskStore that owns the connection. better-sqlite3 is loaded here, on
 * first use (a dynamic import), never by the kit.
 */
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { A2AOptionsError } from '../../options.js';
import { parseOpenOptions, type OpenSqliteTaskStoreOptions } from './sqlite-options.js';
import { SqliteTaskStore } from './sqlite-task-store.js';

type Database = BetterSqlite3.Database;

type DatabaseConstructor = typeof BetterSqlite3;

/** better-sqlite3, loaded on first use so that importing the kit never needs it. */
async function loadBetterSqlite3(): Promise<DatabaseConstructor> {
  try {
    const loaded = (await import('better-sqlite3')) as unknown as { default?: DatabaseConstructor } & DatabaseConstructor;
    return loaded.default ?? loaded;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') {
      throw new Error('openSqliteTaskStore needs the better-sqlite3 package: npm install better-sqlite3@12', { cause: error });
    }
    throw error;
  }
}

/**
 * Opens (or creates) the SQLite file at `path`, creating its parent directories, and returns a store that owns the connection: its close() closes the
 * file. One process per file.
 */
export async function openSqliteTaskStore(options: OpenSqliteTaskStoreOptions): Promise<SqliteTaskStore> {
  const { path, ...connection } = parseOpenOptions(options);
  const Database = await loadBetterSqlite3();
  const inMemory = path === ':memory:';
  if (!inMemory) await mkdir(dirname(resolve(path)), { recursive: true });
  let database: Database;
  try {
    database = new Database(path, { timeout: connection.busyTimeoutMs });
  } catch (error) {
    throw new Error(`openSqliteTaskStore: cannot open ${path}: ${(error as Error).message}`, { cause: error });
  }
  try {
    return new SqliteTaskStore({ database, closeDatabase: true, ...connection });
  } catch (error) {
    database.close();
    // Options were checked above; anything here is about the file.
    if (error instanceof A2AOptionsError) throw error;
    throw new Error(`openSqliteTaskStore: cannot use ${path}: ${(error as Error).message}`, { cause: error });
  }
}
