/** sqlitePushStores(): the durable push pieces on a SqliteTaskStore's file, to spread into the router's `pushNotifications`. */
import type { SqliteTaskStore } from './sqlite-task-store.js';
import { SqlitePushConfigStore } from './sqlite-push-config-store.js';
import { SqlitePushOutbox } from './sqlite-push-outbox.js';

export interface SqlitePushStores {
  readonly configStore: SqlitePushConfigStore;
  readonly outbox: SqlitePushOutbox;
}

/**
 * `pushNotifications: { ...sqlitePushStores(taskStore), allow: [...] }`: configs and delivery
 * progress in the task store's file, so what was committed is delivered after a restart.
 */
export function sqlitePushStores(taskStore: SqliteTaskStore): SqlitePushStores {
  const configStore = new SqlitePushConfigStore(taskStore);
  return { configStore, outbox: new SqlitePushOutbox(taskStore, configStore) };
}
