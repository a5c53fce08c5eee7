/**
 * The leases contract on PostgresTaskLeases against a real PostgreSQL, each instance on its own
 * pool (a replica each), with a 500 ms lease; then what only PostgreSQL shows: the lease row with
 * its holder and expiry, a lease taken from under its holder reported lost, close() ending
 * pending waits.
 */
import { describeTaskLeasesContract } from 'a2a-express-kit/testing';
import { migratePostgres, PostgresTaskLeases } from 'a2a-express-kit/postgres';
import { silentLogger } from 'a2a-express-kit';
import { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import { useTestPostgres } from '../helpers/postgres';
import { until } from '../helpers/async';

const TTL = 500;
const pg = useTestPostgres();
let pools: Pool[] = [];
beforeAll(async () => {
  if (pg.describe !== describe) return;
  pools = Array.from({ length: 3 }, () => new Pool({ connectionString: pg.url(), max: 4 }));
  await migratePostgres({ pool: pools[0], schema: pg.schema });
});
afterAll(() => Promise.all(pools.map((pool) => pool.end())));

let made = 0;
const makeLeases = (options: Partial<ConstructorParameters<typeof PostgresTaskLeases>[0]> = {}) =>
  new PostgresTaskLeases({ pool: pools[made++ % pools.length], schema: pg.schema, leaseTtlMs: TTL, logger: silentLogger, ...options });

describeTaskLeasesContract('PostgresTaskLeases', () => makeLeases(), { describe: pg.describe, ttlMs: TTL });

pg.describe('PostgresTaskLeases on PostgreSQL', () => {
  const opened: PostgresTaskLeases[] = [];
  const open = (options?: Parameters<typeof makeLeases>[0]) => {
    const leases = makeLeases(options);
    opened.push(leases);
    return leases;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((leases) => leases.close()));
  });
  const newTask = () => {
    const task = { scope: { tenant: 't', owner: 'o' }, taskId: `task-${randomUUID()}` };
    return { key: `key-${task.taskId}`, task };
  };
  const row = async (key: string) =>
    (await pools[0].query(`SELECT holder, expires_at - now() AS left, task_id FROM "${pg.schema}".a2a_leases WHERE key = $1`, [key])).rows[0];

  it('stores the holder and an expiry in database time, and deletes the row on release', async () => {
    const leases = open();
    const { key, task } = newTask();
    const lease = (await leases.acquire(key, task, 0))!;
    const stored = await row(key);
    expect(stored.holder).toMatch(new RegExp(`/${process.pid}/`));
    expect(stored.task_id).toBe(task.taskId);
    expect(leases.heldCount).toBe(1);
    await lease.release();
    expect(leases.heldCount).toBe(0);
    expect(await row(key)).toBeUndefined();
  });

  it('marks a lease lost when a renewal finds it taken by another holder', async () => {
    const leases = open();
    const { key, task } = newTask();
    const lease = (await leases.acquire(key, task, 0))!;
    await pools[0].query(`UPDATE "${pg.schema}".a2a_leases SET holder = 'someone-else', expires_at = now() + interval '1 hour' WHERE key = $1`, [
      key,
    ]);
    await until(() => lease.lost, 'the lease to be reported lost', 5 * TTL);
    expect(leases.heldCount).toBe(0);
    // Releasing a lost lease leaves the new holder's alone.
    await lease.release();
    expect((await row(key)).holder).toBe('someone-else');
  });

  it('close() ends a pending acquire with undefined and stops renewing', async () => {
    const [holder, waiter] = [open(), open()];
    const { key, task } = newTask();
    await holder.acquire(key, task, 0);
    const waiting = waiter.acquire(key, task, 60_000);
    await waiter.close();
    await expect(waiting).resolves.toBeUndefined();
    await expect(waiter.acquire(key, task, 0)).rejects.toThrow(/closed/);
  });

  it('names the option in a construction error', () => {
    expect(() => makeLeases({ leaseTtlMs: 0 })).toThrow(/PostgresTaskLeases: option "leaseTtlMs"/);
    expect(() => makeLeases({ leaseTTL: 5 } as never)).toThrow(/did you mean "leaseTtlMs"/);
  });
});
