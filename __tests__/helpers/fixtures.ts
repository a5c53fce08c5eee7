/** A card and a router factory shared by the tests. */
import express from 'express';
import { createA2ARouter, silentLogger, type A2ARouterOptions, type AgentCardInput, type AgentExecutor } from '../../lib';
import { listen, type Listening } from './http';

export const testCard: AgentCardInput = {
  name: 'Test Agent',
  description: 'Agent used by the test suite',
  version: '0.0.1',
  capabilities: { streaming: true },
  defaultInputModes: ['text/plain', 'application/json'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'echo', name: 'Echo', description: 'Echoes', tags: ['test'] }],
};

export interface TestServer extends Listening {
  /** JSON-RPC endpoint. */
  readonly url: string;
  readonly router: ReturnType<typeof createA2ARouter>;
}

/** An Express app with the router at /agent (and optional middlewares before it). */
export async function startAgent(
  executor: AgentExecutor,
  options: Partial<A2ARouterOptions> & {
    before?: express.RequestHandler[];
    hostJson?: boolean;
  } = {},
): Promise<TestServer> {
  const { before = [], hostJson = false, ...routerOptions } = options;
  const app = express();
  if (hostJson) app.use(express.json());
  const router = createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, ...routerOptions });
  app.use('/agent', ...before, router);
  const listening = await listen(app);
  return { ...listening, url: `${listening.baseUrl}/agent`, router };
}
