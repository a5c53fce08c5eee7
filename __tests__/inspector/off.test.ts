/** With the option off, none of lib/inspector is loaded and the router runs no check for it; on, it is loaded when first used. */
import express from 'express';
import { createA2ARouter, silentLogger } from '../../lib';
import { testCard } from '../helpers/fixtures';
import { listen, rpc, V1 } from '../helpers/http';
import { executor } from './agent';

// Every module of lib/inspector notes here when it is first required (then loads as it is).
const loaded: string[] = [];
jest.mock('../../lib/inspector/server', () => (loaded.push('server'), jest.requireActual('../../lib/inspector/server')));
jest.mock('../../lib/inspector/gate', () => (loaded.push('gate'), jest.requireActual('../../lib/inspector/gate')));
jest.mock('../../lib/inspector/feed', () => (loaded.push('feed'), jest.requireActual('../../lib/inspector/feed')));
jest.mock('../../lib/inspector/card-checks', () => (loaded.push('card-checks'), jest.requireActual('../../lib/inspector/card-checks')));

async function serve(inspector: boolean) {
  const app = express();
  const router = createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, ...(inspector ? { inspector } : {}) });
  app.use('/agent', router);
  return { server: await listen(app), router };
}

it('loads nothing of the inspector when off, however the router is used', async () => {
  const { server, router } = await serve(false);
  try {
    const sent = await rpc(
      `${server.baseUrl}/agent`,
      'SendMessage',
      { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
      { headers: V1 },
    );
    expect(sent.body.result.task.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await fetch(`${server.baseUrl}/agent/.well-known/agent-card.json`)).status).toBe(200);
    // Off, /_inspector is just a path the router does not serve.
    expect((await fetch(`${server.baseUrl}/agent/_inspector/`)).status).toBe(404);
    // The request path goes straight to the A2A routes: the router is that function, with no wrapper.
    expect(router.name).toBe('a2aRouter');
    expect(loaded).toEqual([]);
  } finally {
    await server.close();
  }
});

it('loads it when on (the check above would see it)', async () => {
  const { server, router } = await serve(true);
  try {
    expect(router.name).toBe('a2aRouterWithInspector');
    expect((await fetch(`${server.baseUrl}/agent/_inspector/`)).status).toBe(200);
    expect(loaded).toEqual(expect.arrayContaining(['server', 'gate', 'feed', 'card-checks']));
  } finally {
    await server.close();
  }
});
