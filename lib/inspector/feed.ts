/**
 * What the inspector saw in this process: each task an event was committed for, the last events,
 * push attempts and received notifications, and the admin API's live streams listening to them.
 */
import type { StreamResponse, Task } from '../protocol/schemas.js';

interface TaskRow {
  readonly taskId: string;
  readonly tenant: string;
  readonly owner: string;
  readonly contextId: string;
  readonly state: string;
  readonly updated: string;
  readonly version: number;
}

export interface FeedEntry {
  readonly seq: number;
  readonly at: string;
  readonly kind: string;
  readonly taskId?: string;
  readonly data: unknown;
}

interface TaskQuery {
  readonly state?: string;
  readonly contextId?: string;
  readonly owner?: string;
  readonly tenant?: string;
  readonly since?: string;
  readonly offset: number;
  readonly limit: number;
}

const KEEP = 2000;
const KEEP_TASKS = 10_000;

export class InspectorFeed {
  readonly #tasks = new Map<string, TaskRow>();
  readonly #entries: FeedEntry[] = [];
  readonly #listeners = new Set<(entry: FeedEntry) => void>();
  #seq = 0;

  taskEvent(info: { taskId: string; tenant: string; owner: string; event: StreamResponse; task: Task; version: number }): void {
    const { task } = info;
    const row: TaskRow = {
      taskId: info.taskId,
      tenant: info.tenant,
      owner: info.owner,
      contextId: task.contextId ?? '',
      state: task.status.state,
      updated: task.status.timestamp ?? new Date().toISOString(),
      version: info.version,
    };
    const key = JSON.stringify([info.tenant, info.owner, info.taskId]);
    // Most recently updated last, so that the list reads newest first from the end.
    this.#tasks.delete(key);
    this.#tasks.set(key, row);
    // A development aid, not a second store: the least recently updated go first.
    if (this.#tasks.size > KEEP_TASKS) this.#tasks.delete(this.#tasks.keys().next().value!);
    this.#add('task-event', info.taskId, { ...row, event: info.event });
  }

  note(kind: string, data: { taskId?: string }): void {
    this.#add(kind, data.taskId, data);
  }

  #add(kind: string, taskId: string | undefined, data: unknown): void {
    const entry: FeedEntry = { seq: ++this.#seq, at: new Date().toISOString(), kind, taskId, data };
    this.#entries.push(entry);
    // Trimmed in bulk: one splice per KEEP entries, not a shift of the whole array per entry.
    if (this.#entries.length >= 2 * KEEP) this.#entries.splice(0, KEEP);
    for (const listener of this.#listeners) listener(entry);
  }

  /** Tasks matching the filters, newest update first. */
  tasks(query: TaskQuery): { tasks: TaskRow[]; total: number } {
    const matching = [...this.#tasks.values()]
      .reverse()
      .filter(
        (t) =>
          (!query.state || t.state === query.state) &&
          (!query.contextId || t.contextId === query.contextId) &&
          (query.owner === undefined || t.owner === query.owner) &&
          (query.tenant === undefined || t.tenant === query.tenant) &&
          (!query.since || t.updated > query.since),
      );
    return { tasks: matching.slice(query.offset, query.offset + query.limit), total: matching.length };
  }

  row(tenant: string, owner: string, taskId: string): TaskRow | undefined {
    return this.#tasks.get(JSON.stringify([tenant, owner, taskId]));
  }

  /** Entries after `seq` (the last KEEP for 0), optionally of one task. */
  since(seq: number, taskId?: string): FeedEntry[] {
    return this.#entries.slice(-KEEP).filter((e) => e.seq > seq && (taskId === undefined || e.taskId === taskId));
  }

  listen(listener: (entry: FeedEntry) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
