/**
 * The PostgreSQL push stores: the PushConfigStore contract unchanged, then the shared outbox: a
 * task whose cursor is behind its events and whose claim expired is taken over by one sweeping
 * replica; a live delivery first catches up what its config is still owed; cursors never skip.
 */
import { randomUUID } from 'node:crypto';
import type { StreamResponse, Task, TaskScope } from 'a2a-express-kit';
import { silentLogger } from 'a2a-express-kit';
import { migratePostgres, PostgresPushConfigStore, PostgresPushOutbox, PostgresTaskEventBus, PostgresTaskStore } from 'a2a-express-kit/postgres';
import { describePushConfigStoreContract } from 'a2a-express-kit/testing';
import { Pool } from 'pg';
import { useTestPostgres } from '../helpers/postgres';
import { takeoverRace, type SweepStep } from './takeover-race';

const pg = useTestPostgres();
let pool: Pool;
beforeAll(async () => {
  if (pg.describe !== describe) return;
  pool = new Pool({ connectionString: pg.url(), max: 8 });
  await migratePostgres({ pool, schema: pg.schema });
});
afterAll(() => pool?.end());
const connection = () => ({ pool, schema: pg.schema });

describePushConfigStoreContract('PostgresPushConfigStore', () => new PostgresPushConfigStore(connection()), { describe: pg.describe });

const scopeOf = (): TaskScope => ({ tenant: `t-${randomUUID()}`, owner: 'alice' });
const working = (id: string, text: string): Task => ({
  id,
  contextId: `ctx-${id}`,
  status: {
    state: 'TASK_STATE_WORKING',
    timestamp: new Date().toISOString(),
    message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }] },
  },
});
const statusEvent = (task: Task): StreamResponse => ({ statusUpdate: { taskId: task.id, contextId: task.contextId ?? '', status: task.status } });
const config = (taskId: string, id: string) => ({ id, taskId, url: `https://hooks.example.com/${id}`, protocol: '1.0' as const });

const liveDelivery = (scope: TaskScope, taskId: string, version: number) => ({
  id: `live-${randomUUID()}`,
  scope,
  taskId,
  configId: 'c-1',
  version,
  body: '{}',
  contentType: 'application/a2a+json',
  final: false,
  attempts: 0,
});

pg.describe('PostgresPushOutbox', () => {
  const buses: PostgresTaskEventBus[] = [];
  afterAll(() => Promise.all(buses.map((bus) => bus.close())));
  /** One replica's view: its own outbox (its own claims) on the shared database, its store linked to a bus. */
  const replica = (claimTtlMs = 60_000) => {
    const eventBus = new PostgresTaskEventBus({ ...connection(), logger: silentLogger });
    buses.push(eventBus);
    const taskStore = new PostgresTaskStore({ ...connection(), eventBus });
    const configStore = new PostgresPushConfigStore(connection());
    return { taskStore, configStore, outbox: new PostgresPushOutbox({ taskStore, configStore, claimTtlMs, logger: silentLogger }) };
  };

  /** A task with a config, then `count` events committed (logged by the store's own writes). */
  async function taskWithEvents(count: number) {
    const a = replica();
    const scope = scopeOf();
    const id = `task-${randomUUID()}`;
    await a.taskStore.create(scope, working(id, 'v1'));
    await a.configStore.put(scope, config(id, 'c-1'), 10);
    for (let v = 1; v <= count; v++) {
      const task = working(id, `v${v + 1}`);
      await a.taskStore.update(scope, task, v, { kind: 'replace', event: statusEvent(task) });
    }
    return { scope, id };
  }

  it('a task behind its events is claimed by one sweeping replica; another sees it claimed', async () => {
    const { id } = await taskWithEvents(2);
    const b = replica();
    const c = replica();
    const [fromB, fromC] = await Promise.all([b.outbox.pending(), c.outbox.pending()]);
    const mine = [...fromB, ...fromC].filter((d) => d.taskId === id);
    expect(mine.map((d) => d.version)).toEqual([2, 3]);
    expect([fromB, fromC].filter((list) => list.some((d) => d.taskId === id))).toHaveLength(1);
    const owner = fromB.some((d) => d.taskId === id) ? b : c;
    for (const delivery of mine) await owner.outbox.remove(delivery.id);
    expect(owner.outbox.size).toBe(0);
    // Delivered: nothing owed any more, and the claim was released.
    expect((await replica().outbox.pending()).filter((d) => d.taskId === id)).toEqual([]);
  });

  it('a claim that expired (its replica died) is taken over by the next sweep', async () => {
    const { id } = await taskWithEvents(1);
    // A long claim: its renewals (every third of it) do not come within the test.
    const dying = replica(60_000);
    expect((await dying.outbox.pending()).filter((d) => d.taskId === id).map((d) => d.version)).toEqual([2]);
    // The replica dies without delivering: its claim is no longer renewed.
    await pool.query(`UPDATE "${pg.schema}".a2a_push_claims SET expires_at = now() - interval '1 second'`);
    const heir = replica();
    expect((await heir.outbox.pending()).filter((d) => d.taskId === id).map((d) => d.version)).toEqual([2]);
  });

  it('a live delivery first catches up the events its config is still owed', async () => {
    const { scope, id } = await taskWithEvents(2);
    const b = replica();
    const live = {
      id: 'live-4',
      scope,
      taskId: id,
      configId: 'c-1',
      version: 4,
      body: '{}',
      contentType: 'application/a2a+json',
      final: false,
      attempts: 0,
    };
    const queued = (await b.outbox.add([live])) ?? [];
    expect(queued.map((d) => d.version)).toEqual([2, 3, 4]);
    // Done out of order (4 first): the cursor waits for 2 and 3.
    await b.outbox.remove('live-4');
    expect((await b.configStore.cursors(scope, id))[0].delivered).toBe(1);
    for (const delivery of queued.slice(0, 2)) await b.outbox.remove(delivery.id);
    expect((await b.configStore.cursors(scope, id))[0].delivered).toBe(3);
  });

  it('a live event of a task whose deliveries another replica holds waits for them: delivered after the owed ones, in order, once', async () => {
    const { scope, id } = await taskWithEvents(2);
    const sweeper = replica();
    const taken = (await sweeper.outbox.pending()).filter((d) => d.taskId === id);
    expect(taken.map((d) => d.version)).toEqual([2, 3]);
    // Meanwhile another replica commits event 4: sent now it would overtake 2 and 3.
    const other = replica();
    const fourth = working(id, 'v4');
    await other.taskStore.update(scope, fourth, 3, { kind: 'replace', event: statusEvent(fourth) });
    expect(await other.outbox.add([liveDelivery(scope, id, 4)])).toEqual([]);
    for (const delivery of taken) await sweeper.outbox.remove(delivery.id);
    expect((await sweeper.configStore.cursors(scope, id))[0].delivered).toBe(3);
    // The next sweep takes event 4 over, once.
    const after = (await other.outbox.pending()).filter((d) => d.taskId === id);
    expect(after.map((d) => d.version)).toEqual([4]);
    for (const delivery of after) await other.outbox.remove(delivery.id);
    expect((await other.configStore.cursors(scope, id))[0].delivered).toBe(4);
  });

  describe('takeover while this replica commits an event of its own (the race forced, see takeover-race.ts)', () => {
    async function race(step: SweepStep) {
      const { scope, id } = await taskWithEvents(2);
      const heir = replica(400);
      return takeoverRace(heir, step, scope, id, async () => {
        const fourth = working(id, 'v4');
        await heir.taskStore.update(scope, fourth, 3, { kind: 'replace', event: statusEvent(fourth) });
      });
    }

    it('an event committed after the sweep read the log is delivered after the owed ones', async () => {
      expect(await race('task')).toEqual([2, 3, 4]);
    });

    it('an event the sweep read from the log is not delivered a second time by its live add', async () => {
      expect(await race('cursors')).toEqual([2, 3, 4]);
    });
  });

  it("records attempts on the config's row, so a replica taking over does not start over", async () => {
    const { scope, id } = await taskWithEvents(1);
    const a = replica();
    const [delivery] = (await a.outbox.pending()).filter((d) => d.taskId === id);
    await a.outbox.recordAttempts(delivery.id, 3);
    expect((await a.configStore.cursors(scope, id))[0].attempts).toBe(3);
  });
  // Last: its task stays owed, which the sweeps of the rules above would pick up.
  it("a new config starts at its task's version", async () => {
    const { scope, id } = await taskWithEvents(2);
    const { configStore } = replica();
    await configStore.put(scope, config(id, 'c-2'), 10);
    expect((await configStore.cursors(scope, id)).map((c) => [c.config.id, c.delivered])).toEqual([
      ['c-1', 1],
      ['c-2', 3],
    ]);
  });
});
