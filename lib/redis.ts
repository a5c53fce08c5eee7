/**
 * a2a-express-kit/redis: task store, event bus and task leases on Redis, for several replicas of one
 * agent (node-redis, `redis`, is an optional peer dependency; nothing here is loaded by the main entry).
 */
export { createRedisBackend } from './server/redis/redis-backend.js';
export type { RedisBackend, RedisBackendOptions } from './server/redis/redis-backend.js';
export { RedisTaskStore } from './server/redis/redis-task-store.js';
export type { RedisTaskStoreOptions } from './server/redis/redis-task-store.js';
export { RedisTaskEventBus } from './server/redis/redis-event-bus.js';
export type { RedisTaskEventBusOptions } from './server/redis/redis-event-bus.js';
export { RedisTaskLeases } from './server/redis/redis-task-leases.js';
export type { RedisTaskLeasesOptions } from './server/redis/redis-task-leases.js';
export { RedisPushConfigStore } from './server/redis/redis-push-config-store.js';
export type { RedisPushConfigStoreOptions } from './server/redis/redis-push-config-store.js';
export { RedisPushOutbox } from './server/redis/redis-push-outbox.js';
export type { RedisPushOutboxOptions } from './server/redis/redis-push-outbox.js';
export type { RedisClient, RedisArgument } from './server/redis/redis-client.js';
