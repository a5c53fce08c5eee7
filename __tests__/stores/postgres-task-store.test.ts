/**
 * The store contract, unchanged, on PostgresTaskStore against a real PostgreSQL: directly and behind
 * 1-5 ms of random latency per call. Plus what the contract cannot see: artifacts appended as chunk
 * rows (not the whole task rewritten), tables in the configured schema, two replicas migrating at
 * once, and option errors.
 */
import { describeTaskStoreContract, withLatency } from 'a2a-express-kit/testing';
import { migratePostgres, PostgresTaskStore, POSTGRES_SCHEMA_VERSION } from 'a2a-express-kit/postgres';
import type { Task } from 'a2a-express-kit';
import { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import { useTestPostgres } from '../helpers/postgres';

const pg = useTestPostgres();
let pool: Pool;
beforeAll(async () => {
  if (pg.describe !== describe) return;
  pool = new Pool({ connectionString: pg.url(), max: 8 });
  await migratePostgres({ pool, schema: pg.schema });
});
afterAll(() => pool?.end());

const makeStore = () => new PostgresTaskStore({ pool, schema: pg.schema });

describeTaskStoreContract('PostgresTaskStore', makeStore, { describe: pg.describe });

describeTaskStoreContract('PostgresTaskStore behind withLatency', () => withLatency(makeStore()), { describe: pg.describe });

pg.describe('PostgresTaskStore beyond the contract', () => {
  const scope = { tenant: 't', owner: 'o' };
  const working = (id: string, artifacts?: Task['artifacts']): Task => ({
    id,
    contextId: 'c1',
    status: { state: 'TASK_STATE_WORKING', timestamp: '2026-01-01T00:00:00.000Z' },
    ...(artifacts ? { artifacts } : {}),
  });
  const count = async (table: string, id: string) =>
    Number((await pool.query(`SELECT count(*) AS n FROM "${pg.schema}"."a2a_${table}" WHERE task_id = $1`, [id])).rows[0].n);

  it('appends an artifact chunk as one row, without rewriting the task or the earlier chunks', async () => {
    const store = makeStore();
    const id = `chunks-${randomUUID()}`;
    await store.create(scope, working(id));
    const parts = [{ text: 'a' }];
    let task = working(id, [{ artifactId: 'x', parts: [...parts] }]);
    let version = await store.update(scope, task, 1, {
      kind: 'artifact',
      update: { taskId: id, contextId: 'c1', artifact: { artifactId: 'x', parts } },
    });
    for (const text of ['b', 'c', 'd']) {
      const chunk = [{ text }];
      task = working(id, [{ artifactId: 'x', parts: [...task.artifacts![0].parts, ...chunk] }]);
      const body = (await pool.query(`SELECT body FROM "${pg.schema}"."a2a_tasks" WHERE id = $1`, [id])).rows[0].body;
      version = await store.update(scope, task, version, {
        kind: 'artifact',
        update: { taskId: id, contextId: 'c1', append: true, artifact: { artifactId: 'x', parts: chunk } },
      });
      // The task's own row kept its body: only the version moved.
      expect((await pool.query(`SELECT body FROM "${pg.schema}"."a2a_tasks" WHERE id = $1`, [id])).rows[0].body).toBe(body);
    }
    expect(await count('artifact_chunks', id)).toBe(4);
    expect((await store.get(scope, id))?.task.artifacts?.[0].parts).toEqual([{ text: 'a' }, { text: 'b' }, { text: 'c' }, { text: 'd' }]);
    // A status update repeating the artifact unchanged leaves its chunks alone.
    const done: Task = { ...task, status: { state: 'TASK_STATE_COMPLETED', timestamp: '2026-01-01T00:00:01.000Z' } };
    await store.update(scope, done, version, { kind: 'replace' });
    expect(await count('artifact_chunks', id)).toBe(4);
    expect((await store.get(scope, id))?.task).toEqual(done);
  });

  it('keeps its tables in the configured schema, with a version table', async () => {
    const tables = await pool.query(`SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name`, [pg.schema]);
    expect(tables.rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining([
        'a2a_tasks',
        'a2a_artifacts',
        'a2a_artifact_chunks',
        'a2a_events',
        'a2a_leases',
        'a2a_push_configs',
        'a2a_push_claims',
        'a2a_schema_version',
      ]),
    );
    expect((await pool.query(`SELECT version FROM "${pg.schema}".a2a_schema_version`)).rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
  });

  it('migrates once when several replicas open a new schema at the same moment', async () => {
    const schema = `a2a_race_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    const pools = Array.from({ length: 4 }, () => new Pool({ connectionString: pg.url(), max: 2 }));
    try {
      await Promise.all(pools.map((p) => migratePostgres({ pool: p, schema })));
      expect((await pool.query(`SELECT version FROM "${schema}".a2a_schema_version`)).rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
      const store = new PostgresTaskStore({ pool, schema });
      await store.create(scope, working(`race-${randomUUID()}`));
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
  });

  it('refuses a database whose schema is newer than this code', async () => {
    const schema = `a2a_newer_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    await migratePostgres({ pool, schema });
    await pool.query(`UPDATE "${schema}".a2a_schema_version SET version = version + 1`);
    await expect(migratePostgres({ pool, schema })).rejects.toThrow(/newer than this a2a-express-kit knows/);
  });

  it('names the option in a construction error', () => {
    expect(() => new PostgresTaskStore({ pool: {} as Pool })).toThrow(/PostgresTaskStore: option "pool"/);
    expect(() => new PostgresTaskStore({ pool, schema: 'Bad"; DROP' })).toThrow(/option "schema": must be a lower-case SQL identifier/);
    expect(() => new PostgresTaskStore({ pool, shema: 'x' } as never)).toThrow(/did you mean "schema"/);
  });
});
