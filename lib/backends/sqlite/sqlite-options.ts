/**
 * The options of SqliteTaskStore and openSqliteTaskStore: their types, and the zod schemas that check them and fill in the defaults (one connection
 * shape shared by both).
 */
import type BetterSqlite3 from 'better-sqlite3';
import { z } from 'zod';
import { parseOptions } from '../../options.js';

type Database = BetterSqlite3.Database;

/** How the store talks to the file; shared by the constructor and openSqliteTaskStore. */
export interface SqliteConnectionOptions {
  /**
   * How long a statement waits for a lock another connection holds (a backup, the sqlite3 shell) before failing, in ms. better-sqlite3 waits
   * synchronously, blocking the event loop meanwhile, so this stays short. Default 1000.
   */
  readonly busyTimeoutMs?: number;
  /**
   * `PRAGMA synchronous`. 'NORMAL' (the default) in WAL mode loses nothing when the process dies (a crash, SIGKILL); only a power loss or OS crash
   * can drop the last commits, and the file stays consistent. 'FULL' adds an fsync per commit (per artifact chunk) to survive those too.
   */
  readonly synchronous?: 'NORMAL' | 'FULL';
}

export interface SqliteTaskStoreOptions extends SqliteConnectionOptions {
  /** An open, writable better-sqlite3 Database. The store creates and migrates its `a2a_*` tables in it. */
  readonly database: Database;
  /** Whether close() closes `database` too. Default false: whoever opened it closes it. */
  readonly closeDatabase?: boolean;
}

export interface OpenSqliteTaskStoreOptions extends SqliteConnectionOptions {
  /** The database file (its parent directories are created), or ':memory:'. */
  readonly path: string;
}

const connectionShape = {
  busyTimeoutMs: z.number().int().min(0).max(60_000).default(1_000),
  synchronous: z.enum(['NORMAL', 'FULL']).default('NORMAL'),
};

const isDatabase = (value: unknown): value is Database =>
  typeof value === 'object' &&
  value !== null &&
  ['prepare', 'pragma', 'transaction', 'exec', 'close'].every((name) => typeof (value as Record<string, unknown>)[name] === 'function');

const storeSchema = z.strictObject({
  database: z.custom<Database>(isDatabase, { error: 'must be a better-sqlite3 Database (new Database(file))' }),
  closeDatabase: z.boolean().default(false),
  ...connectionShape,
});

const openSchema = z.strictObject({
  path: z.string({ error: "must be a file path or ':memory:'" }).min(1, { error: "must be a file path or ':memory:'" }),
  ...connectionShape,
});

/** The store's options checked, defaults filled in; throws A2AOptionsError naming the option. */
export const parseStoreOptions = (options: SqliteTaskStoreOptions): Required<SqliteTaskStoreOptions> =>
  parseOptions('SqliteTaskStore', storeSchema, options);

/** openSqliteTaskStore's options checked, defaults filled in. */
export const parseOpenOptions = (options: OpenSqliteTaskStoreOptions): Required<OpenSqliteTaskStoreOptions> =>
  parseOptions('openSqliteTaskStore', openSchema, options);
