/** What the durable outboxes share: no delivery records, a cursor per config (version delivered) over the task's event log. */
import type { StreamResponse } from '../../protocol/schemas.js';
import type { TaskScope, VersionedTask } from '../seams/task-store.js';
import { taskKey } from '../seams/task-store.js';
import { isTerminal } from '../task-state.js';
import type { StoredPushConfig } from '../seams/push-config-store.js';
import type { PushDelivery } from '../seams/push-outbox.js';
import { pushBody, pushContentType } from './event-deliveries.js';

export interface ConfigCursor {
  readonly config: StoredPushConfig;
  /** The task version delivered so far. */
  readonly delivered: number;
  /** Attempts already made on the version after it. */
  readonly attempts: number;
}

export interface LoggedEvent {
  readonly version: number;
  readonly event: StreamResponse;
}

export interface Span {
  readonly scope: TaskScope;
  readonly taskId: string;
  readonly configId: string;
  readonly from: number;
  readonly version: number;
}

const endsTask = (event: StreamResponse): boolean => {
  const status = 'statusUpdate' in event ? event.statusUpdate.status : 'task' in event ? event.task.status : undefined;
  return status !== undefined && isTerminal(status.state);
};

/** The logged events after the cursor, or once the log is trimmed the task itself; v0.3 configs get only the latest task. */
export function lagging(
  scope: TaskScope,
  taskId: string,
  row: ConfigCursor,
  latest: VersionedTask,
  logged: readonly LoggedEvent[] | undefined,
  newId: () => string,
): Array<{ delivery: PushDelivery; span: Span }> {
  const { config } = row;
  const after = logged?.filter((entry) => entry.version > row.delivered);
  let items: readonly LoggedEvent[];
  if (after === undefined) items = latest.version > row.delivered ? [{ version: latest.version, event: { task: latest.task } }] : [];
  else if (after.length > 0 && config.protocol === '0.3') items = [{ version: after[after.length - 1].version, event: { task: latest.task } }];
  else items = after;
  let from = row.delivered;
  return items.map((entry, i) => {
    const span: Span = { scope, taskId, configId: config.id, from, version: entry.version };
    from = entry.version;
    const delivery: PushDelivery = {
      id: newId(),
      scope,
      taskId,
      configId: config.id,
      version: entry.version,
      body: pushBody(config.protocol, entry.event, latest.task),
      contentType: pushContentType(config.protocol),
      final: endsTask(entry.event) || (i === items.length - 1 && isTerminal(latest.task.status.state) && entry.version === latest.version),
      attempts: i === 0 ? row.attempts : 0,
    };
    return { delivery, span };
  });
}

/** Deliveries queued here and not finished, with their cursor spans, and a count per task (its claim is held meanwhile). */
export class OpenSpans {
  readonly #spans = new Map<string, Span>();
  readonly #perTask = new Map<string, { readonly scope: TaskScope; readonly taskId: string; count: number }>();

  get size(): number {
    return this.#spans.size;
  }

  tasks(): Array<{ readonly key: string; readonly scope: TaskScope; readonly taskId: string }> {
    return [...this.#perTask].map(([key, { scope, taskId }]) => ({ key, scope, taskId }));
  }

  has(key: string): boolean {
    return this.#perTask.has(key);
  }

  open(id: string, span: Span): void {
    this.#spans.set(id, span);
    const key = taskKey(span.scope, span.taskId);
    const task = this.#perTask.get(key);
    if (task) task.count++;
    else this.#perTask.set(key, { scope: span.scope, taskId: span.taskId, count: 1 });
  }

  get(id: string): Span | undefined {
    return this.#spans.get(id);
  }

  /** Returns its span and whether it was its task's last one here. */
  close(id: string): { span: Span; last: boolean } | undefined {
    const span = this.#spans.get(id);
    if (!span) return undefined;
    this.#spans.delete(id);
    const key = taskKey(span.scope, span.taskId);
    const task = this.#perTask.get(key)!;
    if (--task.count > 0) return { span, last: false };
    this.#perTask.delete(key);
    return { span, last: true };
  }
}

/** A live delivery covers exactly its own version. */
export const liveSpan = (delivery: PushDelivery): Span => ({
  scope: delivery.scope,
  taskId: delivery.taskId,
  configId: delivery.configId,
  from: delivery.version - 1,
  version: delivery.version,
});
