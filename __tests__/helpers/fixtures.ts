/** A card and a router factory shared by the tests. */
import express from 'express';
import {
  InMemoryTaskStore,
  createA2ARouter,
  silentLogger,
  type A2ARouterOptions,
  type AgentCardInput,
  type AgentExecutor,
  type TaskStore,
} from '../../lib';
import { withLatency } from '../../lib/testing';
import { RedisTaskStore, type RedisClient } from '../../lib/redis';
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { migratePostgres, PostgresTaskStore } from '../../lib/postgres';
import { listen, type Listening } from './http';
import { redisForTests } from './redis';
import { useTestPostgres } from './postgres';

export const testCard: AgentCardInput = {
  name: 'Test Agent',
  description: 'Agent used by the test suite',
  version: '0.0.1',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain', 'application/json'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['test'] }],
};

/**
 * Whether this jest project runs the suites through a store with latency (the `latency` project):
 * every store call then takes 1-5 ms, as a database's would, so races the in-memory store hides show.
 */
export const storeLatency = (globalThis as { STORE_LATENCY?: boolean }).STORE_LATENCY === true;

/**
 * Whether this jest project runs the suites on the Redis task store (the `redis` project): a
 * redis-server per test file, one key prefix per server started by startAgent().
 */
export const redisStore = (globalThis as { REDIS_STORE?: boolean }).REDIS_STORE === true;
let redisClient: Promise<RedisClient> | undefined;
const redisServer = redisStore ? redisForTests() : undefined;
if (redisServer) {
  afterAll(async () => {
    const client = redisClient;
    redisClient = undefined;
    if (client) await (await client).close();
    await redisServer.stop();
  }, 20_000);
}

/**
 * Whether this jest project runs the suites on the PostgreSQL task store (the `postgres` project):
 * a cluster per test file, a schema per server started by startAgent().
 */
export const pgStore = (globalThis as { PG_STORE?: boolean }).PG_STORE === true;
const pgServer = pgStore ? useTestPostgres() : undefined;
let pgPool: Pool | undefined;
if (pgServer) {
  afterAll(async () => {
    const pool = pgPool;
    pgPool = undefined;
    await pool?.end();
  }, 20_000);
}

async function postgresTestStore(url: string): Promise<TaskStore> {
  // Loaded here: the other projects' suites never load pg.
  pgPool ??= new (await import('pg')).Pool({ connectionString: url, max: 10 });
  const schema = `a2a_guarantees_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  await migratePostgres({ pool: pgPool, schema });
  return new PostgresTaskStore({ pool: pgPool, schema });
}

/** The store startAgent gives a server that brings none: in-memory, or Redis / PostgreSQL in the `redis` / `postgres` projects. */
async function defaultTestStore(): Promise<TaskStore> {
  if (pgServer && pgServer.describe === describe) return postgresTestStore(pgServer.url());
  if (!redisServer?.available) return testStore();
  redisClient ??= redisServer.url().then(async (url) => {
    // Loaded here: the node-redis client costs ~0.3 s per test file, and only the redis project uses it.
    const { createClient } = await import('redis');
    const client = createClient({ url });
    client.on('error', () => {});
    await client.connect();
    return client as unknown as RedisClient;
  });
  return new RedisTaskStore({ client: await redisClient, keyPrefix: `a2a-guarantees:${randomUUID()}:` });
}

/** The store a test server gets: `store` (or a new in-memory one), behind latency in the latency project. */
export function testStore(store: TaskStore = new InMemoryTaskStore()): TaskStore {
  return storeLatency ? withLatency(store) : store;
}

export interface TestServer extends Listening {
  /** JSON-RPC endpoint. */
  readonly url: string;
  readonly router: ReturnType<typeof createA2ARouter>;
}

/** An Express app with the router at /agent (and optional middlewares before it). */
export async function startAgent(
  executor: AgentExecutor,
  options: Partial<A2ARouterOptions> & {
    before?: express.RequestHandler[];
    hostJson?: boolean;
  } = {},
): Promise<TestServer> {
  const { before = [], hostJson = false, ...routerOptions } = options;
  const app = express();
  if (hostJson) app.use(express.json());
  const router = createA2ARouter({
    agentCard: testCard,
    executor,
    logger: silentLogger,
    ...routerOptions,
    taskStore: routerOptions.taskStore ? testStore(routerOptions.taskStore) : await defaultTestStore(),
  });
  app.use('/agent', ...before, router);
  const listening = await listen(app);
  return { ...listening, url: `${listening.baseUrl}/agent`, router };
}
