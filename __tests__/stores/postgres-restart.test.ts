/**
 * PostgreSQL restarted under light load, behind createA2ARouter on createPostgresBackend(): while
 * the server is down, clients keep getting answers (a clear -32603 error, not a hang); every task
 * acknowledged before, during or after the outage is stored as acknowledged; once the server is
 * back, requests succeed again and a subscription made before the outage hears events published
 * after it (the LISTEN connection is replaced and catches up).
 */
import { createPostgresBackend, type PostgresBackend } from 'a2a-express-kit/postgres';
import { silentLogger, type AgentExecutor, type CommittedEvent } from 'a2a-express-kit';
import { randomUUID } from 'node:crypto';
import { until } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { postgresAvailable, startPostgresServer, type TestPostgresServer } from '../helpers/postgres';

const executor: AgentExecutor = {
  async execute(_ctx, events) {
    await events.start();
    await events.artifact({ artifactId: 'a', text: 'result' });
    return events.complete('done');
  },
};

(postgresAvailable && !process.env.A2A_TEST_PG_URL ? describe : describe.skip)('PostgreSQL restarted under load', () => {
  let pg: TestPostgresServer;
  let backend: PostgresBackend;
  let other: PostgresBackend;
  let server: TestServer;
  beforeAll(async () => {
    pg = await startPostgresServer();
    const options = {
      connectionString: pg.url,
      schema: 'a2a_restart',
      logger: silentLogger,
      queryTimeoutMs: 1_000,
      connectTimeoutMs: 1_000,
      leaseTtlMs: 1_000,
    };
    backend = await createPostgresBackend(options);
    other = await createPostgresBackend(options);
    server = await startAgent(executor, { ...backend.options });
  }, 30_000);
  afterAll(async () => {
    await server?.router.close();
    await server?.close();
    await Promise.allSettled([backend?.close(), other?.close()]);
    pg?.stop('immediate');
    pg?.remove();
  }, 30_000);

  it('answers with errors while the database is down, loses nothing it acknowledged, and recovers', async () => {
    const key = `restart-${randomUUID()}`;
    const heard: CommittedEvent[] = [];
    backend.eventBus.subscribe(key, (committed) => heard.push(committed));
    await backend.eventBus.subscribed();

    const acknowledged: string[] = [];
    const errors: Array<{ status: number; code: number | undefined }> = [];
    let load = true;
    const client = async () => {
      while (load) {
        const reply = await rpc(server.url, 'SendMessage', userMessage('hello'));
        if (reply.body.result?.task?.status.state === 'TASK_STATE_COMPLETED') acknowledged.push(reply.body.result.task.id);
        else errors.push({ status: reply.status, code: reply.body.error?.code });
      }
    };
    const clients = [client(), client()];
    await until(() => acknowledged.length >= 5, 'acknowledged tasks before the outage', 20_000);

    pg.stop('fast');
    const before = errors.length;
    // Each request is answered, with an error, while the server is down: none hangs.
    await until(() => errors.length >= before + 6, 'error answers during the outage', 20_000);
    for (const error of errors.slice(before)) expect(error.code).toBe(-32603);

    pg.start();
    const during = acknowledged.length;
    await until(() => acknowledged.length >= during + 5, 'acknowledged tasks after the restart', 20_000);
    load = false;
    await Promise.all(clients);

    // Every acknowledged task is stored, completed.
    for (const id of acknowledged) {
      const got = await rpc(server.url, 'GetTask', { id });
      expect({ id, state: got.body.result?.status.state }).toEqual({ id, state: 'TASK_STATE_COMPLETED' });
    }

    // The subscription made before the outage hears what is published after it.
    const event = (version: number): CommittedEvent => ({
      event: { statusUpdate: { taskId: key, contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } },
      task: { id: key, contextId: 'c', status: { state: 'TASK_STATE_WORKING' } },
      version,
    });
    await other.eventBus.publish(key, event(1));
    await until(() => heard.length === 1, 'an event published after the restart, heard on the bus subscribed before', 20_000);
    expect(heard[0]).toEqual(event(1));
  }, 90_000);
});
