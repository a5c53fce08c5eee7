/**
 * a2a-express-kit/sqlite: the durable task store on better-sqlite3 (an optional peer dependency,
 * loaded only when a store is opened), and the durable push stores sharing its file. Nothing in the
 * main entry imports this file.
 */
export { SqliteTaskStore, openSqliteTaskStore, SQLITE_SCHEMA_VERSION } from './server/stores/sqlite-task-store.js';
export type { SqliteTaskStoreOptions, OpenSqliteTaskStoreOptions, SqliteConnectionOptions } from './server/stores/sqlite-task-store.js';
export { sqlitePushStores } from './server/push/sqlite-push.js';
export type { SqlitePushStores } from './server/push/sqlite-push.js';
export { SqlitePushConfigStore } from './server/push/sqlite-push-config-store.js';
export { SqlitePushOutbox } from './server/push/sqlite-push-outbox.js';
