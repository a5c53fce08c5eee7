/**
 * A JSON-RPC request whose body is not declared JSON (`curl -d` sends a form type) is refused with
 * -32600 naming the Content-Type it got and the one expected, in v1.0 and v0.3 alike (issue 20).
 */
import express from 'express';
import type { AgentExecutor } from '../../lib';
import { startAgent, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';

const executor: AgentExecutor = { execute: (_ctx, events) => events.reply('ok') };
const SEND = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'SendMessage', params: userMessage('hi') });
const V03_SEND = JSON.stringify({
  jsonrpc: '2.0',
  id: 7,
  method: 'message/send',
  params: { message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } },
});

describe('JSON-RPC with a body that is not declared JSON', () => {
  let server: TestServer;
  afterEach(() => server.close());

  it.each(['application/x-www-form-urlencoded', 'text/plain', 'text/plain; charset=utf-8'])(
    'answers -32600 naming Content-Type %s and application/json',
    async (type) => {
      server = await startAgent(executor);
      const reply = await rpc(server.url, 'SendMessage', undefined, { raw: SEND, headers: { 'Content-Type': type } });
      expect(reply.body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      expect(reply.body.error.message).toBe(
        `Invalid request: Content-Type ${type} is not read as JSON: send the JSON-RPC 2.0 request object with Content-Type application/json`,
      );
    },
  );

  it('says so on v0.3 too (no A2A-Version)', async () => {
    server = await startAgent(executor);
    const response = await fetch(server.url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: V03_SEND });
    const body = (await response.json()) as { id: unknown; error: { code: number; message: string } };
    expect(body.id).toBeNull();
    expect(body.error.code).toBe(-32600);
    expect(body.error.message).toMatch(/Content-Type application\/x-www-form-urlencoded is not read as JSON: .* application\/json/);
  });

  it('names the form type even when the host app parsed the form first', async () => {
    server = await startAgent(executor, { before: [express.urlencoded({ extended: false })] });
    const reply = await rpc(server.url, 'SendMessage', undefined, { raw: SEND, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } });
    expect(reply.body.error.code).toBe(-32600);
    expect(reply.body.error.message).toMatch(/Content-Type application\/x-www-form-urlencoded is not read as JSON/);
  });

  it('keeps the envelope message for a JSON body, and serves application/json and +json bodies', async () => {
    server = await startAgent(executor);
    const bad = await rpc(server.url, 'SendMessage', undefined, { raw: '42' });
    expect(bad.body.error).toMatchObject({ code: -32600, message: 'Invalid request: The body must be a JSON-RPC 2.0 request object' });
    for (const type of ['application/json', 'application/a2a+json']) {
      const reply = await rpc(server.url, 'SendMessage', undefined, { raw: SEND, headers: { 'Content-Type': type } });
      expect(reply.body.result.message.parts[0].text).toBe('ok');
    }
  });
});
