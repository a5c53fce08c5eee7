/**
 * The write scripts of RedisTaskStore: each checks scope, version and terminal state, writes the task and moves its listing, finished and mid-turn
 * entries, and appends its event, in one script.
 */
import { APPEND_EVENT_LUA, COMMITTED_LUA } from './redis-event-stream.js';
import { RedisScript } from './redis-client.js';

// KEYS: task hash, then its four listing sets, its delta list, the finished-tasks set, the mid-turn set, then the task's event stream when the event
// is appended. ARGV: scope, JSON, terminal flag, listing member, finished member ('' unless terminal), mid-turn member and flag, then (with the
// stream) the stream max length, retention ms and channel; the event is the task's `{ task }`.
export const CREATE = new RedisScript(`${APPEND_EVENT_LUA}${COMMITTED_LUA}
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[6])
redis.call('HSET', KEYS[1], 's', ARGV[1], 'v', 1, 'j', ARGV[2], 't', ARGV[3], 'm', ARGV[4],
  'i1', KEYS[2], 'i2', KEYS[3], 'i3', KEYS[4], 'i4', KEYS[5])
for i = 2, 5 do redis.call('ZADD', KEYS[i], 0, ARGV[4]) end
if ARGV[3] == '1' then redis.call('ZADD', KEYS[7], 0, ARGV[5]) end
if ARGV[7] == '1' then redis.call('SADD', KEYS[8], ARGV[6]) else redis.call('SREM', KEYS[8], ARGV[6]) end
if KEYS[9] then append_event(KEYS[9], 1, committed('{"task":' .. ARGV[2] .. '}', ARGV[2], 1), ARGV[8], ARGV[9], ARGV[10]) end
return 1
`);

// As CREATE, with ARGV[6] the expected version, ARGV[7] and [8] the mid-turn member and flag, then (with the stream) the event's JSON and the stream
// arguments. Replies {1, new version}, {0} (not in this scope) or {2, stored version} (conflict: another version, or a terminal task); only a write
// appends the event.
export const UPDATE = new RedisScript(`${APPEND_EVENT_LUA}${COMMITTED_LUA}
local stored = redis.call('HMGET', KEYS[1], 's', 'v', 't', 'm', 'i1', 'i2', 'i3', 'i4')
if stored[1] ~= ARGV[1] then return {0} end
local version = tonumber(stored[2])
if version ~= tonumber(ARGV[6]) or stored[3] == '1' then return {2, version} end
for i = 5, 8 do redis.call('ZREM', stored[i], stored[4]) end
redis.call('HSET', KEYS[1], 'v', version + 1, 'j', ARGV[2], 't', ARGV[3], 'm', ARGV[4],
  'i1', KEYS[2], 'i2', KEYS[3], 'i3', KEYS[4], 'i4', KEYS[5])
for i = 2, 5 do redis.call('ZADD', KEYS[i], 0, ARGV[4]) end
redis.call('DEL', KEYS[6])
if ARGV[3] == '1' then redis.call('ZADD', KEYS[7], 0, ARGV[5]) end
if ARGV[8] == '1' then redis.call('SADD', KEYS[8], ARGV[7]) else redis.call('SREM', KEYS[8], ARGV[7]) end
if KEYS[9] then append_event(KEYS[9], version + 1, committed(ARGV[9], ARGV[2], version + 1), ARGV[10], ARGV[11], ARGV[12]) end
return {1, version + 1}
`);

// An artifact event. KEYS: task hash, delta list, then (with the stream) the event stream. ARGV: scope, expected version, the delta, then (with the
// stream) the event's JSON, the task's JSON without its artifacts (the bus payload's task: an artifact event does not change the rest, and the
// artifacts would make every payload as long as the task), max length, retention ms, channel. Replies as UPDATE; the listing sets do not change (an
// artifact event leaves status and context).
export const APPEND_ARTIFACT = new RedisScript(`${APPEND_EVENT_LUA}${COMMITTED_LUA}
local stored = redis.call('HMGET', KEYS[1], 's', 'v', 't')
if stored[1] ~= ARGV[1] then return {0} end
local version = tonumber(stored[2])
if version ~= tonumber(ARGV[2]) or stored[3] == '1' then return {2, version} end
redis.call('HSET', KEYS[1], 'v', version + 1)
redis.call('RPUSH', KEYS[2], ARGV[3])
if KEYS[3] then append_event(KEYS[3], version + 1, committed(ARGV[4], ARGV[5], version + 1), ARGV[6], ARGV[7], ARGV[8]) end
return {1, version + 1}
`);

// A status event: as UPDATE (the listing sets move with the state and timestamp) but the task's JSON stays and the status joins the delta list. KEYS:
// task hash, four listing sets, delta list, finished-tasks set, mid-turn set, then (with the stream) the event stream. ARGV: scope, terminal flag,
// listing member, expected version, the delta, finished member, mid-turn member and flag, then (with the stream) the event's JSON, the payload's task
// JSON, max length, retention ms, channel. Replies as UPDATE.
export const APPEND_STATUS = new RedisScript(`${APPEND_EVENT_LUA}${COMMITTED_LUA}
local stored = redis.call('HMGET', KEYS[1], 's', 'v', 't', 'm', 'i1', 'i2', 'i3', 'i4')
if stored[1] ~= ARGV[1] then return {0} end
local version = tonumber(stored[2])
if version ~= tonumber(ARGV[4]) or stored[3] == '1' then return {2, version} end
for i = 5, 8 do redis.call('ZREM', stored[i], stored[4]) end
redis.call('HSET', KEYS[1], 'v', version + 1, 't', ARGV[2], 'm', ARGV[3],
  'i1', KEYS[2], 'i2', KEYS[3], 'i3', KEYS[4], 'i4', KEYS[5])
for i = 2, 5 do redis.call('ZADD', KEYS[i], 0, ARGV[3]) end
redis.call('RPUSH', KEYS[6], ARGV[5])
if ARGV[2] == '1' then redis.call('ZADD', KEYS[7], 0, ARGV[6]) end
if ARGV[8] == '1' then redis.call('SADD', KEYS[8], ARGV[7]) else redis.call('SREM', KEYS[8], ARGV[7]) end
if KEYS[9] then append_event(KEYS[9], version + 1, committed(ARGV[9], ARGV[10], version + 1), ARGV[11], ARGV[12], ARGV[13]) end
return {1, version + 1}
`);
