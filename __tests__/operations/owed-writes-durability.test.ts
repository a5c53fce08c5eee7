/**
 * A final write a store outage refused is owed in memory only (lib/engine/owed-writes.ts): when the
 * process owing it dies, the task must still be settled, by the next process's start-up settlement
 * (one process on a store that can find unfinished tasks) or by whichever replica claims the task
 * once its lease expires (several replicas: the owed task stays leased between retries). Process death here: the owing router's store refuses every
 * write for good (its retries never land) and, with leases, its leases stop being renewed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { InMemoryTaskStore, type A2ATaskEventInfo, type AgentExecutor } from '../../lib';
import type { LeasedTask, TaskLease, TaskLeases } from '../../lib/engine/seams/task-leases';
import { openSqliteTaskStore } from '../../lib/sqlite';
import { deferred, until, type Deferred } from '../helpers/async';
import { a2aClient } from '../helpers/bindings';
import { FaultyStore } from '../helpers/faulty-store';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';

let started: Deferred<void>;
let gate: Deferred<void>;

/** Starts work, then completes once `gate` opens (no resume(): an orphan is failed). */
const gatedAgent: AgentExecutor = {
  async execute(_ctx, events) {
    await events.start('working');
    started.resolve();
    await gate.promise;
    await events.complete('done');
  },
};

/**
 * Leases several routers share, as a lease store keeps them: one holder per task (each acquire its
 * own, as on Redis and PostgreSQL), held until released or until its process stops renewing it
 * (`die`), after which the first sweep elsewhere claims it (removes it and settles the task). An
 * acquire waits up to its waitMs.
 */
class SharedLeases {
  readonly #held = new Map<string, { holder: number; owner: string; task: LeasedTask; expired: boolean }>();
  /** Routers whose process died: they lease nothing more. */
  readonly #dead = new Set<string>();
  /** Acquires waiting for a release. */
  #waiting: Array<() => void> = [];
  #acquired = 0;

  /** The leases as the router `owner` sees them. */
  of(owner: string): TaskLeases {
    const held = this.#held;
    const grant = (key: string, task: LeasedTask): TaskLease => {
      const holder = ++this.#acquired;
      held.set(key, { holder, owner, task, expired: false });
      return {
        release: async () => {
          // A dead process releases nothing (here: its router's retries, which go on).
          if (this.#dead.has(owner) || held.get(key)?.holder !== holder) return;
          held.delete(key);
          for (const wake of this.#waiting.splice(0)) wake();
        },
        get lost() {
          return held.get(key)?.holder !== holder;
        },
      };
    };
    return {
      sweepIntervalMs: 100,
      acquire: async (key, task, waitMs) => {
        const deadline = Date.now() + waitMs;
        for (;;) {
          if (this.#dead.has(owner)) return undefined;
          if (!held.has(key)) return grant(key, task);
          const left = deadline - Date.now();
          if (left <= 0) return undefined;
          await new Promise<void>((resolve) => {
            this.#waiting.push(resolve);
            setTimeout(resolve, left).unref();
          });
        }
      },
      claimExpired: async () => {
        const claimed: LeasedTask[] = [];
        if (this.#dead.has(owner)) return claimed;
        for (const [key, lease] of held) {
          if (!lease.expired) continue;
          // Claimed: gone from the store, for the claimer to settle (it leases the task to write).
          held.delete(key);
          claimed.push(lease.task);
        }
        return claimed;
      },
    };
  }

  /** `owner`'s process died: it renews nothing, so its leases expire. */
  die(owner: string): void {
    this.#dead.add(owner);
    for (const lease of this.#held.values()) if (lease.owner === owner) lease.expired = true;
  }

  /** Tasks leased now. */
  get size(): number {
    return this.#held.size;
  }
}

describe('a final write owed when its process dies', () => {
  const servers: TestServer[] = [];
  beforeEach(() => {
    started = deferred();
    gate = deferred();
  });
  afterEach(async () => {
    gate.resolve();
    for (const server of servers.splice(0)) await server.close();
  });

  const stateOn = async (server: TestServer, taskId: string): Promise<string> =>
    (await a2aClient('jsonrpc', server.url).call('GetTask', { id: taskId })).result.status.state;

  /** Starts a turn on `first` and lets the outage refuse its COMPLETED and the engine's FAILED (now owed). */
  async function owedOn(first: TestServer, outage: FaultyStore): Promise<string> {
    const sent = await a2aClient('jsonrpc', first.url).call('SendMessage', { ...userMessage('work'), configuration: { returnImmediately: true } });
    await started.promise;
    outage.mode = 'fail-writes';
    gate.resolve();
    await until(() => outage.refusedWrites >= 2 && first.router.liveExecutions === 0, 'both final writes refused');
    return sent.result.task.id as string;
  }

  it('one process: the next process start-up settles the task (FAILED), though the owed write was lost', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'a2a-owed-'));
    const store = await openSqliteTaskStore({ path: path.join(dir, 'tasks.sqlite') });
    try {
      const outage = new FaultyStore(store);
      const first = await startAgent(gatedAgent, { taskStore: outage });
      servers.push(first);
      const taskId = await owedOn(first, outage);
      // The first process is gone for the store: its retries never land (the outage never ends for it).
      expect(await stateOn(first, taskId)).toBe('TASK_STATE_WORKING');
      const next = await startAgent(gatedAgent, { taskStore: store });
      servers.push(next);
      const task = (await a2aClient('jsonrpc', next.url).call('GetTask', { id: taskId })).result;
      expect(task.status.state).toBe('TASK_STATE_FAILED');
      expect(next.router.liveExecutions).toBe(0);
    } finally {
      for (const server of servers.splice(0)) await server.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('several replicas: once the lease of the dead replica expires, another settles the task (FAILED)', async () => {
    const store = new InMemoryTaskStore();
    const leases = new SharedLeases();
    const outage = new FaultyStore(store);
    const first = await startAgent(gatedAgent, { taskStore: outage, taskLeases: leases.of('a') });
    const failedOnOther: string[] = [];
    const onTaskEvent = (info: A2ATaskEventInfo) => void (info.task.status.state === 'TASK_STATE_FAILED' && failedOnOther.push(info.taskId));
    const other = await startAgent(gatedAgent, { taskStore: store, taskLeases: leases.of('b'), onTaskEvent });
    servers.push(first, other);
    const taskId = await owedOn(first, outage);
    expect(await stateOn(first, taskId)).toBe('TASK_STATE_WORKING');
    // The task stays leased while its final write is owed; the replica owing it dies.
    await until(() => leases.size === 1, 'the owed task leased');
    leases.die('a');
    await until(() => failedOnOther.includes(taskId), 'settled by the other replica');
    const task = (await a2aClient('jsonrpc', other.url).call('GetTask', { id: taskId })).result;
    expect(task.status.state).toBe('TASK_STATE_FAILED');
  });
});
