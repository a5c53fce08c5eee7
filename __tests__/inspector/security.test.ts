/** The inspector's gate over real HTTP: token, loopback peers, Host and Origin, headers, production, the SSRF exemption. */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createA2ARouter, A2AOptionsError } from '../../lib';
import { testCard } from '../helpers/fixtures';
import { executor, startInspectedAgent, type InspectedAgent } from './agent';

/** A raw request (fetch cannot set Host or Origin freely), to `address` (a path: a Unix socket) with the headers given. */
function get(
  address: string,
  port: number,
  urlPath: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const target = address.startsWith('/') ? { socketPath: address } : { host: address, port };
    const req = request({ ...target, path: urlPath, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the inspector gate', () => {
  let agent: InspectedAgent;
  beforeAll(async () => {
    agent = await startInspectedAgent();
  });
  afterAll(() => agent.close());
  const local = () => ({ host: `127.0.0.1:${agent.port}` });

  it('logs one URL with the token; the admin API answers 401 without it or with another, 200 with it', async () => {
    expect(agent.url).toBe(`${agent.origin}/agent/_inspector/#token=${agent.token}`);
    expect((await get('127.0.0.1', agent.port, '/agent/_inspector/api/session', local())).status).toBe(401);
    expect((await get('127.0.0.1', agent.port, '/agent/_inspector/api/session', { ...local(), 'x-inspector-token': agent.token + 'x' })).status).toBe(
      401,
    );
    // A cookie is not a token.
    expect(
      (await get('127.0.0.1', agent.port, '/agent/_inspector/api/session', { ...local(), cookie: `x-inspector-token=${agent.token}` })).status,
    ).toBe(401);
    const ok = await get('127.0.0.1', agent.port, '/agent/_inspector/api/session', { ...local(), 'x-inspector-token': agent.token });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toMatchObject({ agentUrl: `${agent.origin}/agent`, push: true });
  });

  it('answers 403 to a foreign Host (DNS rebinding) and a foreign Origin, even with the token', async () => {
    const withToken = { 'x-inspector-token': agent.token };
    const rebound = await get('127.0.0.1', agent.port, '/agent/_inspector/api/session', { ...withToken, host: `attacker.example:${agent.port}` });
    expect(rebound.status).toBe(403);
    const foreign = await get('127.0.0.1', agent.port, '/agent/_inspector/api/session', {
      ...withToken,
      ...local(),
      origin: 'http://attacker.example',
    });
    expect(foreign.status).toBe(403);
    const own = await get('127.0.0.1', agent.port, '/agent/_inspector/api/session', {
      ...withToken,
      ...local(),
      origin: `http://127.0.0.1:${agent.port}`,
    });
    expect(own.status).toBe(200);
    // The page itself is behind the same Host check.
    expect((await get('127.0.0.1', agent.port, '/agent/_inspector/', { host: `attacker.example:${agent.port}` })).status).toBe(403);
  });

  it('serves the page with a strict CSP, no inline script and no CORS headers', async () => {
    const page = await get('127.0.0.1', agent.port, '/agent/_inspector/', { ...local(), origin: `http://127.0.0.1:${agent.port}` });
    expect(page.status).toBe(200);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['content-security-policy']).toContain("connect-src 'self'");
    expect(page.headers['content-security-policy']).not.toContain('unsafe-inline');
    expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(Object.keys(page.headers).filter((h) => h.startsWith('access-control-'))).toEqual([]);
    const bundle = await get('127.0.0.1', agent.port, '/agent/_inspector/app.js', local());
    expect(bundle.status).toBe(200);
    expect(bundle.headers['content-type']).toContain('javascript');
  });

  it('sends the address without its trailing slash to the page, whose URLs are relative to it', async () => {
    const bare = await get('127.0.0.1', agent.port, '/agent/_inspector', local());
    expect(bare.status).toBe(308);
    expect(new URL(String(bare.headers.location), `${agent.origin}/agent/_inspector`).href).toBe(`${agent.origin}/agent/_inspector/`);
  });

  it('leaves A2A requests as they were: the card and JSON-RPC answer as without it', async () => {
    const card = await get('127.0.0.1', agent.port, '/agent/.well-known/agent-card.json', local());
    expect(JSON.parse(card.body).name).toBe(testCard.name);
  });
});

it('answers a Host named in the hosts option, and only those besides the local names', async () => {
  const agent = await startInspectedAgent({ inspector: { hosts: ['devbox'] } });
  try {
    const asked = (host: string) => get('127.0.0.1', agent.port, '/agent/_inspector/api/session', { host, 'x-inspector-token': agent.token });
    expect((await asked(`devbox:${agent.port}`)).status).toBe(200);
    expect((await asked(`localhost:${agent.port}`)).status).toBe(200);
    expect((await asked(`devbox.attacker.example:${agent.port}`)).status).toBe(403);
  } finally {
    await agent.close();
  }
});

describe('a peer that is not on loopback', () => {
  // The same app served on a Unix socket as well: its peers have no loopback address (a real socket,
  // no header or proxy setting involved), so the inspector must refuse them while the agent answers.
  it('gets 403 from every inspector path, with the token and a local Host, while the agent itself answers', async () => {
    const agent = await startInspectedAgent();
    const socketPath = path.join(mkdtempSync(path.join(tmpdir(), 'a2a-inspector-')), 'agent.sock');
    const unix = createServer(agent.server.listeners('request')[0] as RequestListener);
    await new Promise<void>((resolve) => unix.listen(socketPath, resolve));
    try {
      const headers = { host: `localhost:${agent.port}`, 'x-inspector-token': agent.token };
      expect((await get('127.0.0.1', agent.port, '/agent/_inspector/api/session', headers)).status).toBe(200);
      expect((await get(socketPath, 0, '/agent/_inspector/api/session', headers)).status).toBe(403);
      expect((await get(socketPath, 0, '/agent/_inspector/', headers)).status).toBe(403);
      expect((await get(socketPath, 0, '/agent/.well-known/agent-card.json', headers)).status).toBe(200);
    } finally {
      unix.closeAllConnections();
      await new Promise((resolve) => unix.close(resolve));
      rmSync(path.dirname(socketPath), { recursive: true, force: true });
      await agent.close();
    }
  });
});

describe('the inspector option', () => {
  const saved = process.env.NODE_ENV;
  afterEach(() => {
    process.env.NODE_ENV = saved;
  });

  it('is refused under NODE_ENV=production unless allowProduction, and checked like every option', () => {
    process.env.NODE_ENV = 'production';
    expect(() => createA2ARouter({ agentCard: testCard, executor, inspector: true })).toThrow(A2AOptionsError);
    expect(() => createA2ARouter({ agentCard: testCard, executor, inspector: true })).toThrow(/"inspector".*allowProduction/);
    expect(() => createA2ARouter({ agentCard: testCard, executor, inspector: { allowProduction: true }, logger: silent })).not.toThrow();
    process.env.NODE_ENV = saved;
    expect(() => createA2ARouter({ agentCard: testCard, executor, inspector: { allowProdution: true } as never })).toThrow(/allowProduction/);
  });
});

const silent = { debug() {}, info() {}, warn() {}, error() {} };

describe('the SSRF guard with the inspector on', () => {
  let agent: InspectedAgent;
  beforeAll(async () => {
    agent = await startInspectedAgent();
  });
  afterAll(() => agent.close());

  async function createConfig(taskId: string, url: string) {
    const response = await fetch(`${agent.origin}/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'CreateTaskPushNotificationConfig', params: { taskId, url } }),
    });
    return (await response.json()) as { result?: unknown; error?: { message: string } };
  }

  it("lets through the inspector's own receiver on loopback and nothing else there", async () => {
    const sent = await fetch(`${agent.origin}/agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'ask' }] } },
      }),
    });
    const taskId = ((await sent.json()) as { result: { task: { id: string } } }).result.task.id;
    // The inspector learns its port from a request it served.
    const session = await get('127.0.0.1', agent.port, '/agent/_inspector/api/session', {
      host: `127.0.0.1:${agent.port}`,
      'x-inspector-token': agent.token,
    });
    const { receiverUrl } = JSON.parse(session.body) as { receiverUrl: string };
    expect((await createConfig(taskId, receiverUrl)).result).toBeDefined();
    for (const other of [
      `${agent.origin}/agent/_inspector/api/session`,
      `http://127.0.0.1:${agent.port + 1}${new URL(receiverUrl).pathname}`,
      `${agent.origin}/elsewhere`,
    ]) {
      expect((await createConfig(taskId, other)).error?.message).toMatch(/SSRF|non-public/);
    }
  });
});

it("ends the admin API's event streams on router.close(), so an open page does not hold the server open", async () => {
  const agent = await startInspectedAgent();
  try {
    const events = await fetch(`${agent.origin}/agent/_inspector/api/events`, { headers: { 'x-inspector-token': agent.token } });
    expect(events.headers.get('content-type')).toBe('text/event-stream');
    const reader = events.body!.getReader();
    const ended = (async () => {
      while (!(await reader.read()).done);
      return 'ended';
    })();
    await agent.router.close({ graceMs: 100 });
    expect(await ended).toBe('ended');
  } finally {
    await agent.close();
  }
});
