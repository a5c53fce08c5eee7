/**
 * One engine behind both versions: a task created by a v0.3 client is read, continued, followed and
 * canceled by a v1.0 client and the other way round, and the (tenant, owner) scoping is the same
 * whichever version asks: another caller's task is TaskNotFound in both, byte-identical to a
 * missing id.
 */
import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import type { AgentExecutor } from '../../lib';
import { deferred, type Deferred } from '../helpers/async';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { followStream } from '../helpers/follow-stream';
import { openStream, rpc, rpcStream, userMessage } from '../helpers/http';
import { expectV03 } from '../helpers/v03-schema';

let gate: Deferred<void>;

const executor: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'book') return events.requireInput('which day?');
    if (ctx.userText === 'long') {
      await events.start('working');
      await Promise.race([gate.promise, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))]);
      if (ctx.signal.aborted) return;
      return events.complete('long done');
    }
    if (ctx.task?.status.state === 'TASK_STATE_INPUT_REQUIRED') return events.complete(`booked for ${ctx.userText}`);
    return events.reject('unknown request');
  },
};

const identity = (req: Request) => ({ caller: { id: req.get('x-user') ?? 'nobody', authenticated: true }, tenant: req.get('x-tenant') ?? '' });

const ALICE = { 'x-user': 'alice', 'x-tenant': 't1' };
const BOB = { 'x-user': 'bob', 'x-tenant': 't1' };
const ALICE_ELSEWHERE = { 'x-user': 'alice', 'x-tenant': 't2' };
const V03 = { 'A2A-Version': '' };

const v03Message = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }], ...extra },
});

describe('a task across protocol versions', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, { callContext: identity });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    gate = deferred();
  });
  afterEach(() => gate.resolve());

  const v1 = (method: string, params: unknown, who = ALICE) => rpc(server.url, method, params, { headers: who });
  const v03 = (method: string, params: unknown, who = ALICE) => rpc(server.url, method, params, { headers: { ...V03, ...who } });

  it('created by v0.3, read and continued by v1.0, then read again by v0.3', async () => {
    const created = (await v03('message/send', v03Message('book'))).body.result;
    expect(created).toMatchObject({ kind: 'task', status: { state: 'input-required' } });

    const read = (await v1('GetTask', { id: created.id })).body.result;
    expect(read).toMatchObject({ id: created.id, contextId: created.contextId, status: { state: 'TASK_STATE_INPUT_REQUIRED' } });
    expect(read.history[0]).toMatchObject({ role: 'ROLE_USER', parts: [{ text: 'book' }] });

    const continued = (await v1('SendMessage', userMessage('Friday', { taskId: created.id }))).body.result.task;
    expect(continued).toMatchObject({ id: created.id, status: { state: 'TASK_STATE_COMPLETED' } });

    const again = await v03('tasks/get', { id: created.id });
    expectV03('GetTaskSuccessResponse', again.body);
    expect(again.body.result).toMatchObject({
      id: created.id,
      status: { state: 'completed', message: { parts: [{ kind: 'text', text: 'booked for Friday' }] } },
    });
    expect(again.body.result.history.map((m: { role: string }) => m.role)).toEqual(['user', 'agent', 'user', 'agent']);
  });

  it('created by v1.0, read and continued by v0.3', async () => {
    const created = (await v1('SendMessage', userMessage('book'))).body.result.task;
    const read = await v03('tasks/get', { id: created.id });
    expect(read.body.result).toMatchObject({ kind: 'task', id: created.id, status: { state: 'input-required' } });
    const continued = await v03('message/send', v03Message('Monday', { taskId: created.id }));
    expect(continued.body.result).toMatchObject({ id: created.id, status: { state: 'completed' } });
    expect((await v1('GetTask', { id: created.id })).body.result.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('canceled across versions, both ways', async () => {
    const fromV03 = (await v03('message/send', { ...v03Message('long'), configuration: { blocking: false } })).body.result;
    const canceledByV1 = (await v1('CancelTask', { id: fromV03.id })).body.result;
    expect(canceledByV1.status.state).toBe('TASK_STATE_CANCELED');
    expect((await v03('tasks/get', { id: fromV03.id })).body.result.status.state).toBe('canceled');

    const fromV1 = (await v1('SendMessage', { ...userMessage('long'), configuration: { returnImmediately: true } })).body.result.task;
    const canceledByV03 = await v03('tasks/cancel', { id: fromV1.id });
    expectV03('CancelTaskSuccessResponse', canceledByV03.body);
    expect(canceledByV03.body.result.status.state).toBe('canceled');
    expect((await v1('GetTask', { id: fromV1.id })).body.result.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('followed across versions: a v1.0 subscriber sees a v0.3 follow-up, a v0.3 resubscriber a v1.0 one', async () => {
    const fromV03 = (await v03('message/send', v03Message('book'))).body.result;
    const v1Stream = followStream(openStream(server.url, 'SubscribeToTask', { id: fromV03.id }, { headers: ALICE }));
    await v1Stream.firstEvent;
    await v03('message/send', v03Message('Tuesday', { taskId: fromV03.id }));
    const v1Events = (await v1Stream.ended).events.map((e) => e.result);
    expect(v1Events[0].task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(v1Events.at(-1).statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');

    const fromV1 = (await v1('SendMessage', userMessage('book'))).body.result.task;
    const v03Stream = followStream(openStream(server.url, 'tasks/resubscribe', { id: fromV1.id }, { headers: { ...V03, ...ALICE } }));
    await v03Stream.firstEvent;
    await v1('SendMessage', userMessage('Wednesday', { taskId: fromV1.id }));
    const v03Events = (await v03Stream.ended).events.map((e) => e.result);
    expect(v03Events[0]).toMatchObject({ kind: 'task', status: { state: 'input-required' } });
    expect(v03Events.at(-1)).toMatchObject({ kind: 'status-update', status: { state: 'completed' }, final: true });
  });

  describe('scoping is the same in both versions', () => {
    it.each([
      ['another owner', BOB],
      ['the same owner in another tenant', ALICE_ELSEWHERE],
    ])("%s cannot see, continue or cancel the task in either version; the answer is a missing id's", async (_who, other) => {
      const viaV03 = (await v03('message/send', v03Message('book'))).body.result.id;
      const viaV1 = (await v1('SendMessage', userMessage('book'))).body.result.task.id;
      for (const id of [viaV03, viaV1]) {
        const missingV1 = await v1('GetTask', { id: `missing-${id}` }, other);
        const missingV03 = await v03('tasks/get', { id: `missing-${id}` }, other);
        const strip = (text: string) => text.replaceAll(`missing-${id}`, id);
        const probes = [
          [await v1('GetTask', { id }, other), missingV1],
          [await v1('CancelTask', { id }, other), missingV1],
          [await v1('SendMessage', userMessage('x', { taskId: id }), other), missingV1],
          [await v03('tasks/get', { id }, other), missingV03],
          [await v03('tasks/cancel', { id }, other), missingV03],
          [await v03('message/send', v03Message('x', { taskId: id }), other), missingV03],
        ] as const;
        for (const [probe, missing] of probes) {
          expect(probe.body.error.code).toBe(-32001);
          expect(JSON.stringify({ ...probe.body, id: 0 })).toBe(strip(JSON.stringify({ ...missing.body, id: 0 })));
        }
        const resubscribe = await rpcStream(server.url, 'tasks/resubscribe', { id }, { headers: { ...V03, ...other } });
        expect(resubscribe.json.error.code).toBe(-32001);
      }
      // Untouched: still waiting for its owner's input.
      for (const id of [viaV03, viaV1]) expect((await v1('GetTask', { id })).body.result.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    });
  });
});
