/**
 * PostgresTaskStore.removeFinished beyond the contract: a removed task leaves no row in any table
 * of the schema (artifacts, chunks, logged events, push configs, claims, leases), while a task kept
 * keeps all of its; two replicas sweeping at once count each task once; the sweep reads the
 * partial index of finished tasks, which a schema of version 1 gains on open; the router's
 * `retention` option removes what it finished.
 */
import { randomUUID } from 'node:crypto';
import type { StreamResponse, Task, TaskScope } from 'a2a-express-kit';
import { silentLogger } from 'a2a-express-kit';
import { migratePostgres, POSTGRES_SCHEMA_VERSION, PostgresPushConfigStore, PostgresTaskEventBus, PostgresTaskStore } from 'a2a-express-kit/postgres';
import { Pool } from 'pg';
import { taskKey } from '../../lib/engine/seams/task-store';
import { finishedBeforeSql } from '../../lib/backends/postgres/postgres-retention';
import { startAgent } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { useTestPostgres } from '../helpers/postgres';

const pg = useTestPostgres();
let pool: Pool;
beforeAll(async () => {
  if (pg.describe !== describe) return;
  pool = new Pool({ connectionString: pg.url(), max: 8 });
  await migratePostgres({ pool, schema: pg.schema });
});
afterAll(() => pool?.end());
const connection = () => ({ pool, schema: pg.schema });

// Each test sweeps its own years (the sweep takes every scope): none reaches another test's tasks.
const at = (year: number, s: number) => new Date(Date.UTC(year, 0, 1) + s * 1000).toISOString();
const statusUpdate = (task: Task) => ({ taskId: task.id, contextId: task.contextId ?? '', status: task.status });
const statusEvent = (task: Task): StreamResponse => ({ statusUpdate: statusUpdate(task) });

pg.describe('PostgresTaskStore retention', () => {
  const buses: PostgresTaskEventBus[] = [];
  afterAll(() => Promise.all(buses.map((bus) => bus.close())));
  const linkedStore = () => {
    const eventBus = new PostgresTaskEventBus({ ...connection(), logger: silentLogger });
    buses.push(eventBus);
    return new PostgresTaskStore({ ...connection(), eventBus });
  };

  /**
   * A task written as the engine writes one (created, an artifact in chunks, each write logging its
   * event), with a push config, a push claim and a lease; finished at `timestamp` unless `finish` is false.
   */
  async function taskWithEverything(store: PostgresTaskStore, scope: TaskScope, timestamp: string, finish = true): Promise<string> {
    const id = `task-${randomUUID()}`;
    const task: Task = { id, contextId: `ctx-${id}`, status: { state: 'TASK_STATE_WORKING', timestamp }, artifacts: [] };
    await store.create(scope, task);
    await new PostgresPushConfigStore(connection()).put(scope, { id: 'hook', taskId: id, url: 'https://hooks.example.com/x', protocol: '1.0' }, 10);
    let version = 1;
    for (let i = 0; i < 3; i++) {
      const part = { text: `chunk ${i}` };
      const update = { taskId: id, contextId: task.contextId!, artifact: { artifactId: 'out', parts: [part] }, append: i > 0, lastChunk: false };
      task.artifacts = [{ artifactId: 'out', parts: [...(task.artifacts?.[0]?.parts ?? []), part] }];
      version = await store.update(scope, task, version, { kind: 'artifact', update, event: { artifactUpdate: update } });
    }
    if (finish) {
      const done: Task = { ...task, status: { state: 'TASK_STATE_COMPLETED', timestamp } };
      await store.update(scope, done, version, { kind: 'status', update: statusUpdate(done), event: statusEvent(done) });
    }
    // A claim and a lease left behind (a replica died holding them), keyed as the outbox and leases key them.
    const key = taskKey(scope, id);
    await pool.query(`INSERT INTO "${pg.schema}".a2a_push_claims (task_key, holder, expires_at) VALUES ($1, 'gone', now())`, [key]);
    await pool.query(
      `INSERT INTO "${pg.schema}".a2a_leases (key, tenant, owner, task_id, holder, expires_at) VALUES ($1, $2, $3, $4, 'gone', now())`,
      [key, scope.tenant, scope.owner, id],
    );
    return id;
  }

  /** Per table of the schema, how many rows mention `id` anywhere (a task key contains the id). */
  async function rowsMentioning(id: string): Promise<Record<string, number>> {
    const tables = await pool.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name <> 'a2a_schema_version' ORDER BY table_name`,
      [pg.schema],
    );
    const counts: Record<string, number> = {};
    for (const { table_name } of tables.rows) {
      const [row] = (await pool.query(`SELECT count(*)::int AS n FROM "${pg.schema}"."${table_name}" r WHERE strpos(r::text, $1) > 0`, [id])).rows;
      counts[table_name] = row.n;
    }
    return counts;
  }

  it('removes the rows of every table the task had, and leaves every row of a task it keeps', async () => {
    const store = linkedStore();
    const scope = { tenant: `t-${randomUUID()}`, owner: 'alice' };
    const removed = await taskWithEverything(store, scope, at(1991, 0));
    const running = await taskWithEverything(store, scope, at(1991, 1), false);
    const before = await rowsMentioning(removed);
    // The test sees each table: the task really had rows in all of them.
    const kept = ['a2a_tasks', 'a2a_artifacts', 'a2a_artifact_chunks', 'a2a_events', 'a2a_push_configs', 'a2a_push_claims', 'a2a_leases'];
    expect(kept.filter((table) => !(before[table] > 0))).toEqual([]);
    const keptBefore = await rowsMentioning(running);

    expect(await store.removeFinished(at(1992, 0), 100)).toBe(1);
    const after = await rowsMentioning(removed);
    expect(Object.entries(after).filter(([, n]) => n > 0)).toEqual([]);
    expect(await rowsMentioning(running)).toEqual(keptBefore);
    expect(await store.get(scope, removed)).toBeUndefined();
    expect((await store.get(scope, running))?.task.artifacts?.[0].parts).toHaveLength(3);
    await pool.query(`UPDATE "${pg.schema}".a2a_tasks SET state = 'TASK_STATE_CANCELED', terminal = true WHERE id = $1`, [running]);
    expect(await store.removeFinished(at(1992, 0), 100)).toBe(1);
  });

  it('two replicas sweeping at once remove each task once, and their counts add up', async () => {
    // Two stores on two pools: two processes, each with its own connections.
    const otherPool = new Pool({ connectionString: pg.url(), max: 4 });
    try {
      const sweepers = [new PostgresTaskStore(connection()), new PostgresTaskStore({ pool: otherPool, schema: pg.schema })];
      const scopes = [
        { tenant: `t-${randomUUID()}`, owner: 'alice' },
        { tenant: `t-${randomUUID()}`, owner: 'bob' },
      ];
      const ids: string[] = [];
      for (let i = 0; i < 60; i++) {
        const id = `task-${randomUUID()}`;
        ids.push(id);
        await sweepers[0].create(scopes[i % 2], { id, contextId: 'c', status: { state: 'TASK_STATE_FAILED', timestamp: at(1993, i) } });
      }
      // Small batches, each replica calling until a batch comes back empty, as startRetention does.
      const sweep = async (store: PostgresTaskStore) => {
        const batches: number[] = [];
        for (let n = await store.removeFinished(at(1994, 0), 4); n > 0; n = await store.removeFinished(at(1994, 0), 4)) batches.push(n);
        return batches;
      };
      const [a, b] = await Promise.all(sweepers.map(sweep));
      const sum = (batches: number[]) => batches.reduce((x, y) => x + y, 0);
      expect(sum(a) + sum(b)).toBe(ids.length);
      for (const batch of [...a, ...b]) expect(batch).toBeLessThanOrEqual(4);
      const left = await pool.query(`SELECT count(*)::int AS n FROM "${pg.schema}".a2a_tasks WHERE id = ANY($1::text[])`, [ids]);
      expect(left.rows[0].n).toBe(0);
      for (const scope of scopes) expect((await sweepers[1].list(scope, { pageSize: 100 })).totalSize).toBe(0);
    } finally {
      await otherPool.end();
    }
  });

  it('reads the oldest finished tasks through the partial index of finished tasks', async () => {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      // On a small table a sequential scan is cheaper: forbid it to see whether the index applies.
      await client.query('SET LOCAL enable_seqscan = off');
      const plan = await client.query(`EXPLAIN ${finishedBeforeSql(`"${pg.schema}".a2a_tasks`)}`, [at(1995, 0), 100]);
      expect(plan.rows.map((row) => row['QUERY PLAN']).join('\n')).toMatch(/a2a_tasks_finished/);
    } finally {
      await client.query('ROLLBACK');
      client.release();
    }
  });

  it('adds the index to a schema of version 1 on open (the upgrade path)', async () => {
    const schema = `a2a_v1_${randomUUID().replace(/-/g, '').slice(0, 8)}`;
    await migratePostgres({ pool, schema });
    // The schema as the previous release left it: step 1 only.
    await pool.query(`DROP INDEX "${schema}".a2a_tasks_finished`);
    await pool.query(`UPDATE "${schema}".a2a_schema_version SET version = 1`);
    await migratePostgres({ pool, schema });
    expect((await pool.query(`SELECT version FROM "${schema}".a2a_schema_version`)).rows).toEqual([{ version: POSTGRES_SCHEMA_VERSION }]);
    const indexes = await pool.query(`SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'a2a_tasks_finished'`, [schema]);
    expect(indexes.rows).toHaveLength(1);
    expect(indexes.rows[0].indexdef).toMatch(/WHERE \(state = ANY/);
  });

  it("serves the router's retention option: a task finished through the router leaves the store", async () => {
    const store = linkedStore();
    const server = await startAgent(
      { execute: (_ctx, events) => events.complete('done') },
      { taskStore: store, retention: { finishedTaskTtlMs: 1_000, intervalMs: 20 } },
    );
    try {
      const task = (await rpc(server.url, 'SendMessage', userMessage('finish'))).body.result.task;
      expect(task.status.state).toBe('TASK_STATE_COMPLETED');
      // The sweep runs every 20 ms; the task goes once it is a second old.
      for (;;) {
        const answer = (await rpc(server.url, 'GetTask', { id: task.id })).body;
        if (answer.error) {
          expect(answer.error.code).toBe(-32001);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const rows = await pool.query(`SELECT count(*)::int AS n FROM "${pg.schema}".a2a_tasks WHERE id = $1`, [task.id]);
      expect(rows.rows).toEqual([{ n: 0 }]);
    } finally {
      await server.close();
    }
  });
});
