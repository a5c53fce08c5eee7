/**
 * The engine under store faults (issue 21): a store call that never settles answers 503 / -32603
 * within the deadline instead of hanging.
 */
import type { AgentExecutor } from '../../lib';
import { a2aClient } from '../helpers/bindings';
import { FaultyStore } from '../helpers/faulty-store';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { userMessage } from '../helpers/http';

const parkingAgent: AgentExecutor = {
  async execute(ctx, events) {
    if (ctx.userText === 'park') return events.requireInput('which day?');
    return events.complete('ok');
  },
};

describe('a store call that never settles', () => {
  let server: TestServer;
  afterEach(() => server.close());

  it('answers 503 UNAVAILABLE (HTTP+JSON) and -32603 (JSON-RPC) within the deadline (default 5 s), on both bindings', async () => {
    const store = new FaultyStore();
    server = await startAgent(parkingAgent, { taskStore: store });
    const parked = (await a2aClient('jsonrpc', server.url).call('SendMessage', userMessage('park'))).result.task;
    store.mode = 'hang-reads';
    const [rpc, rest] = await Promise.all([
      a2aClient('jsonrpc', server.url).call('GetTask', { id: parked.id }),
      a2aClient('rest', server.url).call('GetTask', { id: parked.id }),
    ]);
    expect(rpc.error?.code).toBe(-32603);
    expect(rest.status).toBe(503);
    expect(JSON.parse(rest.text).error.status).toBe('UNAVAILABLE');
    store.mode = 'ok';
    expect((await a2aClient('rest', server.url).call('GetTask', { id: parked.id })).result.id).toBe(parked.id);
  });
});
