/**
 * Retention for RedisTaskStore: the finished-tasks set (written by the store's scripts when a task reaches a terminal state) read oldest first, and
 * one script per batch removing each task with everything kept for it, so replicas sweeping at once remove each task once.
 */
import type { TaskScope } from '../../engine/seams/task-store.js';
import { type RedisClient, RedisScript } from './redis-client.js';
import { RedisKeys, scopeId } from './redis-keys.js';
import { pushTaskMember } from './redis-push-config-store.js';

/**
 * A finished-tasks member: the status timestamp, NUL, the task key. Byte order is timestamp order (a NUL sorts below every other byte, so a timestamp
 * sorts before the ones it is a prefix of, as text comparison does). A NUL inside a timestamp (no valid one has any) becomes 0x01.
 */
export const finishedMember = (timestamp: string, key: string): string => `${timestamp.replaceAll('\0', '\x01')}\0${key}`;

/** The scope and id a task key (taskKey: `<n>:<tenant><n>:<owner><id>`) was made of; undefined if malformed. */
function parseTaskKey(key: string): { scope: TaskScope; taskId: string } | undefined {
  const parts: string[] = [];
  let at = 0;
  for (let i = 0; i < 2; i++) {
    const colon = key.indexOf(':', at);
    const length = Number(key.slice(at, colon));
    if (colon < 0 || !Number.isInteger(length) || length < 0 || colon + 1 + length > key.length) return undefined;
    parts.push(key.slice(colon + 1, colon + 1 + length));
    at = colon + 1 + length;
  }
  return { scope: { tenant: parts[0], owner: parts[1] }, taskId: key.slice(at) };
}

/** Keys per task in REMOVE (after the two shared ones) and arguments per task. */
const KEYS_PER_TASK = 6;
const ARGS_PER_TASK = 3;

// KEYS: finished-tasks set, push-tasks set, then per task: hash, delta list, event stream, push configs, push order, push claim. ARGV per task:
// finished member, scope id, push-tasks member. A task whose member is gone from the set was removed by another sweeper: skipped. One whose hash is
// another scope's or not terminal (never written so) only loses the stray member. Replies how many tasks it removed.
const REMOVE = new RedisScript(`
local removed = 0
for t = 0, (#ARGV / ${ARGS_PER_TASK}) - 1 do
  local k = 2 + t * ${KEYS_PER_TASK}
  local a = t * ${ARGS_PER_TASK}
  if redis.call('ZSCORE', KEYS[1], ARGV[a + 1]) then
    redis.call('ZREM', KEYS[1], ARGV[a + 1])
    local stored = redis.call('HMGET', KEYS[k + 1], 's', 't', 'm', 'i1', 'i2', 'i3', 'i4')
    if stored[1] == ARGV[a + 2] and stored[2] == '1' then
      for i = 4, 7 do if stored[i] then redis.call('ZREM', stored[i], stored[3]) end end
      redis.call('UNLINK', KEYS[k + 1], KEYS[k + 2], KEYS[k + 3], KEYS[k + 4], KEYS[k + 5], KEYS[k + 6])
      redis.call('SREM', KEYS[2], ARGV[a + 3])
      removed = removed + 1
    end
  end
end
return removed
`);

/** Removes up to `limit` finished tasks whose status timestamp is before `finishedBefore`. */
export async function removeFinishedTasks(client: RedisClient, keys: RedisKeys, finishedBefore: string, limit: number): Promise<number> {
  if (limit <= 0) return 0;
  const finished = keys.finishedTasks();
  // Exclusive bound: a member is its timestamp then NUL, so one at the cutoff sorts after '(cutoff'.
  const members = await client.sendCommand<string[]>(['ZRANGEBYLEX', finished, '-', `(${finishedBefore}`, 'LIMIT', '0', String(limit)]);
  if (members.length === 0) return 0;
  const scriptKeys: string[] = [finished, keys.pushTasks()];
  const args: string[] = [];
  const stray: string[] = [];
  for (const member of members) {
    const key = member.slice(member.indexOf('\0') + 1);
    const parsed = parseTaskKey(key);
    if (!parsed) {
      stray.push(member);
      continue;
    }
    const { scope, taskId } = parsed;
    scriptKeys.push(keys.task(taskId), keys.taskDeltas(taskId), keys.events(key), keys.pushConfigs(key), keys.pushOrder(key), keys.pushClaim(key));
    args.push(member, scopeId(scope), pushTaskMember(scope, taskId));
  }
  // Not a member this kit writes: dropped so it does not hold up the set's head forever.
  if (stray.length > 0) await client.sendCommand(['ZREM', finished, ...stray]);
  return args.length === 0 ? 0 : REMOVE.run<number>(client, scriptKeys, args);
}
