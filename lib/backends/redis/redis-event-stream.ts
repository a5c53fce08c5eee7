/**
 * The task event streams of RedisTaskEventBus, shared with the linked RedisTaskStore: one Lua fragment appends and publishes for both, so entry id,
 * payload, trimming and expiry are the same.
 */
import type { TaskScope } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/seams/task-store.js';
import { AppendedVersions } from '../shared/logged-event-bus.js';
import type { RedisKeys } from './redis-keys.js';

/**
 * Lua: appends payload `p` as entry `<version>-0` to stream key `k`, trimmed to about `maxlen` entries, keeps it `ttl` ms, and publishes `p` on
 * `channel`. An id at or below the stream's last is refused by XADD (that version is there already): nothing else happens then, and pcall keeps the
 * refusal from aborting a script that has written already (Redis does not roll a script back).
 */
export const APPEND_EVENT_LUA = `
local function append_event(k, version, p, maxlen, ttl, channel)
  local added = redis.pcall('XADD', k, 'MAXLEN', '~', maxlen, version .. '-0', 'e', p)
  if type(added) == 'table' and added.err then return 0 end
  redis.call('PEXPIRE', k, ttl)
  redis.call('PUBLISH', channel, p)
  return 1
end
`;

/** Lua: the bus's payload for event JSON `ev` of task JSON `task` at `version` (numbers concatenate as integers). */
export const COMMITTED_LUA = `
local function committed(ev, task, version)
  return '{"event":' .. ev .. ',"task":' .. task .. ',"version":' .. version .. '}'
end
`;

/** The streams of one bus: their keys and retention, and which versions a linked store appended in this process. */
export class TaskEventStreams {
  readonly #appended = new AppendedVersions();

  constructor(
    readonly keys: RedisKeys,
    readonly maxLength: number,
    readonly retentionMs: number,
  ) {}

  /**
   * A store write script's stream key (KEYS) and [max length, retention, channel] (ARGV); the script builds the payload from the task JSON it stores
   * anyway (COMMITTED_LUA): the task is sent once.
   */
  streamArgs(scope: TaskScope, taskId: string): { stream: string; args: Array<string | number> } {
    const { stream, channel } = this.keys.taskEvents(scope, taskId);
    return { stream, args: [this.maxLength, this.retentionMs, channel] };
  }

  /** A linked store's write put `version` of `scope`/`taskId` in the stream. */
  appended(scope: TaskScope, taskId: string, version: number): void {
    this.#appended.appended(taskKey(scope, taskId), version);
  }

  /** Whether the stream has `version` of `key` already through a linked store (publish() then does nothing). */
  takeAppended(key: string, version: number): boolean {
    return this.#appended.takeAppended(key, version);
  }
}
