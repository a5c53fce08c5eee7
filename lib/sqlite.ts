/** a2a-express-kit/sqlite: the durable task store and push stores on better-sqlite3 (an optional peer, loaded on open). */
export { SqliteTaskStore } from './backends/sqlite/sqlite-task-store.js';
export { openSqliteTaskStore } from './backends/sqlite/sqlite-open.js';
export { SQLITE_SCHEMA_VERSION } from './backends/sqlite/sqlite-migrations.js';
export type { SqliteTaskStoreOptions, OpenSqliteTaskStoreOptions, SqliteConnectionOptions } from './backends/sqlite/sqlite-options.js';
export { sqlitePushStores } from './backends/sqlite/sqlite-push-outbox.js';
export type { SqlitePushStores } from './backends/sqlite/sqlite-push-outbox.js';
export { SqlitePushConfigStore } from './backends/sqlite/sqlite-push-config-store.js';
export { SqlitePushOutbox } from './backends/sqlite/sqlite-push-outbox.js';
