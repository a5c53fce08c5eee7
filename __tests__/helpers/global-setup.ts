/**
 * Jest global setup (every project lists it, and jest runs it per project: the env marks what is done): the one line about missing spec
 * files (spec-files.ts), and one throwaway PostgreSQL cluster for the whole run, handed to the workers
 * in A2A_TEST_PG_SHARED_URL (postgres.ts); no cluster when A2A_TEST_PG_URL names one or none is installed.
 */
import { postgresAvailable, startPostgresServer, type TestPostgresServer } from './postgres';
import { specFile, specSkipLine } from './spec-files';

const holder = globalThis as { a2aSharedPostgres?: TestPostgresServer };

export default async function setup(): Promise<void> {
  const skipped = specSkipLine();
  if (skipped && !process.env.A2A_SPEC_SKIP_SAID) {
    specFile('a2a.proto'); // throws under CI
    specFile('v0.3-a2a.json');
    process.stdout.write(`\n${skipped}\n`);
    process.env.A2A_SPEC_SKIP_SAID = '1';
  }
  if (process.env.A2A_TEST_PG_URL || process.env.A2A_TEST_PG_SHARED_URL || !postgresAvailable) return;
  const server = await startPostgresServer();
  holder.a2aSharedPostgres = server;
  process.env.A2A_TEST_PG_SHARED_URL = server.url;
}
