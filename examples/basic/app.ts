/** The example app: an ordinary Express app with the agent mounted at /agent. */
import express from 'express';
import { createA2ARouter, type A2ARouterOptions } from 'a2a-express-kit';
import { travelAgentCard } from './card';
import { travelAgent } from './agent';

export function createApp(overrides: Partial<A2ARouterOptions> = {}) {
  const app = express();
  const agent = createA2ARouter({ agentCard: travelAgentCard, executor: travelAgent, ...overrides });
  app.get('/', (_req, res) => {
    res.json({ agent: '/agent', card: '/agent/.well-known/agent-card.json' });
  });
  app.use('/agent', agent);
  // Discovery at the origin root too (§8.2), pointing at /agent.
  app.get('/.well-known/agent-card.json', agent.wellKnownCard);
  return { app, agent };
}
