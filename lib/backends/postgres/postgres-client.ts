/**
 * The part of node-postgres the PostgreSQL seams use, structurally (nothing imports `pg` at run time), and `PostgresDatabase`, the one place
 * statements run: within a deadline, in the schema.
 */
import { createHash } from 'node:crypto';

export interface PgQueryConfig {
  /** A prepared statement's name: parsed once per connection. */
  readonly name?: string;
  readonly text: string;
  readonly values?: readonly unknown[];
  /** node-postgres gives up waiting for the answer after this many ms (the query errors). */
  readonly query_timeout?: number;
}

export interface PgResult<R> {
  readonly rows: R[];
  readonly rowCount: number | null;
}

export interface PgNotification {
  readonly channel: string;
  readonly payload?: string;
}

/** A connection taken from a pool (`pool.connect()`). */
export interface PgPoolClient {
  query<R = Record<string, unknown>>(config: PgQueryConfig): Promise<PgResult<R>>;
  /** Back to the pool; with an error, the connection is destroyed instead. */
  release(error?: Error | boolean): void;
  on(event: 'notification', listener: (message: PgNotification) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  removeAllListeners(event?: string): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** A node-postgres `Pool`. */
export interface PgPool {
  query<R = Record<string, unknown>>(config: PgQueryConfig): Promise<PgResult<R>>;
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** Whether `value` looks like a pg.Pool (for options validation). */
export function isPgPool(value: unknown): value is PgPool {
  if (value === null || typeof value !== 'object') return false;
  const pool = value as Record<string, unknown>;
  return ['query', 'connect', 'end', 'on'].every((name) => typeof pool[name] === 'function');
}

/** A schema name as the `schema` option accepts it: a plain lower-case SQL identifier. */
export const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** `"name"`: an identifier quoted for SQL (names are validated too, so this is belt and braces). */
export const quoteIdentifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * A NOTIFY channel name for this schema: channel names are identifiers of at most 63 bytes, so the schema is hashed into it (two schemas on one
 * database never hear each other).
 */
export const channelName = (schema: string, kind: string): string => `a2a_${createHash('sha1').update(schema).digest('hex').slice(0, 16)}_${kind}`;

/** How a task key travels in a NOTIFY payload (at most 8000 bytes): as it is when short, else its hash. Listeners compare against the same form. */
export const wireKey = (key: string): string => (key.length <= 256 ? `k${key}` : `h${createHash('sha1').update(key).digest('hex')}`);

// Named statements are parsed and planned once per connection (about a tenth less CPU per request); the texts are the backend's own, a few dozen per
// schema, and past the bound the rest run unnamed.
const statementNames = new Map<string, string>();
const MAX_NAMED_STATEMENTS = 1_000;

function queryConfig(text: string, values: readonly unknown[] | undefined, timeoutMs: number): PgQueryConfig {
  if (values === undefined || values.length === 0) return { text, values, query_timeout: timeoutMs };
  let name = statementNames.get(text);
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) statementNames.set(text, (name = `a2a_${statementNames.size}`));
  return { name, text, values, query_timeout: timeoutMs };
}

export class PostgresDatabase {
  readonly schema: string;
  readonly #pool: PgPool;
  readonly #timeoutMs: number;
  readonly #quotedSchema: string;

  constructor(pool: PgPool, schema: string, queryTimeoutMs: number) {
    this.#pool = pool;
    this.schema = schema;
    this.#timeoutMs = queryTimeoutMs;
    this.#quotedSchema = quoteIdentifier(schema);
  }

  get pool(): PgPool {
    return this.#pool;
  }

  /** The client-side bound on every statement, in ms. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /** `"schema"."a2a_<name>"`. */
  table(name: string): string {
    return `${this.#quotedSchema}.${quoteIdentifier(`a2a_${name}`)}`;
  }

  /** One statement on a pooled connection (autocommit), bounded by the query timeout. */
  async query<R = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<R[]> {
    return (await this.#statement<R>(text, values)).rows;
  }

  /** The same with the affected row count. */
  async run(text: string, values?: readonly unknown[]): Promise<number> {
    return (await this.#statement(text, values)).rowCount ?? 0;
  }

  /** Sent only within its deadline: a connection handed over later goes back unused, so a write given up on never runs. */
  async #statement<R>(text: string, values: readonly unknown[] | undefined): Promise<PgResult<R>> {
    const deadline = performance.now() + this.#timeoutMs;
    const client = await this.#connect(deadline);
    let failure: Error | undefined;
    const onError = (error: Error) => (failure = error);
    client.on('error', onError);
    try {
      return await client.query<R>(queryConfig(text, values, Math.max(1, Math.ceil(deadline - performance.now()))));
    } catch (error) {
      failure ??= error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(failure);
    }
  }

  async #connect(deadline: number): Promise<PgPoolClient> {
    const connecting = this.#pool.connect();
    if (deadline === Infinity) return connecting;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`PostgreSQL: no connection within ${this.#timeoutMs} ms (queryTimeoutMs); the statement was not sent`)),
        Math.max(0, deadline - performance.now()),
      );
    });
    try {
      return await Promise.race([connecting, late]);
    } catch (error) {
      connecting.then(
        (client) => client.release(),
        () => undefined,
      );
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** `work` inside BEGIN … COMMIT on one connection, within `budgetMs`; rolled back when it throws or runs late. */
  async transaction<T>(
    work: (query: <R = Record<string, unknown>>(text: string, values?: readonly unknown[]) => Promise<R[]>) => Promise<T>,
    budgetMs = this.#timeoutMs,
  ): Promise<T> {
    const deadline = performance.now() + budgetMs;
    const client = await this.#connect(deadline);
    let broken: Error | undefined;
    // A connection that drops emits 'error' (unhandled, it would end the process): it is not reused.
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    const query = async <R>(text: string, values?: readonly unknown[]): Promise<R[]> =>
      (await client.query<R>(queryConfig(text, values, this.#timeoutMs))).rows;
    try {
      await query('BEGIN');
      const result = await work(query);
      if (performance.now() > deadline) throw new Error(`PostgreSQL: a transaction outlived its ${budgetMs} ms; rolled back`);
      await query('COMMIT');
      return result;
    } catch (error) {
      if (!broken) {
        try {
          await query('ROLLBACK');
        } catch (rollback) {
          broken = rollback instanceof Error ? rollback : new Error(String(rollback));
        }
      }
      throw error;
    } finally {
      // A broken connection keeps the listener: it is destroyed, and may still report.
      if (!broken) client.removeListener('error', onError);
      client.release(broken);
    }
  }
}
