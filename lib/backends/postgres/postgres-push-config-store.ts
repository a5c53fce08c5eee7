/** PostgresPushConfigStore: the SQL push config store on the backend's schema (its rows keyed by task key). */
import { z } from 'zod';
import { parseOptions } from '../../options.js';
import { SqlPushConfigStore, type SqlParams } from '../shared/sql-push-config-store.js';
import type { PostgresDatabase } from './postgres-client.js';
import { connectionShape, databaseOf, type PostgresConnectionOptions } from './postgres-options.js';

export type PostgresPushConfigStoreOptions = PostgresConnectionOptions;

const optionsSchema = z.strictObject(connectionShape);

const numbered = new Map<string, { text: string; names: string[] }>();

/** `sql` with its `@name` parameters numbered, and the values in that order. */
function positional(sql: string, params: SqlParams): [string, unknown[]] {
  let found = numbered.get(sql);
  if (!found) {
    const names: string[] = [];
    const text = sql.replace(/@(\w+)/g, (_, name: string) => `$${(names.includes(name) ? names.indexOf(name) : names.push(name) - 1) + 1}`);
    numbered.set(sql, (found = { text, names }));
  }
  return [found.text, found.names.map((name) => params[name])];
}

export class PostgresPushConfigStore extends SqlPushConfigStore {
  readonly #db: PostgresDatabase;

  constructor(options: PostgresPushConfigStoreOptions) {
    const db = databaseOf(parseOptions('PostgresPushConfigStore', optionsSchema, options));
    super({
      configs: db.table('push_configs'),
      tasks: db.table('tasks'),
      task: 'task_key = @key',
      conflict: 'task_key, id',
      keyColumns: 'task_key, ',
      keyValues: '@key, ',
      bool: (value) => value,
      all: (sql, params) => db.query(...positional(sql, params)),
      run: (sql, params) => db.run(...positional(sql, params)),
      // A lock until COMMIT: two puts of one task cannot both count below the bound.
      serialized: (lock, sql, params) =>
        db.transaction(async (query) => {
          await query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${lock} ${db.schema}`]);
          return query(...positional(sql, params));
        }),
    });
    this.#db = db;
  }

  /** The database and schema, for the outbox built on this store. */
  get database(): PostgresDatabase {
    return this.#db;
  }
}
