/**
 * Cancel requests on PostgreSQL reach the replica running the turn: one that has run no turn yet
 * (createPostgresBackend resolves once it listens), and one whose LISTEN connection is being
 * replaced when the request is sent (the request is logged and replayed once it listens again).
 */
import { createPostgresBackend, type PostgresBackend } from 'a2a-express-kit/postgres';
import { silentLogger, type Logger } from 'a2a-express-kit';
import { Pool, type PoolClient } from 'pg';
import { channelName } from '../../lib/backends/postgres/postgres-client';
import { deferred, until } from '../helpers/async';
import { useTestPostgres } from '../helpers/postgres';

const pg = useTestPostgres();

pg.describe('cancel requests on PostgreSQL replicas', () => {
  const opened: PostgresBackend[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((backend) => backend.close()));
  });
  const open = async (options: { pool?: Pool; logger?: Logger } = {}) => {
    const connection = options.pool ? { pool: options.pool } : { connectionString: pg.url() };
    const backend = await createPostgresBackend({ ...connection, schema: pg.schema, logger: options.logger ?? silentLogger });
    opened.push(backend);
    return backend;
  };

  it('hears a cancel routed to it at once after its first cancel listener starts', async () => {
    const [fresh, other] = [await open(), await open()];
    // The other replica has a connection ready, as a serving replica has: its NOTIFY goes out at once.
    await other.pool.query({ text: 'SELECT 1' });
    let heard!: () => void;
    const cancelled = new Promise<'heard'>((resolve) => (heard = () => resolve('heard')));
    fresh.eventBus.onCancelRequest('task-key', () => heard());
    other.eventBus.requestCancel('task-key');
    // A NOTIFY reaches a listening connection in milliseconds; one not heard in 5 s was lost.
    let timer: NodeJS.Timeout | undefined;
    const lost = new Promise<'lost'>((resolve) => (timer = setTimeout(() => resolve('lost'), 5_000)));
    expect(await Promise.race([cancelled, lost])).toBe('heard');
    clearTimeout(timer);
  });

  it('hears a cancel sent while its LISTEN connection was down, once it listens again', async () => {
    // Three connections: the LISTEN one, and two the test holds so that the replacement waits.
    const pool = new Pool({ connectionString: pg.url(), max: 3, application_name: 'a2a-cancel-gap' });
    pool.on('error', () => {});
    const dropped = deferred();
    const logger: Logger = { ...silentLogger, warn: (_obj, msg) => msg?.includes('LISTEN connection dropped') && dropped.resolve() };
    const replica = await open({ pool, logger });
    const other = await open();
    let heard = 0;
    replica.eventBus.onCancelRequest('gap-task', () => heard++);
    await replica.eventBus.subscribed();
    const held: PoolClient[] = [await pool.connect(), await pool.connect()];
    const ours = await Promise.all(held.map(async (client) => (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid));
    // Asked before the drop: the freed slot goes to the test, and the listener's reconnect waits behind it.
    const third = pool.connect();
    const admin = new Pool({ connectionString: pg.url(), max: 2 });
    const cut = await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'a2a-cancel-gap' AND pid <> ALL($1::int[])`,
      [ours],
    );
    expect(cut.rowCount).toBe(1);
    await dropped.promise;
    held.push(await third);
    // The cancel goes out while nothing of the replica listens; a listener of the test's own sees it sent.
    const watcher = await admin.connect();
    const sent = deferred();
    watcher.on('notification', () => sent.resolve());
    await watcher.query(`LISTEN "${channelName(pg.schema, 'cancel')}"`);
    other.eventBus.requestCancel('gap-task');
    await sent.promise;
    watcher.release(true);
    expect(heard).toBe(0);
    for (const client of held) client.release();
    await until(() => heard > 0, 'the cancel sent while the LISTEN connection was down');
    await replica.eventBus.subscribed();
    expect(heard).toBe(1);
    await replica.close();
    await pool.end();
    await admin.end();
  });
});
