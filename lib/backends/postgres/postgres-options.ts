/** Option schemas the PostgreSQL seams share, so each class and createPostgresBackend() check them alike. */
import { z } from 'zod';
import { type Logger, hasMethods } from '../../options.js';
import { isPgPool, PostgresDatabase, SCHEMA_NAME, type PgPool } from './postgres-client.js';

const DEFAULT_SCHEMA = 'public';

export const schemaNameSchema = z
  .string()
  .regex(SCHEMA_NAME, { error: 'must be a lower-case SQL identifier (letters, digits, _; at most 63; not starting with a digit)' })
  .default(DEFAULT_SCHEMA);

export const poolSchema = z.custom<PgPool>(isPgPool, { error: 'must be a node-postgres Pool (new Pool() from "pg")' });

/** Default bound on each statement, client side (and server side on pools the backend makes). */
export const DEFAULT_QUERY_TIMEOUT_MS = 5_000;

/** What every PostgreSQL seam is given: the pool, the schema of its tables, the bound on each statement. */
export const connectionShape = {
  pool: poolSchema,
  schema: schemaNameSchema,
  queryTimeoutMs: z.number().int().min(10).max(600_000).default(DEFAULT_QUERY_TIMEOUT_MS),
};

/** The options every PostgreSQL seam takes. */
export interface PostgresConnectionOptions {
  /** A node-postgres Pool (`new Pool(...)` from "pg"); the seam does not end it. */
  readonly pool: PgPool;
  /** The PostgreSQL schema holding the tables (created by migratePostgres()). Default 'public'. */
  readonly schema?: string;
  /** How long one statement may take before it fails (client side), in ms. Default 5000. */
  readonly queryTimeoutMs?: number;
}

export const databaseOf = (parsed: { pool: PgPool; schema: string; queryTimeoutMs: number }): PostgresDatabase =>
  new PostgresDatabase(parsed.pool, parsed.schema, parsed.queryTimeoutMs);

export const loggerSchema = z.custom<Logger>(hasMethods('warn', 'error'), {
  error: 'must be a logger with warn and error methods (pino-compatible)',
});

/** A whole number of milliseconds between `min` and a day. */
export const millisecondsSchema = (min: number) => z.number().int().min(min).max(86_400_000);
