/**
 * The task event log as PostgresTaskEventBus keeps it (the events table and the NOTIFY that tells
 * the other processes), shared with a PostgresTaskStore of the same backend so that the store's
 * write statement inserts the committed event itself: a replica that dies between the store write
 * and the bus's publish then loses nothing. One SQL fragment builds the row and the notification
 * for both, so the payload is the same whoever writes.
 */
import type { TaskScope } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/task-key.js';
import { channelName, wireKey, type PostgresDatabase } from './postgres-client.js';

/** How many tasks' appended versions are remembered at most (a write never published is forgotten after). */
const MAX_REMEMBERED = 10_000;

export class PostgresEventLog {
  /** The channel every committed event is notified on: `<version> <wire key>`. */
  readonly eventsChannel: string;
  /** The channel of cancel requests: `<wire key>`. */
  readonly cancelChannel: string;
  readonly table: string;
  /** Per task key, the highest version a linked store inserted here and the bus has not published yet. */
  readonly #appended = new Map<string, number>();

  constructor(
    readonly db: PostgresDatabase,
    /** Rows kept per task: an insert deletes the task's rows this far below it. */
    readonly maxPerTask: number,
  ) {
    this.eventsChannel = channelName(db.schema, 'events');
    this.cancelChannel = channelName(db.schema, 'cancel');
    this.table = db.table('events');
  }

  /**
   * SQL for a data-modifying WITH clause: `logged` inserts the rows of `source` (columns `version`
   * and `payload`) for task key parameter `keyParam`; `notified` notifies each inserted one. A
   * version already logged is left as it is and not notified again; rows `maxPerTask` versions
   * older go. The main query must read `notified` (a plain SELECT in WITH runs only when referenced).
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

  /** A linked store's write logged `version` of `key`. */
  appended(key: string, version: number): void {
    // Re-inserted so the map's order is least recently written first, the one dropped when full.
    this.#appended.delete(key);
    this.#appended.set(key, version);
    if (this.#appended.size > MAX_REMEMBERED) this.#appended.delete(this.#appended.keys().next().value!);
  }

  /** Whether `version` of `key` is logged already through a linked store (publish() then does nothing). */
  takeAppended(key: string, version: number): boolean {
    const top = this.#appended.get(key);
    if (top === undefined || version > top) return false;
    if (version === top) this.#appended.delete(key);
    return true;
  }
}

/** The bus's payload for event JSON `event` of task JSON `task` at SQL expression `version`. */
export const committedPayloadSql = (event: string, task: string, version: string): string =>
  `'{"event":' || ${event} || ',"task":' || ${task} || ',"version":' || ${version} || '}'`;
