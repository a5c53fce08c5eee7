/**
 * The event bus contract on PostgresTaskEventBus against a real PostgreSQL, with a peer on its own
 * pool (another process's view, its own LISTEN connection); then what only PostgreSQL shows: the
 * events table as the resumable history, NOTIFY payloads that carry only key and version, rows
 * past the retention deleted, and catch-up after the LISTEN connection was cut.
 */
import { describeTaskEventBusContract } from 'a2a-express-kit/testing';
import { migratePostgres, PostgresTaskEventBus } from 'a2a-express-kit/postgres';
import { silentLogger, type CommittedEvent } from 'a2a-express-kit';
import { Pool } from 'pg';
import { createHash, randomUUID } from 'node:crypto';
import { useTestPostgres } from '../helpers/postgres';
import { until } from '../helpers/async';

const pg = useTestPostgres();
let pool: Pool;
let peerPool: Pool;
beforeAll(async () => {
  if (pg.describe !== describe) return;
  pool = new Pool({ connectionString: pg.url(), max: 6 });
  peerPool = new Pool({ connectionString: pg.url(), max: 6 });
  await migratePostgres({ pool, schema: pg.schema });
});
afterAll(async () => {
  await pool?.end();
  await peerPool?.end();
});

const makeBus = (p: Pool = pool, options: Partial<ConstructorParameters<typeof PostgresTaskEventBus>[0]> = {}) =>
  new PostgresTaskEventBus({ pool: p, schema: pg.schema, logger: silentLogger, ...options });

const opened: PostgresTaskEventBus[] = [];
const openBus = (...args: Parameters<typeof makeBus>) => {
  const bus = makeBus(...args);
  opened.push(bus);
  return bus;
};
afterEach(async () => {
  await Promise.all(opened.splice(0).map((bus) => bus.close()));
});

describeTaskEventBusContract('PostgresTaskEventBus', () => makeBus(), {
  describe: pg.describe,
  makePeer: () => makeBus(peerPool),
  whenSubscribed: (bus) => bus.subscribed(),
});

const event = (key: string, version: number): CommittedEvent => ({
  event: { statusUpdate: { taskId: key, contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } },
  task: { id: key, contextId: 'c', status: { state: 'TASK_STATE_WORKING' } },
  version,
});

pg.describe('PostgresTaskEventBus on PostgreSQL', () => {
  it('keeps each event as a row and notifies only its version and key (a big event stays under the NOTIFY limit)', async () => {
    const bus = openBus();
    const key = `k-${randomUUID()}`;
    const heard: string[] = [];
    const listener = await pool.connect();
    try {
      listener.on('notification', (message) => heard.push(message.payload ?? ''));
      const channel = `a2a_${createHash('sha1').update(pg.schema).digest('hex').slice(0, 16)}_events`;
      await listener.query(`LISTEN "${channel}"`);
      const big = { ...event(key, 1), task: { ...event(key, 1).task, metadata: { blob: 'x'.repeat(20_000) } } };
      await bus.publish(key, big);
      await until(() => heard.length === 1, 'the notification');
      expect(heard[0]).toBe(`1 k${key}`);
      expect(await bus.history(key, 0)).toEqual([big]);
    } finally {
      listener.release(true);
    }
  });

  it('deletes events past the retention; history() is undefined once the start is gone', async () => {
    const bus = openBus(pool, { eventRetentionMs: 1000 });
    const key = `k-${randomUUID()}`;
    bus.subscribe(key, () => {});
    await bus.subscribed();
    await bus.publish(key, event(key, 1));
    await bus.publish(key, event(key, 2));
    // Age the first event instead of waiting the retention out.
    await pool.query(`UPDATE "${pg.schema}".a2a_events SET created_at = now() - interval '1 hour' WHERE task_key = $1 AND version = 1`, [key]);
    let history: CommittedEvent[] | undefined = [];
    for (let i = 0; i < 100 && history !== undefined; i++) {
      history = await bus.history(key, 0);
      if (history !== undefined) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(history).toBeUndefined();
    expect((await bus.history(key, 1))?.map((e) => e.version)).toEqual([2]);
  });

  it('keeps the latest eventMaxPerTask events of a task; history() is undefined before them', async () => {
    const bus = openBus(pool, { eventMaxPerTask: 10 });
    const key = `k-${randomUUID()}`;
    for (let v = 1; v <= 25; v++) void bus.publish(key, event(key, v));
    await bus.publish(key, event(key, 26));
    const kept = await pool.query(`SELECT version FROM "${pg.schema}".a2a_events WHERE task_key = $1 ORDER BY version`, [key]);
    expect(kept.rows.map((r) => r.version)).toEqual([17, 18, 19, 20, 21, 22, 23, 24, 25, 26]);
    expect(await bus.history(key, 0)).toBeUndefined();
    expect((await bus.history(key, 23))?.map((e) => e.version)).toEqual([24, 25, 26]);
  });

  it('catches up from the events table after its LISTEN connection was cut', async () => {
    // A pool of its own, named, so that every one of its connections can be cut.
    const cutPool = new Pool({ connectionString: pg.url(), max: 4, application_name: 'a2a-cut-me' });
    cutPool.on('error', () => {}); // idle connections cut below report here
    const bus = openBus(cutPool as unknown as Pool);
    const publisher = openBus(peerPool);
    const key = `k-${randomUUID()}`;
    const got: number[] = [];
    bus.subscribe(key, (c) => got.push(c.version));
    await bus.subscribed();
    await publisher.publish(key, event(key, 1));
    await until(() => got.length === 1, 'the first event');
    // Cut every connection of the bus's pool: the bus takes another and reads what it missed.
    const cut = await pool.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'a2a-cut-me'`);
    expect(cut.rowCount).toBeGreaterThanOrEqual(1);
    await publisher.publish(key, event(key, 2));
    await publisher.publish(key, event(key, 3));
    await until(() => got.length === 3, 'the events published while the connection was down', 10_000);
    expect(got).toEqual([1, 2, 3]);
    await bus.close();
    await cutPool.end();
  });

  it('shares one LISTEN connection per pool between buses', async () => {
    const [a, b] = [openBus(), openBus()];
    a.subscribe(`k-${randomUUID()}`, () => {});
    b.onCancelRequest(`k-${randomUUID()}`, () => {});
    await Promise.all([a.subscribed(), b.subscribed()]);
    // Checked out for good: the LISTEN connection, one for both buses.
    expect(pool.totalCount - pool.idleCount).toBe(1);
  });

  it('refuses a version that is not a positive integer', async () => {
    const bus = openBus();
    await expect(bus.publish('k', event('k', 0))).rejects.toThrow(RangeError);
    await expect(bus.publish('k', event('k', 1.5))).rejects.toThrow(RangeError);
  });

  it('names the option in a construction error', () => {
    expect(() => makeBus(pool, { eventRetentionMs: 0 })).toThrow(/PostgresTaskEventBus: option "eventRetentionMs"/);
    expect(() => makeBus(pool, { eventRetention: 5 } as never)).toThrow(/did you mean "eventRetentionMs"/);
    expect(() => makeBus(pool, { eventMaxPerTask: 0 })).toThrow(/option "eventMaxPerTask"/);
  });
});
