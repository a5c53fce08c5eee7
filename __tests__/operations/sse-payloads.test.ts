/**
 * One event fanned out to many SSE streams is encoded once: a large payload is one Buffer every
 * stream's socket references (no copy per stream), and the JSON-RPC envelope a stream wraps it in
 * makes exactly the frame successResponse makes.
 */
import { jsonRpcEventEnvelope } from '../../lib/http/jsonrpc';
import { SHARED_BYTES_FROM, SharedPayloads } from '../../lib/http/sse-payloads';
import { successResponse } from '../../lib/protocol/jsonrpc';

describe('SharedPayloads', () => {
  it('encodes an event once for all its streams; a large one as the same Buffer', () => {
    let encoded = 0;
    const payloads = new SharedPayloads((event) => (encoded++, JSON.stringify(event)));
    const large = { text: 'x'.repeat(SHARED_BYTES_FROM) };
    const first = payloads.of(large);
    expect(Buffer.isBuffer(first)).toBe(true);
    for (let stream = 0; stream < 10; stream++) expect(payloads.of(large)).toBe(first);
    expect(encoded).toBe(1);
    const small = { text: 'hi' };
    expect(payloads.of(small)).toBe('{"text":"hi"}');
    expect(payloads.of(small)).toBe('{"text":"hi"}');
    expect(encoded).toBe(2);
  });
});

describe('jsonRpcEventEnvelope', () => {
  it.each([1, 0, -3.5, 'abc', 'quote " and \\ and \u2028', null])('wraps a payload as successResponse does (id %p)', (id) => {
    const event = { statusUpdate: { taskId: 't', status: { state: 'TASK_STATE_WORKING' } } };
    const [head, tail] = jsonRpcEventEnvelope(id);
    expect(head + JSON.stringify(event) + tail).toBe(successResponse(id, event));
  });
});
