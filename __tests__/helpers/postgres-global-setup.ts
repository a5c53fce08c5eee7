/**
 * Jest global setup (every project lists it; the first one to run starts the cluster): one
 * throwaway PostgreSQL cluster for the whole run, handed to the test workers in
 * A2A_TEST_PG_SHARED_URL (see postgres.ts). Nothing when A2A_TEST_PG_URL names a server, or when
 * PostgreSQL is not installed (the suites then skip, or fail under CI, as before).
 */
import { postgresAvailable, startPostgresServer, type TestPostgresServer } from './postgres';

const holder = globalThis as { a2aSharedPostgres?: TestPostgresServer };

export default async function setup(): Promise<void> {
  if (process.env.A2A_TEST_PG_URL || process.env.A2A_TEST_PG_SHARED_URL || !postgresAvailable) return;
  const server = await startPostgresServer();
  holder.a2aSharedPostgres = server;
  process.env.A2A_TEST_PG_SHARED_URL = server.url;
}
