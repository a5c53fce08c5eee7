/**
 * The task event log of PostgresTaskEventBus (the events table and its NOTIFY), shared with the linked PostgresTaskStore: one SQL fragment logs an
 * event for both, so the payload is the same.
 */
import type { TaskScope } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/seams/task-store.js';
import { AppendedVersions } from '../shared/logged-event-bus.js';
import { channelName, wireKey, type PostgresDatabase } from './postgres-client.js';

export class PostgresEventLog extends AppendedVersions {
  /** The channel every committed event is notified on: `<version> <wire key>`. */
  readonly eventsChannel: string;
  /** The channel of cancel requests: `<number> <wire key>`. */
  readonly cancelChannel: string;
  readonly table: string;

  constructor(
    readonly db: PostgresDatabase,
    /** Rows kept per task: an insert deletes the task's rows this far below it. */
    readonly maxPerTask: number,
  ) {
    super();
    this.eventsChannel = channelName(db.schema, 'events');
    this.cancelChannel = channelName(db.schema, 'cancel');
    this.table = db.table('events');
  }

  /**
   * SQL for a data-modifying WITH clause: `logged` inserts the rows of `source` (columns `version` and `payload`) for task key parameter `keyParam`;
   * `notified` notifies each inserted one. A version already logged is left as it is and not notified again; rows `maxPerTask` versions older go. The
   * main query must read `notified` (a plain SELECT in WITH runs only when referenced).
   */
  appendSql(source: string, keyParam: string, wireParam: string): string {
    return `logged AS (
      INSERT INTO ${this.table} (task_key, version, payload) SELECT ${keyParam}::text, version, payload FROM ${source}
      ON CONFLICT DO NOTHING RETURNING version
    ), trimmed AS (
      DELETE FROM ${this.table} WHERE task_key = ${keyParam}::text AND version <= (SELECT max(version) FROM logged) - ${this.maxPerTask}
    ), notified AS (
      SELECT pg_notify('${this.eventsChannel}', logged.version || ' ' || ${wireParam}::text) FROM logged
    )`;
  }

  /** The store's task key and its wire form, for the write statement's parameters. */
  keys(scope: TaskScope, taskId: string): { key: string; wire: string } {
    const key = taskKey(scope, taskId);
    return { key, wire: wireKey(key) };
  }
}

/** The bus's payload for event JSON `event` of task JSON `task` at SQL expression `version`. */
export const committedPayloadSql = (event: string, task: string, version: string): string =>
  `'{"event":' || ${event} || ',"task":' || ${task} || ',"version":' || ${version} || '}'`;
