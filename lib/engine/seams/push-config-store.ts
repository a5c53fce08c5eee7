/** The push config store contract: webhooks registered for tasks, partitioned by scope like tasks. */
import type { TaskScope } from './task-store.js';

/** The protocol version a config was registered with: v0.3 webhooks get v0.3 bodies. */
export type PushProtocol = '1.0' | '0.3';

/** A webhook of a task, as stored. */
export interface StoredPushConfig {
  readonly id: string;
  readonly taskId: string;
  readonly url: string;
  /** Sent back in the X-A2A-Notification-Token header. */
  readonly token?: string;
  /** Sent as `Authorization: <scheme> <credentials>`. */
  readonly authentication?: { readonly scheme: string; readonly credentials?: string };
  readonly protocol: PushProtocol;
  /** Set when a delivery to it exhausted its retries; cleared by the next success. */
  readonly failing?: boolean;
}

/** `put` would give the task more configs than `maxPerTask`. */
export class PushConfigLimitError extends Error {
  constructor(
    readonly taskId: string,
    readonly maxPerTask: number,
  ) {
    super(`task ${taskId} already has ${maxPerTask} push notification configs`);
    this.name = 'PushConfigLimitError';
  }
}

/**
 * `put` rejects with PushConfigLimitError over the bound; any other rejection means the store is unavailable (-32603 / HTTP 503). Configs hold
 * credentials: a store keeps them as secrets, never logged. Implementations clone on the way in and out.
 */
export interface PushConfigStore {
  /** A config with the same id is replaced in place (same position in `list`); a new one is appended unless at `maxPerTask`. */
  put(scope: TaskScope, config: StoredPushConfig, maxPerTask: number): Promise<void>;
  /** The config, or undefined when missing or in another scope. */
  get(scope: TaskScope, taskId: string, id: string): Promise<StoredPushConfig | undefined>;
  /** The task's configs in `scope`, oldest first; [] when none. */
  list(scope: TaskScope, taskId: string): Promise<StoredPushConfig[]>;
  /** Removes one config; resolves whether or not it existed (idempotent). */
  delete(scope: TaskScope, taskId: string, id: string): Promise<void>;
  /** Removes every config of the task (the task ended). Idempotent. */
  deleteAll(scope: TaskScope, taskId: string): Promise<void>;
  /** Marks a config failing or healthy again; nothing happens when it is gone. */
  setFailing(scope: TaskScope, taskId: string, id: string, failing: boolean): Promise<void>;
}
