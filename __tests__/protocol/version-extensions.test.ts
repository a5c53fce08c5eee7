/** Service parameters (§3.6, §3.2.6, §4.6): A2A-Version negotiation (header / query) and A2A-Extensions activation. */
import { request } from 'node:http';
import type { AgentExecutor } from '../../lib';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { rpc, userMessage } from '../helpers/http';

const seenExtensions: (readonly string[])[] = [];
const executor: AgentExecutor = {
  async execute(ctx, events) {
    seenExtensions.push(ctx.extensions);
    await events.complete('ok');
  },
};

/** A JSON-RPC POST with exactly the given headers (no A2A-Version added). */
async function post(url: string, headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, ...userMessageCall() }) {
  const response = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const json: any = await response.json();
  return { status: response.status, headers: response.headers, body: json };
}

function userMessageCall() {
  return { method: 'SendMessage', params: userMessage('hello') };
}

/** A raw node:http POST, so the header name goes on the wire exactly as written. */
function rawPost(url: string, headerName: string, value: string): Promise<{ status: number; body: string }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, ...userMessageCall() });
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'Content-Type': 'application/json', [headerName]: value } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('A2A-Version', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor);
  });
  afterAll(() => server.close());

  it('answers -32009 VersionNotSupported when no version is sent (absent = 0.3, not served)', async () => {
    const reply = await post(server.url, {});
    expect(reply.body.error.code).toBe(-32009);
    expect(reply.body.id).toBe(1);
    expect(reply.body.error.data[0]).toMatchObject({ reason: 'VERSION_NOT_SUPPORTED', domain: 'a2a-protocol.org' });
  });

  it.each(['1.0', '1.0.3'])('accepts %s', async (version) => {
    const reply = await post(server.url, { 'A2A-Version': version });
    expect(reply.body.error).toBeUndefined();
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it.each(['1.1', '0.3', '2.0'])('answers -32009 for %s', async (version) => {
    const reply = await post(server.url, { 'A2A-Version': version });
    expect(reply.body.error.code).toBe(-32009);
  });

  it.each(['a2a-version', 'A2A-VERSION', 'a2A-vErSiOn'])('reads the header case-insensitively (%s)', async (name) => {
    const accepted = await rawPost(server.url, name, '1.0');
    expect(JSON.parse(accepted.body).result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const refused = await rawPost(server.url, name, '0.3');
    expect(JSON.parse(refused.body).error.code).toBe(-32009);
  });

  it('accepts ?A2A-Version=1.0 when the header is absent', async () => {
    const reply = await post(`${server.url}?A2A-Version=1.0`, {});
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const refused = await post(`${server.url}?A2A-Version=0.3`, {});
    expect(refused.body.error.code).toBe(-32009);
  });

  it('serves the agent card without any version header', async () => {
    const response = await fetch(`${server.url}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { name: string }).name).toBe(testCard.name);
  });
});

describe('A2A-Extensions', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, {
      agentCard: { ...testCard, capabilities: { ...testCard.capabilities, extensions: [{ uri: 'urn:x:a' }, { uri: 'urn:x:req', required: true }] } },
    });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    seenExtensions.length = 0;
  });

  it('answers -32008 when a required extension is not requested', async () => {
    const none = await rpc(server.url, 'SendMessage', userMessage('hi'));
    expect(none.body.error.code).toBe(-32008);
    expect(none.body.error.data[0]).toMatchObject({ reason: 'EXTENSION_SUPPORT_REQUIRED', domain: 'a2a-protocol.org' });
    const onlyOptional = await rpc(server.url, 'SendMessage', userMessage('hi'), { headers: { 'A2A-Extensions': 'urn:x:a' } });
    expect(onlyOptional.body.error.code).toBe(-32008);
    expect(seenExtensions).toHaveLength(0);
  });

  it('activates only declared extensions, echoes them in A2A-Extensions and hands them to execute()', async () => {
    const reply = await rpc(server.url, 'SendMessage', userMessage('hi'), {
      headers: { 'A2A-Extensions': 'urn:x:a, urn:x:unknown,urn:x:req' },
    });
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    const echoed = (reply.headers.get('a2a-extensions') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    expect(echoed.sort()).toEqual(['urn:x:a', 'urn:x:req']);
    expect(seenExtensions).toHaveLength(1);
    expect([...seenExtensions[0]].sort()).toEqual(['urn:x:a', 'urn:x:req']);
  });

  it('does not echo an optional extension that was not requested', async () => {
    const reply = await rpc(server.url, 'SendMessage', userMessage('hi'), { headers: { 'A2A-Extensions': 'urn:x:req' } });
    expect(reply.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect(reply.headers.get('a2a-extensions')).toBe('urn:x:req');
    expect(seenExtensions[0]).toEqual(['urn:x:req']);
  });
});
