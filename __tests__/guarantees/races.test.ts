/**
 * Races a slow, shared store exposes: cancel against completion, many cancels at once, concurrent
 * follow-ups, and two engines (two replicas) on one store. Every write is compare-and-set on the
 * task's version, so each race ends in one consistent story told alike by the CancelTask reply,
 * GetTask and the stream, and nothing is lost. Over both bindings (JSON-RPC and HTTP+JSON). In the
 * `latency` project every store call takes 1-5 ms.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import express from 'express';
import { InMemoryTaskStore, createA2ARouter, silentLogger, type AgentExecutor, type Task, type TaskChange, type TaskScope } from '../../lib';
import { aborted, deferred, until, type Deferred } from '../helpers/async';
import { a2aClient, BINDINGS } from '../helpers/bindings';
import { startAgent, testCard, testStore, type TestServer } from '../helpers/fixtures';
import { listen, userMessage } from '../helpers/http';

/** Counts writes that store a given state. */
class CountingStore extends InMemoryTaskStore {
  readonly stored: string[] = [];
  override async create(scope: TaskScope, task: Task) {
    const version = await super.create(scope, task);
    this.stored.push(task.status.state);
    return version;
  }
  override async update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange) {
    const version = await super.update(scope, task, expectedVersion, change);
    this.stored.push(task.status.state);
    return version;
  }
}

/** The state the last StreamResponse that carries one tells. */
const lastState = (events: any[]): string | undefined => {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    const state = event?.statusUpdate?.status.state ?? event?.task?.status.state;
    if (state) return state;
  }
  return undefined;
};

const textOf = (message: any): string => message?.parts?.[0]?.text ?? '';

describe.each(BINDINGS)('races over %s', (binding) => {
  /** A client of the agent at `url` over this binding. */
  const at = (url: string) => a2aClient(binding, url);

  describe('races through a slow shared store', () => {
    let server: TestServer | undefined;
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('100 cancel-vs-complete races: the CancelTask reply, GetTask and the stream agree', async () => {
      const gates = new Map<string, Deferred>();
      const hookSaw: string[] = [];
      const executor: AgentExecutor = {
        async execute(ctx, events) {
          const gate = deferred();
          gates.set(ctx.taskId, gate);
          await events.start('working');
          await Promise.race([gate.promise, aborted(ctx.signal)]);
          if (!ctx.signal.aborted) await events.complete('completed by the agent').catch(() => undefined);
        },
        async cancel(ctx) {
          // What the store holds when the hook starts: it must never be a finished task.
          const stored = await inner.get({ tenant: ctx.tenant, owner: ctx.caller.id }, ctx.taskId);
          hookSaw.push(stored!.task.status.state);
        },
      };
      const inner = new InMemoryTaskStore();
      server = await startAgent(executor, { cancelGracePeriodMs: 2_000, taskStore: inner });
      const a2a = at(server.url);

      const race = async (i: number) => {
        const frames = a2a.events(await a2a.open('SendStreamingMessage', userMessage('race')));
        const events: any[] = [];
        const first = (await frames.next()).value!.event;
        events.push(first);
        const taskId: string = first.task.id;
        await until(() => gates.has(taskId), 'agent waiting');
        const release = () => gates.get(taskId)!.resolve();
        if (i % 2 === 0) release();
        else setImmediate(release);
        const cancel = await a2a.call('CancelTask', { id: taskId });
        for await (const frame of frames) if (frame.event) events.push(frame.event);
        const stored = (await a2a.call('GetTask', { id: taskId })).result as Task;
        return { taskId, cancel, streamState: lastState(events), stored };
      };

      const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => race(i)));
      for (const { cancel, streamState, stored } of outcomes) {
        if (cancel.result) {
          expect(cancel.result.status.state).toBe('TASK_STATE_CANCELED');
          expect(stored.status.state).toBe('TASK_STATE_CANCELED');
          expect(streamState).toBe('TASK_STATE_CANCELED');
        } else {
          // The completion won: the cancel says so instead of claiming success.
          expect(cancel.error!.code).toBe(-32002);
          expect(stored.status.state).toBe('TASK_STATE_COMPLETED');
          expect(streamState).toBe('TASK_STATE_COMPLETED');
          expect(textOf(stored.history!.at(-1))).toBe('completed by the agent');
        }
      }
      // cancel() never runs on a task already finished when the cancel is decided.
      expect(hookSaw.filter((state) => state !== 'TASK_STATE_WORKING')).toEqual([]);
      expect(server.router.liveExecutions).toBe(0);
      expect(server.router.liveObservers).toBe(0);
    });

    it.each(['parked', 'running'])('200 concurrent CancelTask on one %s task: cancel() runs once, CANCELED is written once', async (kind) => {
      const store = new CountingStore();
      let hooks = 0;
      const started = deferred();
      const executor: AgentExecutor = {
        async execute(ctx, events) {
          if (ctx.userText === 'park') return events.requireInput('more?');
          await events.start('working');
          started.resolve();
          await aborted(ctx.signal);
        },
        cancel() {
          hooks++;
        },
      };
      server = await startAgent(executor, { taskStore: store });
      const a2a = at(server.url);
      const sent = await a2a.call('SendMessage', { ...userMessage(kind === 'parked' ? 'park' : 'run'), configuration: { returnImmediately: true } });
      const taskId = sent.result.task.id;
      if (kind === 'running') await started.promise;

      const replies = await Promise.all(Array.from({ length: 200 }, () => a2a.call('CancelTask', { id: taskId })));
      for (const reply of replies) expect(reply.result?.status.state).toBe('TASK_STATE_CANCELED');
      // Every reply is the same task (the one CANCELED status written).
      expect(new Set(replies.map((r) => JSON.stringify(r.result.status))).size).toBe(1);
      expect(hooks).toBe(1);
      expect(store.stored.filter((s) => s === 'TASK_STATE_CANCELED')).toHaveLength(1);
      expect(server.router.liveExecutions).toBe(0);
    });

    describe('100 pairs of concurrent follow-ups on a parked task', () => {
      const executor: AgentExecutor = {
        async execute(ctx, events) {
          const [verb, name] = ctx.userText.split(':');
          if (verb === 'add') return events.requireInput(`added ${name}`);
          if (verb === 'finish') return events.complete(`finished by ${name}`);
          return events.requireInput('what next?');
        },
      };

      it('both turns run, one after the other, and the history keeps both', async () => {
        server = await startAgent(executor);
        const a2a = at(server.url);
        const pair = async () => {
          const taskId = (await a2a.call('SendMessage', userMessage('start'))).result.task.id;
          const [a, b] = await Promise.all(['A', 'B'].map((name) => a2a.call('SendMessage', userMessage(`add:${name}`, { taskId }))));
          expect(a.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
          expect(b.result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
          const stored = (await a2a.call('GetTask', { id: taskId })).result as Task;
          const texts = stored.history!.map(textOf);
          // Each user message is followed by the agent's answer to it: no turn saw a stale task.
          for (const name of ['A', 'B']) {
            const at = texts.indexOf(`add:${name}`);
            expect(at).toBeGreaterThan(0);
            expect(texts[at + 1]).toBe(`added ${name}`);
          }
          expect(texts).toHaveLength(6);
        };
        await Promise.all(Array.from({ length: 100 }, pair));
        expect(server.router.liveExecutions).toBe(0);
      });

      it('when the first completes the task, the second is refused, not lost or run on a stale copy', async () => {
        server = await startAgent(executor);
        const a2a = at(server.url);
        const pair = async () => {
          const taskId = (await a2a.call('SendMessage', userMessage('start'))).result.task.id;
          const replies = await Promise.all(['A', 'B'].map((name) => a2a.call('SendMessage', userMessage(`finish:${name}`, { taskId }))));
          const winners = replies.filter((r) => r.result);
          const losers = replies.filter((r) => r.error);
          expect(winners).toHaveLength(1);
          expect(losers).toHaveLength(1);
          expect(losers[0].error!.code).toBe(-32004);
          const stored = (await a2a.call('GetTask', { id: taskId })).result as Task;
          expect(stored).toEqual(winners[0].result.task);
          const winner = textOf(stored.history!.at(-1)).replace('finished by ', '');
          expect(stored.history!.map(textOf)).toEqual(['start', 'what next?', `finish:${winner}`, `finished by ${winner}`]);
        };
        await Promise.all(Array.from({ length: 100 }, pair));
      });
    });

    it('an agent that completes within the grace period wins: CancelTask answers TaskNotCancelable', async () => {
      const started = deferred();
      const executor: AgentExecutor = {
        async execute(ctx, events) {
          await events.start('working');
          started.resolve();
          await aborted(ctx.signal);
          await events.complete('finished anyway');
        },
      };
      server = await startAgent(executor, { cancelGracePeriodMs: 5_000 });
      const a2a = at(server.url);
      const taskId = (await a2a.call('SendMessage', { ...userMessage('run'), configuration: { returnImmediately: true } })).result.task.id;
      await started.promise;
      const reply = await a2a.call('CancelTask', { id: taskId });
      expect(reply.error!.code).toBe(-32002);
      expect(reply.error!.reason).toBe('TASK_NOT_CANCELABLE');
      expect((await a2a.call('GetTask', { id: taskId })).result.status.state).toBe('TASK_STATE_COMPLETED');
    });

    it('when execute() honours the signal and publishes nothing, CANCELED is written in the CancelTask request context', async () => {
      const als = new AsyncLocalStorage<string>();
      const contexts: string[] = [];
      class RecordingStore extends InMemoryTaskStore {
        override async update(scope: TaskScope, task: Task, expectedVersion: number, change?: TaskChange) {
          if (task.status.state === 'TASK_STATE_CANCELED') contexts.push(als.getStore() ?? 'none');
          return super.update(scope, task, expectedVersion, change);
        }
      }
      const started = deferred();
      const executor: AgentExecutor = {
        async execute(ctx, events) {
          await events.start('working');
          started.resolve();
          await aborted(ctx.signal);
        },
      };
      const tagged: express.RequestHandler = (req, _res, next) => als.run(req.get('x-who') ?? 'none', next);
      server = await startAgent(executor, { before: [tagged], taskStore: new RecordingStore() });
      const a2a = at(server.url);
      const send = a2a.call('SendMessage', userMessage('run'), { headers: { 'x-who': 'sender' } });
      await started.promise;
      const taskId = (await a2a.call('ListTasks', {}, { headers: { 'x-who': 'lister' } })).result.tasks[0].id;
      const canceled = await a2a.call('CancelTask', { id: taskId }, { headers: { 'x-who': 'canceller' } });
      expect(canceled.result.status.state).toBe('TASK_STATE_CANCELED');
      expect((await send).result.task.status.state).toBe('TASK_STATE_CANCELED');
      expect(contexts).toEqual(['canceller']);
    });
  });

  describe('two engines (replicas) on one store', () => {
    const servers: { close(): Promise<void> }[] = [];
    afterEach(async () => {
      await Promise.all(servers.splice(0).map((s) => s.close()));
    });

    /** Two routers with their own registries and buses, sharing one store: two processes, in effect. */
    async function replicas(executor: AgentExecutor) {
      const shared = testStore();
      const clients: ReturnType<typeof at>[] = [];
      for (let i = 0; i < 2; i++) {
        const app = express();
        app.use('/agent', createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, taskStore: shared, cancelGracePeriodMs: 200 }));
        const listening = await listen(app);
        servers.push(listening);
        clients.push(at(`${listening.baseUrl}/agent`));
      }
      return clients;
    }

    it('CancelTask on B of a task running on A: CANCELED stays, A’s later complete() is refused', async () => {
      const gate = deferred();
      const started = deferred();
      const refused = deferred<unknown>();
      let signalAborted = false;
      const executor: AgentExecutor = {
        async execute(ctx, events) {
          await events.start('working');
          started.resolve();
          await gate.promise;
          await events.complete('too late').then(
            () => refused.resolve('accepted'),
            (error) => {
              signalAborted = ctx.signal.aborted;
              refused.resolve(error);
            },
          );
        },
      };
      const [a, b] = await replicas(executor);
      const send = a.call('SendMessage', userMessage('run'));
      await started.promise;
      const taskId = (await a.call('ListTasks', {})).result.tasks[0].id;
      const canceled = await b.call('CancelTask', { id: taskId });
      expect(canceled.result.status.state).toBe('TASK_STATE_CANCELED');
      gate.resolve();
      expect(await refused.promise).toBeInstanceOf(Error);
      expect(signalAborted).toBe(true);
      // A's blocking caller is told the truth, and both replicas read the same task.
      expect((await send).result.task.status.state).toBe('TASK_STATE_CANCELED');
      for (const replica of [a, b]) expect((await replica.call('GetTask', { id: taskId })).result.status.state).toBe('TASK_STATE_CANCELED');
    });

    it('follow-ups sent to A and B at once: one completes the task, the other is refused, nothing is overwritten', async () => {
      const executor: AgentExecutor = {
        async execute(ctx, events) {
          const [verb, name] = ctx.userText.split(':');
          if (verb === 'finish') return events.complete(`finished by ${name}`);
          return events.requireInput('what next?');
        },
      };
      const [a, b] = await replicas(executor);
      for (let i = 0; i < 20; i++) {
        const taskId = (await a.call('SendMessage', userMessage('start'))).result.task.id;
        const replies = await Promise.all([
          a.call('SendMessage', userMessage('finish:A', { taskId })),
          b.call('SendMessage', userMessage('finish:B', { taskId })),
        ]);
        const winners = replies.filter((r) => r.result);
        expect(winners).toHaveLength(1);
        const stored = (await b.call('GetTask', { id: taskId })).result as Task;
        expect(stored).toEqual(winners[0].result.task);
        const loser = replies.find((r) => r.error);
        if (loser) expect(loser.error!.code).toBe(-32004);
      }
    });
  });

  describe('a failing store', () => {
    it('is answered -32603 (HTTP 503) without its error text, and the process keeps serving', async () => {
      let failing = false;
      class FlakyStore extends InMemoryTaskStore {
        override async get(scope: TaskScope, taskId: string) {
          if (failing) throw new Error('connection reset by db-7.internal');
          return super.get(scope, taskId);
        }
        override async create(scope: TaskScope, task: Task) {
          if (failing) throw new Error('connection reset by db-7.internal');
          return super.create(scope, task);
        }
      }
      const executor: AgentExecutor = { execute: (_ctx, events) => events.requireInput('more?') };
      const server = await startAgent(executor, { taskStore: new FlakyStore() });
      const a2a = at(server.url);
      try {
        const parked = (await a2a.call('SendMessage', userMessage('hi'))).result.task;
        failing = true;
        for (const reply of [
          await a2a.call('GetTask', { id: parked.id }),
          await a2a.call('SendMessage', userMessage('hi')),
          await a2a.call('CancelTask', { id: parked.id }),
        ]) {
          // -32603 with HTTP 503, so that clients and load balancers retry.
          expect(reply.status).toBe(503);
          expect(reply.error!.code).toBe(-32603);
          expect(reply.text).not.toContain('db-7');
        }
        failing = false;
        expect((await a2a.call('GetTask', { id: parked.id })).result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
        await until(() => server.router.liveExecutions === 0, 'nothing live');
      } finally {
        await server.close();
      }
    });
  });
});
