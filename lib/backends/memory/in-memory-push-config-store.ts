/** The default PushConfigStore: a map per task key, dropped with the task's last config. */
import { taskKey } from '../../engine/seams/task-store.js';
import type { TaskScope } from '../../engine/seams/task-store.js';
import { PushConfigLimitError, type PushConfigStore, type StoredPushConfig } from '../../engine/seams/push-config-store.js';

// A JSON round trip: configs are JSON data, and the copy has the caller's realm's prototypes.
const copyOf = (config: StoredPushConfig): StoredPushConfig => JSON.parse(JSON.stringify(config)) as StoredPushConfig;

export class InMemoryPushConfigStore implements PushConfigStore {
  /** Task key → config id → config (Map keeps insertion order: `list` is oldest first). */
  readonly #tasks = new Map<string, Map<string, StoredPushConfig>>();

  /** Tasks holding at least one config (0 once every task's configs are gone). */
  get size(): number {
    return this.#tasks.size;
  }

  async put(scope: TaskScope, config: StoredPushConfig, maxPerTask: number): Promise<void> {
    const key = taskKey(scope, config.taskId);
    let configs = this.#tasks.get(key);
    if (configs && !configs.has(config.id) && configs.size >= maxPerTask) throw new PushConfigLimitError(config.taskId, maxPerTask);
    if (!configs) {
      if (maxPerTask < 1) throw new PushConfigLimitError(config.taskId, maxPerTask);
      this.#tasks.set(key, (configs = new Map()));
    }
    configs.set(config.id, copyOf(config));
  }

  async get(scope: TaskScope, taskId: string, id: string): Promise<StoredPushConfig | undefined> {
    const config = this.#tasks.get(taskKey(scope, taskId))?.get(id);
    return config && copyOf(config);
  }

  async list(scope: TaskScope, taskId: string): Promise<StoredPushConfig[]> {
    const configs = this.#tasks.get(taskKey(scope, taskId));
    return configs ? [...configs.values()].map(copyOf) : [];
  }

  async delete(scope: TaskScope, taskId: string, id: string): Promise<void> {
    const key = taskKey(scope, taskId);
    const configs = this.#tasks.get(key);
    if (!configs) return;
    configs.delete(id);
    if (configs.size === 0) this.#tasks.delete(key);
  }

  async deleteAll(scope: TaskScope, taskId: string): Promise<void> {
    this.#tasks.delete(taskKey(scope, taskId));
  }

  async setFailing(scope: TaskScope, taskId: string, id: string, failing: boolean): Promise<void> {
    const configs = this.#tasks.get(taskKey(scope, taskId));
    const config = configs?.get(id);
    if (!config) return;
    const { failing: _was, ...rest } = config;
    configs!.set(id, failing ? { ...rest, failing: true } : rest);
  }
}
