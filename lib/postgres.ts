/** a2a-express-kit/postgres: task store, event bus, leases and durable push on PostgreSQL for replicas (`pg` an optional peer). */
export { createPostgresBackend } from './backends/postgres/postgres-backend.js';
export type { PostgresBackend, PostgresBackendOptions } from './backends/postgres/postgres-backend.js';
export { migratePostgres } from './backends/postgres/postgres-migrations.js';
export { POSTGRES_SCHEMA_VERSION } from './backends/postgres/postgres-migrations.js';
export type { PostgresConnectionOptions } from './backends/postgres/postgres-options.js';
export { PostgresTaskStore } from './backends/postgres/postgres-task-store.js';
export type { PostgresTaskStoreOptions } from './backends/postgres/postgres-task-store.js';
export { PostgresTaskEventBus } from './backends/postgres/postgres-event-bus.js';
export type { PostgresTaskEventBusOptions } from './backends/postgres/postgres-event-bus.js';
export { PostgresTaskLeases } from './backends/postgres/postgres-task-leases.js';
export type { PostgresTaskLeasesOptions } from './backends/postgres/postgres-task-leases.js';
export { PostgresPushConfigStore } from './backends/postgres/postgres-push-config-store.js';
export type { PostgresPushConfigStoreOptions } from './backends/postgres/postgres-push-config-store.js';
export { PostgresPushOutbox } from './backends/postgres/postgres-push-outbox.js';
export type { PostgresPushOutboxOptions } from './backends/postgres/postgres-push-outbox.js';
export type { PgPool, PgPoolClient } from './backends/postgres/postgres-client.js';
