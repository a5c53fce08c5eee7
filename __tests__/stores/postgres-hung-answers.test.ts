/**
 * A hung PostgreSQL (every server process SIGSTOPped, issue 32 items 3, 5, 6): a new message gets
 * 503 with Retry-After in both bindings, never "Internal error" with HTTP 200; its create is the only
 * call it waits for; the outage is one error line and one recovery line; no task it created is left WORKING.
 */
import { createPostgresBackend, type PostgresBackend } from 'a2a-express-kit/postgres';
import { silentLogger, type AgentExecutor } from 'a2a-express-kit';
import { interceptSeams, type SeamHook } from '../../lib/engine/seams/intercept';
import type { Task } from '../../lib/protocol/schemas';
import { until } from '../helpers/async';
import { a2aClient } from '../helpers/bindings';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { postgresAvailable, startPostgresServer, type TestPostgresServer } from '../helpers/postgres';
import { recordingLogger } from '../push/helpers';

const STORE_TIMEOUT_MS = 400;
const executor: AgentExecutor = {
  async execute(_ctx, events) {
    await events.start();
    return events.complete('done');
  },
};

(postgresAvailable && !process.env.A2A_TEST_PG_URL ? describe : describe.skip)('a hung PostgreSQL', () => {
  let pg: TestPostgresServer;
  let backend: PostgresBackend;
  let server: TestServer;
  let paused = false;
  const logger = recordingLogger();
  /** The creates the engine made while the database was stopped, by task id (counted: the fault itself is real). */
  const creates: string[] = [];
  const counting: SeamHook = {
    wraps: (call) => call.name === 'taskStore.create()',
    around: (_call, args, next) => {
      if (paused) creates.push((args[1] as Task).id);
      return next(args);
    },
  };

  beforeAll(async () => {
    pg = await startPostgresServer();
    // The backend's own query deadline far above the engine's: what bounds a request here is storeTimeoutMs.
    backend = await createPostgresBackend({
      connectionString: pg.url,
      schema: 'a2a_hung',
      logger: silentLogger,
      queryTimeoutMs: 20_000,
      leaseTtlMs: 2_000,
    });
    const { taskStore, leases } = interceptSeams({ taskStore: backend.options.taskStore, leases: backend.options.taskLeases }, [counting]);
    server = await startAgent(executor, { ...backend.options, taskStore, taskLeases: leases, storeTimeoutMs: STORE_TIMEOUT_MS, logger });
  }, 30_000);
  afterAll(async () => {
    if (paused) pg.signal('SIGCONT');
    await server?.router.close();
    await server?.close();
    await backend?.close();
    pg?.stop('immediate');
    pg?.remove();
  }, 30_000);

  it('answers 503 + Retry-After, waits for one create, logs one outage, and leaves no task WORKING', async () => {
    expect((await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('before'))).result.task.status.state).toBe('TASK_STATE_COMPLETED');
    pg.signal('SIGSTOP');
    paused = true;
    const replies = await Promise.all([
      a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('during')),
      a2aClient('rest', server.url).call('SendMessage', userMessage('during')),
      a2aClient('jsonrpc', server.url).stream('SendStreamingMessage', userMessage('during')),
      a2aClient('rest', server.url).stream('SendStreamingMessage', userMessage('during')),
    ]);
    for (const reply of replies) {
      expect(reply.status).toBe(503);
      expect(reply.headers.get('retry-after')).toBe('1');
      expect(reply.error).toMatchObject({ code: -32603, message: 'The service is temporarily unavailable' });
    }
    // One deadline per request: one create each; the engine's FAILED after it is owed, not waited for.
    expect(creates).toHaveLength(4);
    expect(new Set(creates).size).toBe(4);

    pg.signal('SIGCONT');
    paused = false;
    // The creates abandoned at the deadline commit now; each such task is then settled FAILED (owed).
    for (const taskId of creates) {
      const stateOf = async () => (await a2aClient('jsonrpc', server.url).call('GetTask', { id: taskId })).result?.status.state;
      for (let tries = 0; (await stateOf()) === 'TASK_STATE_WORKING'; tries++) {
        if (tries > 150) throw new Error(`task ${taskId} left WORKING`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    expect((await a2aClient('rest', server.url).call('SendMessage', userMessage('after'))).result.task.status.state).toBe('TASK_STATE_COMPLETED');
    await until(() => logger.lines.some((l) => l.message === 'the store answers again'), 'the end of the outage logged', 15_000);
    const errors = logger.lines.filter((l) => l.level === 'error').map((l) => l.message);
    expect(errors).toEqual(['a store is failing; further failures are counted until it answers again']);
    // Warnings: at most the sweep's, one per task it settles (a task whose lease lapsed in the pause).
    const warnings = logger.lines.filter((l) => l.level === 'warn').map((l) => l.message);
    expect(warnings.filter((m) => m !== 'a task was left mid-turn by a process that stopped; it is resumed or failed')).toEqual([]);
    expect(logger.lines.filter((l) => l.message === 'the store answers again')).toHaveLength(1);
  }, 60_000);

  it('answers 503, not "Internal error" with HTTP 200, when the database answers again right after the deadline', async () => {
    const from = logger.lines.length;
    const outageLogged = () => logger.lines.slice(from).some((l) => l.level === 'error');
    pg.signal('SIGSTOP');
    paused = true;
    const sent = a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('during'));
    // Resumed once the create's deadline passed: its abandoned create commits now, before any FAILED write.
    await until(outageLogged, 'the create timed out', 10_000);
    pg.signal('SIGCONT');
    paused = false;
    const reply = await sent;
    expect(reply.status).toBe(503);
    expect(reply.headers.get('retry-after')).toBe('1');
    expect(reply.error).toMatchObject({ code: -32603, message: 'The service is temporarily unavailable' });
    const taskId = creates.at(-1)!;
    const stateOf = async () => (await a2aClient('jsonrpc', server.url).call('GetTask', { id: taskId })).result?.status.state;
    for (let tries = 0; (await stateOf()) === 'TASK_STATE_WORKING'; tries++) {
      if (tries > 150) throw new Error(`task ${taskId} left WORKING`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(logger.lines.slice(from).filter((l) => l.message === 'task id collision in the store')).toEqual([]);
  }, 60_000);
});
