/**
 * The task event streams as RedisTaskEventBus keeps them, shared with a RedisTaskStore of the same
 * backend so that the store's write script appends the committed event itself: a replica that dies
 * between the store write and the bus's publish then loses nothing. One Lua fragment appends and
 * publishes for both, so the entry id, payload, trimming and expiry are the same whoever writes.
 */
import type { TaskScope } from '../../engine/seams/task-store.js';
import { taskKey } from '../../engine/task-key.js';
import type { RedisKeys } from './redis-keys.js';

/**
 * Lua: appends payload `p` as entry `<version>-0` to stream key `k`, trimmed to about `maxlen`
 * entries, keeps it `ttl` ms, and publishes `p` on `channel`. An id at or below the stream's last is
 * refused by XADD (that version is there already): nothing else happens then, and pcall keeps the
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

/** How many tasks' appended versions are remembered at most (a write never published is forgotten after). */
const MAX_REMEMBERED = 10_000;

/**
 * The streams of one bus: their keys and retention, and which versions a linked store appended in
 * this process, so the bus's publish() of the same event adds no second round trip. Skipping is
 * safe: once a version is in the stream, the bus's XADD of it (or of any lower one) is refused anyway.
 */
export class TaskEventStreams {
  /** Per task key, the highest version a linked store appended here and the bus has not published yet. */
  readonly #appended = new Map<string, number>();

  constructor(
    readonly keys: RedisKeys,
    readonly maxLength: number,
    readonly retentionMs: number,
  ) {}

  /**
   * What a store's write script needs to append an event: the stream key (a KEYS entry) and
   * [max length, retention, channel] (ARGV). The script builds the payload itself, the bus's
   * CommittedEvent JSON `{event, task, version}` as JSON.stringify writes it, from the task JSON it
   * stores anyway (see COMMITTED_LUA): the task is sent to Redis once per write.
   */
  streamArgs(scope: TaskScope, taskId: string): { stream: string; args: Array<string | number> } {
    const { stream, channel } = this.keys.taskEvents(scope, taskId);
    return { stream, args: [this.maxLength, this.retentionMs, channel] };
  }

  /** A linked store's write put `version` of `scope`/`taskId` in the stream. */
  appended(scope: TaskScope, taskId: string, version: number): void {
    const key = taskKey(scope, taskId);
    // Re-inserted so the map's order is least recently written first, the one dropped when full.
    this.#appended.delete(key);
    this.#appended.set(key, version);
    if (this.#appended.size > MAX_REMEMBERED) this.#appended.delete(this.#appended.keys().next().value!);
  }

  /** Whether the stream has `version` of `key` already through a linked store (publish() then does nothing). */
  takeAppended(key: string, version: number): boolean {
    const top = this.#appended.get(key);
    if (top === undefined || version > top) return false;
    if (version === top) this.#appended.delete(key);
    return true;
  }
}
