/**
 * The public agent card needs no credentials and no tenant (§8.2): a2aAuth and a2aTenant let
 * `GET|HEAD /.well-known/agent-card.json` (relative to where they are mounted) through, and nothing else.
 */
import express from 'express';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib';
import { a2aAuth, a2aTenant, bearerJwt, header } from '../../lib/middleware';
import { testCard } from '../helpers/fixtures';
import { listen, rpc, type Listening } from '../helpers/http';
import { HS_SECRET } from './helpers';

const executor: AgentExecutor = { execute: (_ctx, events) => events.reply('hi') };
const auth = () => a2aAuth({ user: bearerJwt({ key: HS_SECRET }) });
const tenant = () => a2aTenant({ from: header('x-tenant-id') });

const layouts: Array<[string, () => express.Express]> = [
  [
    'in front of the router',
    () => {
      const app = express();
      const agent = createA2ARouter({ agentCard: testCard, executor, logger: silentLogger });
      app.use('/agent', auth(), tenant(), agent);
      app.get('/.well-known/agent-card.json', agent.wellKnownCard);
      return app;
    },
  ],
  [
    'as the router preset',
    () => {
      const app = express();
      const agent = createA2ARouter({
        agentCard: testCard,
        executor,
        logger: silentLogger,
        auth: { user: bearerJwt({ key: HS_SECRET }) },
        tenant: { from: header('x-tenant-id') },
      });
      app.use('/agent', agent);
      app.get('/.well-known/agent-card.json', agent.wellKnownCard);
      return app;
    },
  ],
  [
    'app-wide, before everything',
    () => {
      const app = express();
      const agent = createA2ARouter({ agentCard: testCard, executor, logger: silentLogger });
      app.use(auth(), tenant());
      app.use('/agent', agent);
      app.get('/.well-known/agent-card.json', agent.wellKnownCard);
      return app;
    },
  ],
];

describe.each(layouts)('a2aAuth + a2aTenant %s', (_layout, build) => {
  let server: Listening;
  beforeAll(async () => {
    server = await listen(build());
  });
  afterAll(() => server.close());

  // App-wide, only the card at the origin root is at the middleware's own card path; the copy under
  // /agent is then behind auth like every other route (no suffix match can open other routes).
  const open = _layout.startsWith('app-wide')
    ? ['/.well-known/agent-card.json']
    : ['/agent/.well-known/agent-card.json', '/.well-known/agent-card.json'];
  it.each(open)('GET and HEAD %s need no credentials or tenant', async (path) => {
    const got = await fetch(`${server.baseUrl}${path}`);
    expect(got.status).toBe(200);
    expect(((await got.json()) as { name: string }).name).toBe(testCard.name);
    expect((await fetch(`${server.baseUrl}${path}`, { method: 'HEAD' })).status).toBe(200);
  });

  it('a route that merely ends with the card path is not opened', async () => {
    const got = await fetch(`${server.baseUrl}/files/.well-known/agent-card.json`);
    expect(got.status).toBe(_layout.startsWith('app-wide') ? 401 : 404);
  });

  it('everything else still needs credentials', async () => {
    expect((await rpc(`${server.baseUrl}/agent`, 'ListTasks', {})).status).toBe(401);
    // Only GET and HEAD are exempt: a POST there is refused by a2aAuth in front of the router, and
    // the preset only runs for what the router serves (405 with Allow).
    const post = await fetch(`${server.baseUrl}/agent/.well-known/agent-card.json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect([401, 405]).toContain(post.status);
  });
});
