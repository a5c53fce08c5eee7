/**
 * The binding-neutral client of __tests__/helpers/bindings.ts, which lets a suite run over both
 * bindings by parameterising: the same calls give the same results and error codes on each.
 */
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';
import { a2aClient, BINDINGS } from '../helpers/bindings';
import { gates, restAgent, type Gates } from './agent';

let g: Gates;
const executor = restAgent(() => g);

describe.each(BINDINGS)('a2aClient over %s', (binding) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, { callContext: (req) => ({ caller: { id: req.get('x-user') ?? 'u', authenticated: true } }) });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    g = gates();
  });
  afterEach(() => g.gate.resolve());

  const a2a = () => a2aClient(binding, server.url);

  it('results: SendMessage, GetTask (historyLength), ListTasks, CancelTask', async () => {
    const { task } = (await a2a().call('SendMessage', userMessage('report'))).result;
    expect(task.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await a2a().call('GetTask', { id: task.id, historyLength: 1 })).result.history).toHaveLength(1);
    const listed = (await a2a().call('ListTasks', { pageSize: 1 })).result;
    expect(listed).toMatchObject({ pageSize: 1, tasks: [expect.objectContaining({ id: task.id })] });
    const running = (await a2a().call('SendMessage', { ...userMessage('long'), configuration: { returnImmediately: true } })).result.task;
    await g.running.promise;
    expect((await a2a().call('CancelTask', { id: running.id })).result.status.state).toBe('TASK_STATE_CANCELED');
  });

  it('errors carry the JSON-RPC code on either binding', async () => {
    expect((await a2a().call('GetTask', { id: 'missing' })).error).toMatchObject({ code: -32001, reason: 'TASK_NOT_FOUND' });
    const { task } = (await a2a().call('SendMessage', userMessage('report'))).result;
    expect((await a2a().call('CancelTask', { id: task.id })).error).toMatchObject({ code: -32002, reason: 'TASK_NOT_CANCELABLE' });
    expect((await a2a().call('GetTask', { id: task.id, historyLength: -1 })).error).toMatchObject({ code: -32602 });
    expect((await a2a().call('GetTask', { id: task.id }, { headers: { 'x-user': 'someone-else' } })).error).toMatchObject({ code: -32001 });
    expect((await a2a().stream('SubscribeToTask', { id: task.id })).error).toMatchObject({ code: -32004, reason: 'UNSUPPORTED_OPERATION' });
  });

  it('streams: StreamResponse objects in order; tenants partition', async () => {
    const reply = await a2a().stream('SendStreamingMessage', userMessage('report'));
    expect(reply.events.map((e) => Object.keys(e)[0])).toEqual(['task', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
    expect(reply.error).toBeUndefined();
    const { task } = (await a2a().call('SendMessage', { ...userMessage('report'), tenant: 'acme' })).result;
    expect((await a2a().call('GetTask', { id: task.id, tenant: 'acme' })).result.id).toBe(task.id);
    expect((await a2a().call('GetTask', { id: task.id })).error?.code).toBe(-32001);
  });
});
