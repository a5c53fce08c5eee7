/** The default task store: a Map per (tenant, owner) partition, cloned in and out. */
import type { Task } from '../../protocol/schemas.js';
import {
  compareForListing,
  decodePageToken,
  encodePageToken,
  isAfterCursor,
  type ListTasksQuery,
  type TaskPage,
  type TaskScope,
  type TaskStore,
} from './task-store.js';

interface Entry {
  readonly scopeKey: string;
  task: Task;
}

const scopeKeyOf = (scope: TaskScope): string => `${scope.tenant.length}:${scope.tenant}${scope.owner}`;

export class InMemoryTaskStore implements TaskStore {
  readonly #byId = new Map<string, Entry>();
  readonly #byScope = new Map<string, Map<string, Entry>>();

  /** Number of tasks held, all scopes together. */
  get size(): number {
    return this.#byId.size;
  }

  /** Drops every task. */
  clear(): void {
    this.#byId.clear();
    this.#byScope.clear();
  }

  async get(scope: TaskScope, taskId: string): Promise<Task | undefined> {
    const entry = this.#byId.get(taskId);
    if (!entry || entry.scopeKey !== scopeKeyOf(scope)) return undefined;
    return structuredClone(entry.task);
  }

  async create(scope: TaskScope, task: Task): Promise<void> {
    if (this.#byId.has(task.id)) throw new Error(`task ${task.id} already exists`);
    const scopeKey = scopeKeyOf(scope);
    const entry: Entry = { scopeKey, task: structuredClone(task) };
    this.#byId.set(task.id, entry);
    let partition = this.#byScope.get(scopeKey);
    if (!partition) this.#byScope.set(scopeKey, (partition = new Map()));
    partition.set(task.id, entry);
  }

  async update(scope: TaskScope, task: Task): Promise<void> {
    const entry = this.#byId.get(task.id);
    if (!entry || entry.scopeKey !== scopeKeyOf(scope)) throw new Error(`task ${task.id} does not exist in this scope`);
    entry.task = structuredClone(task);
  }

  async list(scope: TaskScope, query: ListTasksQuery): Promise<TaskPage> {
    const cursor = query.pageToken ? decodePageToken(query.pageToken) : undefined;
    const partition = this.#byScope.get(scopeKeyOf(scope));
    const matches: Task[] = [];
    for (const { task } of partition?.values() ?? []) {
      if (query.contextId !== undefined && task.contextId !== query.contextId) continue;
      if (query.status !== undefined && task.status.state !== query.status) continue;
      if (query.statusTimestampAfter !== undefined && !((task.status.timestamp ?? '') >= query.statusTimestampAfter)) continue;
      matches.push(task);
    }
    matches.sort(compareForListing);
    const start = cursor ? matches.findIndex((t) => isAfterCursor(t, cursor)) : 0;
    const from = start < 0 ? matches.length : start;
    const page = matches.slice(from, from + query.pageSize);
    const more = from + page.length < matches.length;
    return {
      tasks: page.map((t) => structuredClone(t)),
      nextPageToken: more ? encodePageToken(page[page.length - 1]) : '',
      totalSize: matches.length,
    };
  }
}
