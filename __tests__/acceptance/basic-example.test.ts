/**
 * examples/basic as a user runs it: the root card, a two-turn booking, a streamed booking, and the
 * official client discovering the agent from the root card.
 */
// The SDK's CJS build requires jose v6, which is ESM-only; Jest's CommonJS runtime cannot load it and the
// client never calls it, so it is replaced by an empty module (test-environment workaround only).
jest.mock(require.resolve('jose', { paths: [require('node:path').dirname(require.resolve('@a2a-js/sdk/client'))] }), () => ({}));

import { ClientFactory } from '@a2a-js/sdk/client';
import { TaskState, type Task } from '@a2a-js/sdk';
import { createApp } from '../../examples/basic/app';
import { clientSend } from '../helpers/official-client';
import { listen, rpc, rpcStream, userMessage, type Listening } from '../helpers/http';

describe('examples/basic', () => {
  let server: Listening;
  let url: string;

  beforeAll(async () => {
    server = await listen(createApp().app);
    url = `${server.baseUrl}/agent`;
  });
  afterAll(() => server.close());

  it('serves the card at the root and under the mount, both pointing at /agent', async () => {
    for (const path of ['/.well-known/agent-card.json', '/agent/.well-known/agent-card.json']) {
      const card = (await (await fetch(`${server.baseUrl}${path}`)).json()) as { name: string; supportedInterfaces: unknown };
      expect(card.name).toBe('Travel Agent');
      expect(card.supportedInterfaces).toEqual([
        { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        // v0.3 compatibility (on by default): both endpoints also speak 0.3 (HTTP+JSON under /v1).
        { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
        { url, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
      ]);
    }
  });

  it('books a flight in two turns', async () => {
    const first = await rpc(url, 'SendMessage', userMessage('book a flight to Lisbon'));
    const task = first.body.result.task;
    expect(task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    expect(task.status.message.parts[0].text).toBe('Which day would you like to fly?');
    const second = await rpc(url, 'SendMessage', userMessage('Friday', { taskId: task.id }));
    const booked = second.body.result.task;
    expect(booked.status.state).toBe('TASK_STATE_COMPLETED');
    expect(booked.artifacts[0]).toMatchObject({ name: 'itinerary', parts: [{ text: 'Flight booked for Friday. Seat 14A.' }] });
  });

  it('streams the booking turn by turn', async () => {
    const first = await rpcStream(url, 'SendStreamingMessage', userMessage('book a flight'));
    const taskId = first.events[0].result.task.id;
    expect(first.events[0].result.task.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const second = await rpcStream(url, 'SendStreamingMessage', userMessage('Monday', { taskId }));
    expect(second.events.map((event) => Object.keys(event.result)[0])).toEqual(['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
    expect(second.events.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('works with the official client, discovered from the root card', async () => {
    const client = await new ClientFactory().createFromUrl(`${server.baseUrl}/`);
    const send = (text: string, taskId = '') => clientSend(text, { taskId });
    const first = (await client.sendMessage(send('book a flight'))) as Task;
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const second = (await client.sendMessage(send('Tuesday', first.id))) as Task;
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const cases: string[] = [];
    for await (const event of client.sendMessageStream(send('hello'))) cases.push(event.payload!.$case);
    expect(cases).toEqual(['message']);
  });
});
