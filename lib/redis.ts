/** a2a-express-kit/redis: task store, event bus, leases and push stores on Redis for replicas (`redis` an optional peer). */
export { createRedisBackend } from './backends/redis/redis-backend.js';
export { RedisCommandTimeoutError } from './backends/redis/redis-deadline.js';
export type { RedisBackend, RedisBackendOptions } from './backends/redis/redis-backend.js';
export { RedisTaskStore } from './backends/redis/redis-task-store.js';
export type { RedisTaskStoreOptions } from './backends/redis/redis-task-store.js';
export { RedisTaskEventBus } from './backends/redis/redis-event-bus.js';
export type { RedisTaskEventBusOptions } from './backends/redis/redis-event-bus.js';
export { RedisTaskLeases } from './backends/redis/redis-task-leases.js';
export type { RedisTaskLeasesOptions } from './backends/redis/redis-task-leases.js';
export { RedisPushConfigStore } from './backends/redis/redis-push-config-store.js';
export type { RedisPushConfigStoreOptions } from './backends/redis/redis-push-config-store.js';
export { RedisPushOutbox } from './backends/redis/redis-push-outbox.js';
export type { RedisPushOutboxOptions } from './backends/redis/redis-push-outbox.js';
export type { RedisClient, RedisArgument } from './backends/redis/redis-client.js';
