/**
 * createPostgresBackend(): the PostgreSQL seams on one pool, ready to spread into createA2ARouter: `createA2ARouter({ agentCard, executor,
 * ...backend.options })`, with durable push in `backend.push`.
 */
import { z } from 'zod';
import { consoleLogger, type Logger, A2AOptionsError, optionsError, parseOptions } from '../../options.js';
import { type PgPool, PostgresDatabase } from './postgres-client.js';
import { PostgresTaskEventBus } from './postgres-event-bus.js';
import { migrate } from './postgres-migrations.js';
import { DEFAULT_QUERY_TIMEOUT_MS, loggerSchema, millisecondsSchema, poolSchema, schemaNameSchema } from './postgres-options.js';
import { PostgresPushConfigStore } from './postgres-push-config-store.js';
import { PostgresPushOutbox } from './postgres-push-outbox.js';
import { PostgresTaskLeases } from './postgres-task-leases.js';
import { PostgresTaskStore } from './postgres-task-store.js';

export interface PostgresBackendOptions {
  /** `postgres://user:password@host:port/database`: a pool is opened and owned by the backend. */
  readonly connectionString?: string;
  /** Your own node-postgres Pool instead of `connectionString`; close() leaves it open. Give it timeouts of its own (see docs/postgres.md). */
  readonly pool?: PgPool;
  /** The PostgreSQL schema holding the tables (created when missing). Default 'public'. */
  readonly schema?: string;
  /** Task lease time to live: how soon a dead replica's tasks are settled. Default 10000. */
  readonly leaseTtlMs?: number;
  /** How long a task's events stay resumable (SSE Last-Event-ID) and deliverable by push. Default 3600000. */
  readonly eventRetentionMs?: number;
  /** How many of a task's latest events stay resumable and deliverable by push. Default 200. */
  readonly eventMaxPerTask?: number;
  /** How long one statement may take before it fails instead of hanging. Default 5000. */
  readonly queryTimeoutMs?: number;
  /** How long connecting (and migrating) may take before createPostgresBackend() rejects. Default 10000. */
  readonly connectTimeoutMs?: number;
  /** Connections of the pool opened from `connectionString`. Default 10. */
  readonly maxConnections?: number;
  /** Connection trouble and lease renewals are reported here. Default: the console. */
  readonly logger?: Logger;
}

export interface PostgresBackend {
  /** Spread into createA2ARouter({ ... }). */
  readonly options: {
    readonly taskStore: PostgresTaskStore;
    readonly eventBus: PostgresTaskEventBus;
    readonly taskLeases: PostgresTaskLeases;
  };
  readonly taskStore: PostgresTaskStore;
  readonly eventBus: PostgresTaskEventBus;
  readonly taskLeases: PostgresTaskLeases;
  /**
   * Durable push notifications on the same database, for `pushNotifications: { ...backend.push, allow }`: configs and delivery cursors in tables,
   * events from the events table; a replica that dies before delivering has its deliveries taken over by another after `leaseTtlMs`.
   */
  readonly push: { readonly configStore: PostgresPushConfigStore; readonly outbox: PostgresPushOutbox };
  /** The pool in use (the one given, or the one opened from `connectionString`). */
  readonly pool: PgPool;
  /** Gives back the LISTEN connection, stops lease renewals, and ends the pool when it was opened from `connectionString`. Call it after router.close(). */
  close(): Promise<void>;
}

const FACTORY = 'createPostgresBackend';

const schema = z.strictObject({
  connectionString: z
    .string()
    .regex(/^postgres(ql)?:\/\//i, { error: 'must be a postgres:// or postgresql:// URL' })
    .optional(),
  pool: poolSchema.optional(),
  schema: schemaNameSchema,
  leaseTtlMs: millisecondsSchema(30).optional(),
  eventRetentionMs: millisecondsSchema(1000).optional(),
  eventMaxPerTask: z.number().int().min(1).max(1_000_000).optional(),
  queryTimeoutMs: z.number().int().min(10).max(600_000).default(DEFAULT_QUERY_TIMEOUT_MS),
  connectTimeoutMs: millisecondsSchema(1).default(10_000),
  maxConnections: z.number().int().min(2).max(1000).default(10),
  logger: loggerSchema.default(consoleLogger),
});

/**
 * Opens a pool from `connectionString` (every statement bounded by `queryTimeoutMs`, on the server and in the client) or uses the application's own
 * `pool` (left open on close()), brings the schema's tables up to date and listens for cancel requests before it resolves.
 */
export async function createPostgresBackend(options: PostgresBackendOptions): Promise<PostgresBackend> {
  const parsed = parseOptions(FACTORY, schema, options);
  const { connectionString, logger, queryTimeoutMs, connectTimeoutMs } = parsed;
  if ((connectionString === undefined) === (parsed.pool === undefined)) {
    throw optionsError(FACTORY, connectionString === undefined ? 'connectionString' : 'pool', 'pass either connectionString or pool (exactly one)');
  }
  const owned = parsed.pool === undefined;
  const pool = parsed.pool ?? (await poolFromUrl(connectionString!, parsed.maxConnections, connectTimeoutMs, queryTimeoutMs, logger));
  try {
    await within(migrate(new PostgresDatabase(pool, parsed.schema, queryTimeoutMs)), connectTimeoutMs + queryTimeoutMs, connectionString);
  } catch (error) {
    if (owned) await pool.end().catch(() => undefined);
    if (error instanceof Error && error.message.startsWith(FACTORY)) throw error;
    throw new Error(`${FACTORY}: could not open ${redacted(connectionString)}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }

  const connection = { pool, schema: parsed.schema, queryTimeoutMs };
  const eventBus = new PostgresTaskEventBus({
    ...connection,
    logger,
    ...(parsed.eventRetentionMs === undefined ? {} : { eventRetentionMs: parsed.eventRetentionMs }),
    ...(parsed.eventMaxPerTask === undefined ? {} : { eventMaxPerTask: parsed.eventMaxPerTask }),
  });
  const taskLeases = new PostgresTaskLeases({ ...connection, logger, ...(parsed.leaseTtlMs === undefined ? {} : { leaseTtlMs: parsed.leaseTtlMs }) });
  // Linked: each store write inserts its event in the bus's table in the same statement, so a replica killed between the write and the bus's publish
  // loses no event; and a task's create takes its lease, its terminal write gives it back, without a statement of their own.
  const taskStore = new PostgresTaskStore({ ...connection, eventBus, taskLeases });
  // Nothing runs until the router's push dispatcher starts the outbox (push enabled).
  const configStore = new PostgresPushConfigStore(connection);
  const outbox = new PostgresPushOutbox({
    configStore,
    taskStore,
    logger,
    ...(parsed.leaseTtlMs === undefined ? {} : { claimTtlMs: parsed.leaseTtlMs }),
  });
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await Promise.allSettled([eventBus.close(), taskLeases.close()]);
      if (owned) await pool.end();
    })());
  // Cancels routed to this replica are heard from the moment it serves, before its first turn.
  try {
    await within(eventBus.listenForCancels(), connectTimeoutMs + queryTimeoutMs, connectionString);
  } catch (error) {
    await close().catch(() => undefined);
    throw new Error(`${FACTORY}: could not listen on ${redacted(connectionString)}: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  return {
    options: { taskStore, eventBus, taskLeases },
    taskStore,
    eventBus,
    taskLeases,
    push: { configStore, outbox },
    pool,
    close,
  };
}

interface PgModule {
  Pool: new (config: Record<string, unknown>) => PgPool;
}

async function poolFromUrl(url: string, max: number, connectTimeoutMs: number, queryTimeoutMs: number, logger: Logger): Promise<PgPool> {
  let pg: PgModule;
  try {
    const loaded = (await import('pg')) as unknown as PgModule & { default?: PgModule };
    pg = loaded.Pool ? loaded : loaded.default!;
  } catch {
    throw new A2AOptionsError(`${FACTORY}: the "pg" package is not installed (npm install pg)`);
  }
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: connectTimeoutMs,
    // Bounded on both sides: the server cancels a long statement, the client stops waiting for a hung server.
    statement_timeout: queryTimeoutMs,
    query_timeout: queryTimeoutMs + 1_000,
    idle_in_transaction_session_timeout: Math.max(queryTimeoutMs * 2, 10_000),
    keepAlive: true,
    application_name: 'a2a-express-kit',
  });
  // An idle connection that drops reports here; an unhandled 'error' event would end the process.
  pool.on('error', (error) => logger.warn({ err: error }, 'PostgreSQL connection error'));
  return pool;
}

/** `work`, given up after `timeoutMs` (a pool without a connection timeout would wait forever). */
async function within<T>(work: Promise<T>, timeoutMs: number, url: string | undefined): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${FACTORY}: could not connect to ${redacted(url)} and migrate within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The URL without its password, for messages. */
function redacted(url: string | undefined): string {
  if (url === undefined) return 'PostgreSQL';
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'PostgreSQL';
  }
}
