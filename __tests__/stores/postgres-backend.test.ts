/**
 * createPostgresBackend(): option errors, a pool it opens from a connection string (and ends) or
 * one it is given (and leaves open), a database that does not answer reported as an error within
 * the bound; and the store linked to the bus: each committed event is inserted and notified by the
 * write's own statement, so a replica killed between the store write and the bus's publish loses
 * nothing, while publish() of that event then costs nothing. Behind createA2ARouter, a task is
 * served end to end with every event in the events table even when the bus never publishes.
 */
import { createPostgresBackend, PostgresTaskStore, type PostgresBackend } from 'a2a-express-kit/postgres';
import { silentLogger, type AgentExecutor, type CommittedEvent, type StreamResponse, type Task, type TaskEventBus } from 'a2a-express-kit';
import { Pool } from 'pg';
import { createServer, type Server } from 'node:net';
import { randomUUID } from 'node:crypto';
import { until } from '../helpers/async';
import { startAgent } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';
import { spyOnStatements, useTestPostgres } from '../helpers/postgres';
import { taskKey } from '../../lib/engine/seams/task-store';

const pg = useTestPostgres();
const scope = { tenant: 't', owner: 'o' };
const working = (id: string, text: string): Task => ({
  id,
  contextId: 'c',
  status: {
    state: 'TASK_STATE_WORKING',
    timestamp: new Date().toISOString(),
    message: { role: 'ROLE_AGENT', messageId: randomUUID(), parts: [{ text }] },
  },
});
const statusEvent = (task: Task): StreamResponse => ({ statusUpdate: { taskId: task.id, contextId: 'c', status: task.status } });

describe('createPostgresBackend options', () => {
  it('needs exactly one of connectionString and pool', async () => {
    await expect(createPostgresBackend({})).rejects.toThrow(/createPostgresBackend: option "connectionString": pass either connectionString or pool/);
    const pool = { query() {}, connect() {}, end() {}, on() {} };
    await expect(createPostgresBackend({ connectionString: 'postgres://x/y', pool: pool as never })).rejects.toThrow(/exactly one/);
  });

  it('names a bad or misspelt option', async () => {
    await expect(createPostgresBackend({ connectionString: 'http://localhost' })).rejects.toThrow(
      /option "connectionString": must be a postgres:\/\/ or postgresql:\/\/ URL/,
    );
    await expect(createPostgresBackend({ connectionString: 'postgres://x/y', leaseTTLMs: 5 } as never)).rejects.toThrow(/did you mean "leaseTtlMs"/);
    await expect(createPostgresBackend({ connectionString: 'postgres://x/y', schema: 'a-b' })).rejects.toThrow(/option "schema"/);
    await expect(createPostgresBackend({ pool: {} as never })).rejects.toThrow(/option "pool": must be a node-postgres Pool/);
  });

  it('gives up on a server that accepts connections and never answers, without showing the password', async () => {
    // A socket that swallows everything: a hung database.
    const sockets: import('node:net').Socket[] = [];
    const silent: Server = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    try {
      const attempt = createPostgresBackend({
        connectionString: `postgres://u:secret@127.0.0.1:${port}/db`,
        connectTimeoutMs: 300,
        queryTimeoutMs: 300,
        logger: silentLogger,
      });
      await expect(attempt).rejects.toThrow(/createPostgresBackend: could not (open|connect to) postgres:\/\/u:\*\*\*@127\.0\.0\.1/);
      await expect(attempt).rejects.not.toThrow(/secret/);
    } finally {
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });
});

pg.describe('createPostgresBackend on PostgreSQL', () => {
  it('opens a pool from connectionString, and close() ends it', async () => {
    const backend = await createPostgresBackend({ connectionString: pg.url(), schema: pg.schema, logger: silentLogger });
    expect(Object.keys(backend.options).sort()).toEqual(['eventBus', 'taskLeases', 'taskStore']);
    await backend.taskStore.create(scope, { id: `url-${randomUUID()}`, status: { state: 'TASK_STATE_WORKING' } });
    await backend.close();
    await backend.close();
    await expect(backend.taskStore.get(scope, 'x')).rejects.toThrow();
  });

  it('uses a pool it is given and leaves it open', async () => {
    const pool = new Pool({ connectionString: pg.url(), max: 4 });
    try {
      const backend = await createPostgresBackend({ pool, schema: pg.schema, logger: silentLogger });
      await backend.close();
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  describe('the store linked to the bus', () => {
    let pool: Pool;
    let backend: PostgresBackend;
    let peer: PostgresBackend;
    beforeAll(async () => {
      pool = new Pool({ connectionString: pg.url(), max: 8 });
      backend = await createPostgresBackend({ pool, schema: pg.schema, logger: silentLogger, leaseTtlMs: 1_000 });
      // Another replica: its own pool (its own LISTEN connection), the same schema.
      peer = await createPostgresBackend({ connectionString: pg.url(), schema: pg.schema, logger: silentLogger });
    });
    afterAll(async () => {
      await peer?.close();
      await backend?.close();
      await pool?.end();
    });
    const rows = async (id: string) =>
      (
        await pool.query<{ version: number; payload: string }>(
          `SELECT version, payload FROM "${pg.schema}".a2a_events WHERE task_key = $1 ORDER BY version`,
          [taskKey(scope, id)],
        )
      ).rows;

    it('inserts and notifies a written event with no bus.publish after the write', async () => {
      const id = `crash-${randomUUID()}`;
      const key = taskKey(scope, id);
      const heard: CommittedEvent[] = [];
      const stop = peer.eventBus.subscribe(key, (committed) => heard.push(committed));
      await peer.eventBus.subscribed();

      const first = working(id, 'first');
      expect(await backend.taskStore.create(scope, first)).toBe(1);
      const second = working(id, 'second');
      expect(await backend.taskStore.update(scope, second, 1, { kind: 'replace', event: statusEvent(second) })).toBe(2);
      // The replica "dies" here: the engine's bus.publish of either event never runs.

      const expected: CommittedEvent[] = [
        { event: { task: first }, task: first, version: 1 },
        { event: statusEvent(second), task: second, version: 2 },
      ];
      expect(await backend.eventBus.history(key, 0)).toEqual(expected);
      expect(await peer.eventBus.history(key, 1)).toEqual(expected.slice(1));
      await until(() => heard.length === 2, 'the live events on the other replica');
      expect(heard).toEqual(expected);
      stop();
      // The bus's own format, byte for byte.
      expect((await rows(id)).map((row) => row.payload)).toEqual(expected.map((committed) => JSON.stringify(committed)));
    });

    it('publish() of an event the store wrote sends nothing; another event is published as before', async () => {
      const id = `dup-${randomUUID()}`;
      const key = taskKey(scope, id);
      const task = working(id, 'one');
      await backend.taskStore.create(scope, task);
      const next = working(id, 'two');
      await backend.taskStore.update(scope, next, 1, { kind: 'replace', event: statusEvent(next) });
      const sent = spyOnStatements(pool);
      try {
        await backend.eventBus.publish(key, { event: { task }, task, version: 1 });
        await backend.eventBus.publish(key, { event: statusEvent(next), task: next, version: 2 });
        expect(sent).not.toHaveBeenCalled();
        const third = working(id, 'three');
        await backend.eventBus.publish(key, { event: statusEvent(third), task: third, version: 3 });
        expect(sent).toHaveBeenCalled();
      } finally {
        sent.mockRestore();
      }
      expect((await rows(id)).map((row) => row.version)).toEqual([1, 2, 3]);
    });

    it('logs nothing for a write without an event, nor for a refused write; artifact chunks log theirs', async () => {
      const id = `quiet-${randomUUID()}`;
      await backend.taskStore.create(scope, working(id, 'one'));
      expect(await backend.taskStore.update(scope, working(id, 'joined'), 1, { kind: 'replace' })).toBe(2);
      expect(await backend.taskStore.update(scope, working(id, 'no change'), 2)).toBe(3);
      const stale = working(id, 'stale');
      await expect(backend.taskStore.update(scope, stale, 1, { kind: 'replace', event: statusEvent(stale) })).rejects.toThrow(
        /no longer at version 1/,
      );
      await expect(
        backend.taskStore.update({ tenant: 't', owner: 'other' }, stale, 3, { kind: 'replace', event: statusEvent(stale) }),
      ).rejects.toThrow(/does not exist in this scope/);
      await expect(backend.taskStore.create(scope, working(id, 'again'))).rejects.toThrow(/already exists/);
      expect((await rows(id)).map((row) => row.version)).toEqual([1]);
      const withArtifact = { ...working(id, 'no change'), artifacts: [{ artifactId: 'a', parts: [{ text: 'x' }] }] };
      withArtifact.status = (await backend.taskStore.get(scope, id))!.task.status;
      const update = { taskId: id, contextId: 'c', artifact: { artifactId: 'a', parts: [{ text: 'x' }] } };
      await backend.taskStore.update(scope, withArtifact, 3, { kind: 'artifact', update, event: { artifactUpdate: update } });
      expect((await backend.eventBus.history(taskKey(scope, id), 3))?.map((c) => [c.version, Object.keys(c.event)[0]])).toEqual([
        [4, 'artifactUpdate'],
      ]);
    });

    it('a store without the bus logs no events', async () => {
      const store = new PostgresTaskStore({ pool, schema: pg.schema });
      const id = `alone-${randomUUID()}`;
      await store.create(scope, working(id, 'one'));
      const next = working(id, 'two');
      await store.update(scope, next, 1, { kind: 'replace', event: statusEvent(next) });
      expect(await rows(id)).toEqual([]);
      expect(() => new PostgresTaskStore({ pool, eventBus: {} as never })).toThrow(
        /PostgresTaskStore: option "eventBus": must be a PostgresTaskEventBus/,
      );
    });

    it('behind a router whose bus never publishes, every event of a task is still in the events table, and the lease is given back', async () => {
      const executor: AgentExecutor = {
        async execute(_ctx, events) {
          await events.start();
          await events.artifact({ artifactId: 'a', text: 'result' });
          return events.complete('done');
        },
      };
      const bus = backend.eventBus;
      const mute: TaskEventBus = {
        publish: () => undefined,
        subscribe: (key, listener) => bus.subscribe(key, listener),
        requestCancel: (key) => bus.requestCancel(key),
        onCancelRequest: (key, listener) => bus.onCancelRequest(key, listener),
        get subscriberCount() {
          return bus.subscriberCount;
        },
      };
      const server = await startAgent(executor, { taskStore: backend.taskStore, eventBus: mute, taskLeases: backend.taskLeases });
      try {
        const reply = await rpc(server.url, 'SendMessage', userMessage('hello'));
        const task: Task = reply.body.result.task;
        expect(task.status.state).toBe('TASK_STATE_COMPLETED');
        const logged = (
          await pool.query<{ payload: string }>(`SELECT payload FROM "${pg.schema}".a2a_events WHERE task_key LIKE '%' || $1 ORDER BY version`, [
            task.id,
          ])
        ).rows.map((row) => JSON.parse(row.payload) as CommittedEvent);
        // start() creates the task (its `{ task }` event), then the artifact, then the final status.
        expect(logged.map((c) => c.version)).toEqual([1, 2, 3]);
        expect(logged.map((c) => Object.keys(c.event)[0])).toEqual(['task', 'artifactUpdate', 'statusUpdate']);
        expect(logged[2].task).toEqual(task);
        await until(() => backend.taskLeases.heldCount === 0, 'the lease to be released');
      } finally {
        await server.router.close();
        await server.close();
      }
    });
  });
});
