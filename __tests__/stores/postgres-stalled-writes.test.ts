/**
 * A write the kit gave up on never leaves a task mid-turn with nothing running, under real faults:
 * the kit's own PostgreSQL backends SIGSTOPped mid-request (found by application_name), and, on a
 * cluster of the test's own, the postmaster SIGSTOPped so that no new connection is accepted.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { Pool } from 'pg';
import { silentLogger, type AgentExecutor } from 'a2a-express-kit';
import { createPostgresBackend, migratePostgres, PostgresTaskLeases, PostgresTaskStore, type PostgresBackend } from 'a2a-express-kit/postgres';
import { deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { startPostgresServer, useTestPostgres, type TestPostgresServer } from '../helpers/postgres';

const pg = useTestPostgres();

// Parks on "park", completes anything else (a follow-up of a parked task included).
const agent: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'park') await events.requireInput('More?');
    else await events.complete('Done.');
  },
};

pg.describe('PostgreSQL: a write given up on', () => {
  const app = `a2a-stall-${randomUUID().slice(0, 8)}`;
  let admin: Pool;
  let backend: PostgresBackend;
  let server: TestServer;
  /** Resolved by the router's next lease sweep. */
  let swept = deferred();

  beforeAll(async () => {
    admin = new Pool({ connectionString: pg.url(), max: 2 });
    backend = await createPostgresBackend({
      connectionString: `${pg.url()}?application_name=${app}`,
      schema: pg.schema,
      queryTimeoutMs: 1_000,
      leaseTtlMs: 300,
      maxConnections: 2, // one LISTEN, one for statements: every statement waits on the stopped one
      logger: silentLogger,
    });
    const claimExpired = backend.taskLeases.claimExpired.bind(backend.taskLeases);
    backend.taskLeases.claimExpired = async () => {
      const claimed = await claimExpired();
      swept.resolve();
      swept = deferred();
      return claimed;
    };
    server = await startAgent(agent, { ...backend.options, storeTimeoutMs: 1_000 });
  });
  afterAll(async () => {
    await signalOurs('SIGCONT');
    await server?.close();
    await backend?.close();
    await admin?.end();
  });

  /** Signals every backend of the kit's pool (never another file's). */
  async function signalOurs(signal: NodeJS.Signals): Promise<number> {
    const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app]);
    for (const { pid } of rows) process.kill(pid, signal);
    return rows.length;
  }

  const send = (text: string, extra: Record<string, unknown> = {}) => rpc(server.url, 'SendMessage', userMessage(text, extra));
  const tasks = async () =>
    (await admin.query<{ id: string; state: string }>(`SELECT id, state FROM "${pg.schema}".a2a_tasks`)).rows.reduce<Record<string, string>>(
      (all, row) => ({ ...all, [row.id]: row.state }),
      {},
    );
  /** Tasks mid-turn with no live lease: nothing runs them. */
  const stranded = async () =>
    (
      await admin.query<{ id: string }>(
        `SELECT t.id FROM "${pg.schema}".a2a_tasks t WHERE t.state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')
         AND NOT EXISTS (SELECT 1 FROM "${pg.schema}".a2a_leases l WHERE l.task_id = t.id AND l.expires_at > clock_timestamp())`,
      )
    ).rows.map((row) => row.id);

  it('with its backends stopped mid-request: no task is left mid-turn, and acknowledged tasks stay as told', async () => {
    const parked = (await send('park')).body.result.task;
    const completed = (await send('done')).body.result.task;
    expect([parked.status.state, completed.status.state]).toEqual(['TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_COMPLETED']);

    expect(await signalOurs('SIGSTOP')).toBe(2); // the LISTEN connection and the statements' one
    let answers: Awaited<ReturnType<typeof send>>[];
    try {
      // Each waits on a stopped backend until the kit gives up on it.
      answers = await Promise.all([send('new 1'), send('new 2'), send('done', { taskId: parked.id, contextId: parked.contextId })]);
    } finally {
      await signalOurs('SIGCONT');
    }
    // Whichever request's statement met the stopped backend failed (the others may have run on the
    // connection that replaced it once the kit gave up on that one).
    const answered = answers.map((answer) => (answer.body.error !== undefined ? 'error' : answer.body.result.task.status.state));
    expect(answered.some((state) => state === 'error' || state === 'TASK_STATE_FAILED')).toBe(true);

    // The statements the stalled backends held now run; three sweeps later nothing is stranded.
    for (let i = 0; i < 3; i++) await swept.promise;
    expect(await stranded()).toEqual([]);
    const now = await tasks();
    expect(Object.values(now).filter((state) => state === 'TASK_STATE_SUBMITTED' || state === 'TASK_STATE_WORKING')).toEqual([]);
    expect(now[completed.id]).toBe('TASK_STATE_COMPLETED');
    for (const answer of answers) if (answer.body.result) expect(now[answer.body.result.task.id]).toBe(answer.body.result.task.status.state);
    // A refused follow-up left its parked task where its client was told; an accepted one, as answered.
    const followUp = answers[2];
    expect(now[parked.id]).toBe(followUp.body.error !== undefined ? 'TASK_STATE_INPUT_REQUIRED' : followUp.body.result.task.status.state);
  }, 30_000);
});

pg.describe('PostgreSQL: a create given up on that commits later, with no lease row', () => {
  it('is returned by the lease sweep (claimExpired), which settles it', async () => {
    const app = `a2a-late-${randomUUID().slice(0, 8)}`;
    const admin = new Pool({ connectionString: pg.url(), max: 1 });
    const pool = new Pool({ connectionString: `${pg.url()}?application_name=${app}`, max: 1 });
    const schema = `${pg.schema}_late`;
    await migratePostgres({ pool: admin, schema });
    // Store and leases not linked (as behind the router's metrics or traces): the create takes no lease.
    const store = new PostgresTaskStore({ pool, schema, queryTimeoutMs: 300 });
    const leases = new PostgresTaskLeases({ pool: admin, schema, leaseTtlMs: 300, logger: silentLogger });
    const scope = { tenant: 't', owner: 'o' };
    const task = {
      id: `late-${randomUUID()}`,
      contextId: 'c',
      status: { state: 'TASK_STATE_WORKING' as const, timestamp: new Date().toISOString() },
    };
    await store.get(scope, 'warm-up'); // the pool's one connection exists: the create is sent on it
    const [{ pid }] = (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1', [app])).rows;
    process.kill(pid, 'SIGSTOP');
    try {
      await expect(store.create(scope, task)).rejects.toThrow(/timeout/i);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // The backend runs what it had read: the create commits, late, with nothing running the task.
    const stored = async () => (await admin.query(`SELECT state FROM "${schema}".a2a_tasks WHERE id = $1`, [task.id])).rows;
    while ((await stored()).length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await stored()).toEqual([{ state: 'TASK_STATE_WORKING' }]);
    expect(await leases.claimExpired()).toContainEqual({ scope, taskId: task.id });
    await leases.close();
    await pool.end();
    await admin.end();
  }, 30_000);
});

pg.describe('PostgreSQL: a statement whose connection comes after its deadline', () => {
  let cluster: TestPostgresServer;
  beforeAll(async () => {
    cluster = await startPostgresServer();
  }, 30_000);
  afterAll(() => {
    cluster?.stop('immediate');
    cluster?.remove();
  }, 30_000);

  it('is never sent: the postmaster stopped, the create is refused and never commits', async () => {
    const schema = `a2a_stall_${randomUUID().slice(0, 8)}`;
    const pool = new Pool({ connectionString: cluster.url, max: 2 });
    await migratePostgres({ pool, schema });
    const [{ backend }] = (await pool.query<{ backend: number }>('SELECT pg_backend_pid() AS backend')).rows;
    const pid = Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${backend}/status`, 'utf8'))![1]); // the postmaster
    const fresh = new Pool({ connectionString: cluster.url, max: 1 }); // no connection yet: the create needs a new one
    const store = new PostgresTaskStore({ pool: fresh, schema, queryTimeoutMs: 300 });
    const scope = { tenant: 't', owner: 'o' };
    const task = {
      id: `late-${randomUUID()}`,
      contextId: 'c',
      status: { state: 'TASK_STATE_WORKING' as const, timestamp: new Date().toISOString() },
    };
    process.kill(pid, 'SIGSTOP');
    const released = once(fresh, 'release');
    try {
      // Bounded, so that a create that waits for the postmaster fails the test rather than hang it.
      const outcome = await Promise.race([
        store.create(scope, task).then(
          () => new Error('created'),
          (error: Error) => error,
        ),
        new Promise<Error>((resolve) => setTimeout(resolve, 5_000, new Error('still waiting for a connection'))),
      ]);
      expect(outcome.message).toContain('the statement was not sent');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    // The connection the create waited for arrives now, and goes back unused.
    await released;
    expect((await pool.query(`SELECT id FROM "${schema}".a2a_tasks WHERE id = $1`, [task.id])).rows).toEqual([]);
    await fresh.end();
    await pool.end();
  }, 30_000);
});
