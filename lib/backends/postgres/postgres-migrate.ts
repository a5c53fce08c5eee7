/** migratePostgres(): creates or updates the backend's tables in a schema, for seams built one by one. */
import { z } from 'zod';
import { parseOptions } from '../../options.js';
import { migrate } from './postgres-migrations.js';
import { connectionShape, databaseOf, type PostgresConnectionOptions } from './postgres-options.js';

const optionsSchema = z.strictObject(connectionShape);

/**
 * Brings the schema's tables to this version of the kit (createPostgresBackend() does it on
 * open). Safe when several replicas run it at once: they wait for each other on an advisory lock.
 */
export async function migratePostgres(options: PostgresConnectionOptions): Promise<void> {
  await migrate(databaseOf(parseOptions('migratePostgres', optionsSchema, options)));
}
