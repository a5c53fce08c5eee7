/**
 * Task leases riding on the linked PostgresTaskStore's writes (createPostgresBackend links them):
 * the create of a task takes the lease leaseOnCreate() gave, in its own statement, and a terminal
 * write gives back the lease held here, so another replica can take it at once; a task never
 * created leaves nothing; an existing task's lease is never taken over by a create. Behind
 * createA2ARouter, a completed Task costs two statements (its create and its end) and a Message
 * reply none: no lease statement of their own.
 */
import { createPostgresBackend, PostgresTaskLeases, PostgresTaskStore, type PostgresBackend } from 'a2a-express-kit/postgres';
import { silentLogger, TaskExistsError, type AgentExecutor, type Task } from 'a2a-express-kit';
import { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import { startAgent } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { spyOnStatements, useTestPostgres } from '../helpers/postgres';
import { taskKey } from '../../lib/engine/seams/task-store';

const pg = useTestPostgres();
const scope = { tenant: 't', owner: 'o' };
const withState = (id: string, state: Task['status']['state']): Task => ({
  id,
  contextId: 'c',
  status: { state, timestamp: new Date().toISOString() },
});
const statusChange = (task: Task) => {
  const update = { taskId: task.id, contextId: 'c', status: task.status };
  return { kind: 'status' as const, update, event: { statusUpdate: update } };
};

pg.describe('PostgreSQL leases on the store writes', () => {
  let backend: PostgresBackend;
  /** Another replica's leases, on a pool of their own. */
  let peerPool: Pool;
  let peer: PostgresTaskLeases;
  beforeAll(async () => {
    backend = await createPostgresBackend({ connectionString: pg.url(), schema: pg.schema, logger: silentLogger });
    peerPool = new Pool({ connectionString: pg.url(), max: 2 });
    peer = new PostgresTaskLeases({ pool: peerPool, schema: pg.schema, logger: silentLogger });
  });
  afterAll(async () => {
    await peer?.close();
    await backend?.close();
    await peerPool?.end();
  });
  const newTask = () => {
    const id = `task-${randomUUID()}`;
    return { id, key: taskKey(scope, id), leased: { scope, taskId: id } };
  };
  const leaseRow = async (key: string) =>
    (await peerPool.query<{ holder: string }>(`SELECT holder FROM "${pg.schema}".a2a_leases WHERE key = $1`, [key])).rows[0];
  const onWrites = () => backend.taskLeases.onWrites!;

  it('offers the capability for the linked store only; a store refuses leases on another pool', () => {
    expect(onWrites().store).toBe(backend.taskStore);
    expect(peer.onWrites).toBeUndefined();
    expect(() => new PostgresTaskStore({ pool: backend.pool, schema: pg.schema, taskLeases: peer })).toThrow(
      /PostgresTaskStore: option "taskLeases": must use the same pool and schema as the store/,
    );
  });

  it('the create takes the lease in its own statement: another replica cannot take it until the task ends', async () => {
    const { id, key, leased } = newTask();
    const lease = onWrites().leaseOnCreate(key, leased);
    expect(await leaseRow(key)).toBeUndefined();
    const held = backend.taskLeases.heldCount;
    const sent = spyOnStatements(backend.pool);
    try {
      await backend.taskStore.create(scope, withState(id, 'TASK_STATE_WORKING'));
      expect(sent).toHaveBeenCalledTimes(1);
      const ours = (await leaseRow(key)).holder;
      expect(ours).toMatch(new RegExp(`/${process.pid}/`));
      expect(backend.taskLeases.heldCount).toBe(held + 1);
      expect(await peer.acquire(key, leased, 0)).toBeUndefined();

      sent.mockClear();
      const done = withState(id, 'TASK_STATE_COMPLETED');
      expect(await backend.taskStore.update(scope, done, 1, statusChange(done))).toBe(2);
      expect(sent).toHaveBeenCalledTimes(1);
      expect(await leaseRow(key)).toBeUndefined();
      expect(backend.taskLeases.heldCount).toBe(held);
      // Given back already: release() sends nothing, and leaves the next holder's lease alone.
      const next = (await peer.acquire(key, leased, 0))!;
      sent.mockClear();
      await lease.release();
      expect(sent).not.toHaveBeenCalled();
      expect((await leaseRow(key)).holder).not.toBe(ours);
      await next.release();
    } finally {
      sent.mockRestore();
    }
  });

  it('wakes a replica waiting for the lease when the terminal write gives it back', async () => {
    const { id, key, leased } = newTask();
    onWrites().leaseOnCreate(key, leased);
    await backend.taskStore.create(scope, withState(id, 'TASK_STATE_WORKING'));
    const waiting = peer.acquire(key, leased, 60_000);
    const done = withState(id, 'TASK_STATE_FAILED');
    await backend.taskStore.update(scope, done, 1, statusChange(done));
    const taken = await waiting;
    expect(taken).toBeDefined();
    await taken!.release();
  });

  it('a non-terminal write keeps the lease; a lease from acquire() is given back by the terminal write too', async () => {
    const { id, key, leased } = newTask();
    await backend.taskStore.create(scope, withState(id, 'TASK_STATE_WORKING'));
    const lease = (await backend.taskLeases.acquire(key, leased, 0))!;
    const parked = withState(id, 'TASK_STATE_INPUT_REQUIRED');
    await backend.taskStore.update(scope, parked, 1, statusChange(parked));
    expect(await leaseRow(key)).toBeDefined();
    const done = withState(id, 'TASK_STATE_CANCELED');
    await backend.taskStore.update(scope, done, 2, statusChange(done));
    expect(await leaseRow(key)).toBeUndefined();
    await lease.release();
  });

  it('a task never created leaves no lease, and a later create of it takes none', async () => {
    const { id, key, leased } = newTask();
    const lease = onWrites().leaseOnCreate(key, leased);
    await lease.release();
    await backend.taskStore.create(scope, withState(id, 'TASK_STATE_WORKING'));
    expect(await leaseRow(key)).toBeUndefined();
  });

  it('a task created finished takes no lease', async () => {
    const { id, key, leased } = newTask();
    const lease = onWrites().leaseOnCreate(key, leased);
    await backend.taskStore.create(scope, withState(id, 'TASK_STATE_COMPLETED'));
    expect(await leaseRow(key)).toBeUndefined();
    await lease.release();
  });

  it('the create of a task that exists fails as before and never takes over its expired lease (the sweep settles it)', async () => {
    const { id, key, leased } = newTask();
    await backend.taskStore.create(scope, withState(id, 'TASK_STATE_WORKING'));
    await peerPool.query(
      `INSERT INTO "${pg.schema}".a2a_leases (key, tenant, owner, task_id, holder, expires_at) VALUES ($1, 't', 'o', $2, 'dead', now() - interval '1 hour')`,
      [key, id],
    );
    const lease = onWrites().leaseOnCreate(key, leased);
    await expect(backend.taskStore.create(scope, withState(id, 'TASK_STATE_WORKING'))).rejects.toBeInstanceOf(TaskExistsError);
    await lease.release();
    expect((await leaseRow(key)).holder).toBe('dead');
    await peerPool.query(`DELETE FROM "${pg.schema}".a2a_leases WHERE key = $1`, [key]);
  });

  it('a create whose lease another replica holds is refused, and stores nothing', async () => {
    const { id, key, leased } = newTask();
    const other = (await peer.acquire(key, leased, 0))!;
    const lease = onWrites().leaseOnCreate(key, leased);
    await expect(backend.taskStore.create(scope, withState(id, 'TASK_STATE_WORKING'))).rejects.toThrow(
      /lease of new task .* is held by another process/,
    );
    expect(await backend.taskStore.get(scope, id)).toBeUndefined();
    await lease.release();
    expect(await leaseRow(key)).toBeDefined();
    await other.release();
  });

  describe('behind createA2ARouter', () => {
    const executor: AgentExecutor = {
      async execute(ctx, events) {
        if (ctx.userText === 'message') return events.reply('pong');
        await events.start();
        return events.complete('done');
      },
    };

    it('a completed Task costs its create and its end, a Message reply nothing: no lease statement of their own', async () => {
      const server = await startAgent(executor, { ...backend.options });
      const sent = spyOnStatements(backend.pool);
      try {
        const reply = await rpc(server.url, 'SendMessage', userMessage('task'));
        expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
        const statements = sent.mock.calls.map(([config]) => (typeof config === 'string' ? config : (config as { text: string }).text));
        expect(statements).toHaveLength(2);
        // The create takes the lease; the completion gives it back.
        expect(statements[0]).toMatch(/lease AS \(\s*INSERT INTO \S*a2a_leases[\s\S]*INSERT INTO \S*a2a_tasks/);
        expect(statements[1]).toMatch(/lease_gone AS \(\s*DELETE FROM .*a2a_leases/);
        expect(backend.taskLeases.heldCount).toBe(0);

        sent.mockClear();
        const message = await rpc(server.url, 'SendMessage', userMessage('message'));
        expect(message.body.result.message).toBeDefined();
        expect(sent).not.toHaveBeenCalled();
      } finally {
        sent.mockRestore();
        await server.router.close();
        await server.close();
      }
    });
  });
});

pg.describe('PostgreSQL status writes of several tasks in one statement', () => {
  let backend: PostgresBackend;
  let raw: Pool;
  beforeAll(async () => {
    backend = await createPostgresBackend({ connectionString: pg.url(), schema: pg.schema, logger: silentLogger });
    raw = new Pool({ connectionString: pg.url(), max: 2 });
  });
  afterAll(async () => {
    await backend?.close();
    await raw?.end();
  });

  it('writes concurrent status changes together, each its own compare-and-set with its own event', async () => {
    const ids = Array.from({ length: 12 }, () => `batch-${randomUUID()}`);
    await Promise.all(ids.map((id) => backend.taskStore.create(scope, withState(id, 'TASK_STATE_WORKING'))));
    const sent = spyOnStatements(backend.pool);
    let results: PromiseSettledResult<number>[];
    try {
      results = await Promise.allSettled(
        ids.map((id, i) => {
          const next = withState(id, i % 2 ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_INPUT_REQUIRED');
          // One stale version, one write from another scope: refused alone.
          if (i === 3) return backend.taskStore.update(scope, next, 7, statusChange(next));
          if (i === 4) return backend.taskStore.update({ tenant: 't', owner: 'someone-else' }, next, 1, statusChange(next));
          return backend.taskStore.update(scope, next, 1, statusChange(next));
        }),
      );
      expect(sent.mock.calls.length).toBeLessThan(ids.length);
    } finally {
      sent.mockRestore();
    }
    results.forEach((result, i) => {
      if (i === 3) expect(result).toMatchObject({ status: 'rejected', reason: { name: 'TaskVersionConflictError' } });
      else if (i === 4) expect(result).toMatchObject({ status: 'rejected', reason: { name: 'TaskNotFoundInStoreError' } });
      else expect(result).toEqual({ status: 'fulfilled', value: 2 });
    });
    for (const [i, id] of ids.entries()) {
      const stored = await backend.taskStore.get(scope, id);
      const logged = (await raw.query(`SELECT version FROM "${pg.schema}".a2a_events WHERE task_key = $1 ORDER BY version`, [taskKey(scope, id)]))
        .rows;
      if (i === 3 || i === 4) {
        expect(stored).toMatchObject({ version: 1, task: { status: { state: 'TASK_STATE_WORKING' } } });
        expect(logged).toEqual([{ version: 1 }]);
      } else {
        expect(stored).toMatchObject({ version: 2, task: { status: { state: i % 2 ? 'TASK_STATE_COMPLETED' : 'TASK_STATE_INPUT_REQUIRED' } } });
        expect(logged).toEqual([{ version: 1 }, { version: 2 }]);
      }
    }
  });

  it('creates concurrent tasks together; an id already taken is refused alone', async () => {
    const taken = `taken-${randomUUID()}`;
    await backend.taskStore.create(scope, withState(taken, 'TASK_STATE_WORKING'));
    const ids = Array.from({ length: 10 }, () => `new-${randomUUID()}`);
    const sent = spyOnStatements(backend.pool);
    let results: PromiseSettledResult<number>[];
    try {
      results = await Promise.allSettled([...ids, taken].map((id) => backend.taskStore.create(scope, withState(id, 'TASK_STATE_SUBMITTED'))));
      expect(sent.mock.calls.length).toBeLessThan(ids.length + 1);
    } finally {
      sent.mockRestore();
    }
    expect(results.slice(0, ids.length)).toEqual(ids.map(() => ({ status: 'fulfilled', value: 1 })));
    expect(results[ids.length]).toMatchObject({ status: 'rejected', reason: { name: 'TaskExistsError' } });
    for (const id of ids) {
      expect(await backend.taskStore.get(scope, id)).toMatchObject({ version: 1, task: { id, status: { state: 'TASK_STATE_SUBMITTED' } } });
      expect(await backend.eventBus.history(taskKey(scope, id), 0)).toMatchObject([{ version: 1, event: { task: { id } } }]);
    }
  });

  it('two writes of one task at once: one wins, the other conflicts', async () => {
    const id = `twice-${randomUUID()}`;
    await backend.taskStore.create(scope, withState(id, 'TASK_STATE_WORKING'));
    const [a, b] = [withState(id, 'TASK_STATE_INPUT_REQUIRED'), withState(id, 'TASK_STATE_COMPLETED')];
    const results = await Promise.allSettled([
      backend.taskStore.update(scope, a, 1, statusChange(a)),
      backend.taskStore.update(scope, b, 1, statusChange(b)),
    ]);
    expect(results.filter((result) => result.status === 'fulfilled')).toEqual([{ status: 'fulfilled', value: 2 }]);
    expect(results.filter((result) => result.status === 'rejected')).toMatchObject([{ reason: { name: 'TaskVersionConflictError' } }]);
  });
});
