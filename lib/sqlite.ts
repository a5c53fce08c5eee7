/**
 * a2a-express-kit/sqlite: the durable task store on better-sqlite3 (an optional peer dependency,
 * loaded only when a store is opened). Nothing in the main entry imports this file.
 */
export { SqliteTaskStore, openSqliteTaskStore, SQLITE_SCHEMA_VERSION } from './server/stores/sqlite-task-store.js';
export type { SqliteTaskStoreOptions, OpenSqliteTaskStoreOptions, SqliteConnectionOptions } from './server/stores/sqlite-task-store.js';
