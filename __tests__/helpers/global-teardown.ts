/** Jest global teardown: stops and removes the run's shared PostgreSQL cluster (global-setup.ts). */
import type { TestPostgresServer } from './postgres';

const holder = globalThis as { a2aSharedPostgres?: TestPostgresServer };

export default function teardown(): void {
  const server = holder.a2aSharedPostgres;
  if (!server) return;
  holder.a2aSharedPostgres = undefined;
  server.stop('immediate');
  server.remove();
}
