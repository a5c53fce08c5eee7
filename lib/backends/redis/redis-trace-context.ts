/**
 * The trace context a task was started in (tracing), kept as field `tp` of the task's hash: beside
 * the task, never in its JSON, and removed with the hash. Written and read only in the task's scope.
 */
import type { RedisClient } from './redis-client.js';
import { RedisScript } from './redis-script.js';

// KEYS: task hash. ARGV: scope, traceparent.
const SAVE = new RedisScript(`
if redis.call('HGET', KEYS[1], 's') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'tp', ARGV[2])
return 1
`);

export async function saveTraceContext(client: RedisClient, taskHash: string, scopeId: string, traceparent: string): Promise<void> {
  await SAVE.run<number>(client, [taskHash], [scopeId, traceparent]);
}

export async function loadTraceContext(client: RedisClient, taskHash: string, scopeId: string): Promise<string | undefined> {
  const [scope, traceparent] = await client.sendCommand<Array<string | null>>(['HMGET', taskHash, 's', 'tp']);
  return scope === scopeId && traceparent ? traceparent : undefined;
}
