/**
 * The example app: the report agent at /agent with push notifications on, and its background
 * worker. The webhook receiver of the example runs on 127.0.0.1, so that address is allow-listed
 * (the SSRF guard refuses loopback and private addresses by default).
 */
import express from 'express';
import { createA2ARouter, type A2ARouterOptions } from 'a2a-express-kit';
import { reportAgent, reportAgentCard, type ReportJob } from './agent';
import { JobQueue } from './jobs';
import { startReportWorker, type WorkerOptions } from './worker';

export interface PushExampleOptions extends WorkerOptions {
  /** Router options to override (a store, a logger, other push options...). */
  readonly router?: Partial<A2ARouterOptions>;
}

export function createApp(options: PushExampleOptions = {}) {
  const { router: overrides, ...workerOptions } = options;
  const queue = new JobQueue<ReportJob>();
  const agent = createA2ARouter({
    agentCard: reportAgentCard,
    executor: reportAgent(queue),
    pushNotifications: { allow: ['127.0.0.1'] },
    // Background work that never reports back is failed after an hour rather than waited for forever.
    turnTimeoutMs: 60 * 60 * 1000,
    ...overrides,
  });
  const worker = startReportWorker(queue, agent, workerOptions);

  const app = express();
  app.get('/', (_req, res) => {
    res.json({ agent: '/agent', card: '/agent/.well-known/agent-card.json' });
  });
  app.use('/agent', agent);
  app.get('/.well-known/agent-card.json', agent.wellKnownCard);

  /** Running work gets `graceMs` to finish (the worker keeps going meanwhile), then the worker stops. */
  async function close(graceMs = 10_000): Promise<void> {
    await agent.close({ graceMs });
    await worker.stop();
  }
  return { app, agent, close };
}
