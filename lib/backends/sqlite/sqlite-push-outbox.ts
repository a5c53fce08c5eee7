/** SqlitePushOutbox: a durable PushOutbox with nothing to write per delivery. */
import { randomUUID } from 'node:crypto';
import type BetterSqlite3 from 'better-sqlite3';
import { preparer } from './sqlite-statements.js';
import type { StreamResponse, TaskState } from '../../protocol/schemas.js';
import type { SqliteTaskStore } from './sqlite-task-store.js';
import { isTerminal } from '../../engine/task-state.js';
import type { PushOutbox, PushDelivery } from '../../engine/seams/push-outbox.js';
import { lagging, liveSpan, OpenSpans, type LoggedEvent } from '../../engine/push/push-cursors.js';
import { SqlitePushConfigStore } from './sqlite-push-config-store.js';

function statements(db: BetterSqlite3.Database) {
  const prepare = preparer(db);
  const key = 'task_id = @taskId AND tenant = @tenant AND owner = @owner AND id = @configId';
  return {
    attempts: prepare<[Record<string, unknown>]>(`UPDATE a2a_push_configs SET attempts = @attempts WHERE ${key} AND delivered = @from`),
    // Over the span the delivery covered, and the versions before it that are no events (none logged): a cursor behind a logged event stays, so no
    // event is ever skipped.
    advance: prepare<[Record<string, unknown>]>(
      `UPDATE a2a_push_configs SET delivered = @version, attempts = 0 WHERE ${key} AND delivered < @version
       AND NOT EXISTS (SELECT 1 FROM a2a_push_events e WHERE e.task_id = @taskId AND e.version > a2a_push_configs.delivered AND e.version <= @from)`,
    ),
    trim: prepare<[{ taskId: string }]>(
      `DELETE FROM a2a_push_events WHERE task_id = @taskId
       AND version <= COALESCE((SELECT MIN(delivered) FROM a2a_push_configs WHERE task_id = @taskId), 9007199254740991)`,
    ),
    // Tasks with configs, and whether some config is owed a logged event.
    tasks: prepare<[], { tenant: string; owner: string; task_id: string; state: TaskState; behind: number }>(
      `SELECT c.tenant, c.owner, c.task_id, t.state,
       MAX(EXISTS (SELECT 1 FROM a2a_push_events e WHERE e.task_id = c.task_id AND e.version > c.delivered)) AS behind
       FROM a2a_push_configs c JOIN a2a_tasks t ON t.id = c.task_id AND t.tenant = c.tenant AND t.owner = c.owner
       GROUP BY c.tenant, c.owner, c.task_id`,
    ),
    events: prepare<[string, number], { version: number; event: string }>(
      'SELECT version, event FROM a2a_push_events WHERE task_id = ? AND version > ? ORDER BY version',
    ),
  };
}

/**
 * SqliteTaskStore logs a task's committed events in the transaction of the write itself while the task has configs, and each config's cursor (the
 * version delivered to it) sits in its row: a delivery done moves the cursor (compare-and-set, so a gap is never skipped) and drops the events every
 * config has had. After a crash, pending() rebuilds what is owed from cursors and the log: an event committed just before a SIGKILL is delivered
 * after the restart.
 */
export class SqlitePushOutbox implements PushOutbox {
  readonly #tasks: SqliteTaskStore;
  readonly #configs: SqlitePushConfigStore;
  readonly #s: ReturnType<typeof statements>;
  readonly #spans = new OpenSpans();
  readonly #advance: (params: Record<string, unknown>) => void;

  constructor(taskStore: SqliteTaskStore, configStore: SqlitePushConfigStore) {
    this.#tasks = taskStore;
    this.#configs = configStore;
    const db = taskStore.database;
    this.#s = statements(db);
    this.#advance = db.transaction((params: Record<string, unknown>) => {
      this.#s.advance.run(params);
      this.#s.trim.run({ taskId: params.taskId as string });
    }).immediate;
  }

  /** Deliveries queued in this process and not done (0 once every one is). */
  get size(): number {
    return this.#spans.size;
  }

  async add(deliveries: readonly PushDelivery[]): Promise<void> {
    // Already durable: the task store logged the event when it committed it.
    for (const delivery of deliveries) this.#spans.open(delivery.id, liveSpan(delivery));
  }

  async recordAttempts(id: string, attempts: number): Promise<void> {
    const span = this.#spans.get(id);
    if (!span || this.#tasks.closed) return;
    this.#s.attempts.run({ ...this.#params(span), attempts, from: span.from });
  }

  async remove(id: string): Promise<void> {
    const closed = this.#spans.close(id);
    if (!closed || this.#tasks.closed) return;
    const { span } = closed;
    this.#advance({ ...this.#params(span), from: span.from, version: span.version });
  }

  async pending(): Promise<PushDelivery[]> {
    const out: PushDelivery[] = [];
    // Events of task writes called before this are logged once committed.
    this.#tasks.flushWrites();
    for (const row of [...this.#s.tasks.iterate()]) {
      const scope = { tenant: row.tenant, owner: row.owner };
      if (!row.behind) {
        // Every delivery was done but the configs of the ended task were not removed yet.
        if (isTerminal(row.state)) await this.#configs.deleteAll(scope, row.task_id);
        continue;
      }
      const latest = await this.#tasks.get(scope, row.task_id);
      if (!latest) continue;
      for (const cursor of await this.#configs.cursors(scope, row.task_id)) {
        const logged: LoggedEvent[] = [];
        for (const entry of this.#s.events.iterate(row.task_id, cursor.delivered)) {
          logged.push({ version: entry.version, event: JSON.parse(entry.event) as StreamResponse });
        }
        for (const { delivery, span } of lagging(scope, row.task_id, cursor, latest, logged, randomUUID)) {
          this.#spans.open(delivery.id, span);
          out.push(delivery);
        }
      }
    }
    return out;
  }

  #params(span: { scope: { tenant: string; owner: string }; taskId: string; configId: string }) {
    return { taskId: span.taskId, tenant: span.scope.tenant, owner: span.scope.owner, configId: span.configId };
  }
}

export interface SqlitePushStores {
  readonly configStore: SqlitePushConfigStore;
  readonly outbox: SqlitePushOutbox;
}

/**
 * `pushNotifications: { ...sqlitePushStores(taskStore), allow: [...] }`: configs and delivery progress in the task store's file, so what was
 * committed is delivered after a restart.
 */
export function sqlitePushStores(taskStore: SqliteTaskStore): SqlitePushStores {
  const configStore = new SqlitePushConfigStore(taskStore);
  return { configStore, outbox: new SqlitePushOutbox(taskStore, configStore) };
}
