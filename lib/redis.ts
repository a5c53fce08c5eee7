/** a2a-express-kit/redis: task store, event bus and task leases on Redis, for several replicas (redis is an optional peer dependency). */
export {};
