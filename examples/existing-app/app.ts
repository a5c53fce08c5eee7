/**
 * An existing Express app that adds an agent: its own routes and its own passport-jwt auth stay as
 * they were; the agent is mounted at /agent behind that auth, and its card is public at the root.
 */
import express from 'express';
import { a2aAuth, a2aTenant, a2aTracing, createA2ARouter, fromRequestUser, header } from 'a2a-express-kit';
import { createExpenseAgent, type AuditEntry } from './agent';
import { createPassport, DEV_JWT_SECRET, type AppUser } from './auth';
import { expenseAgentCard as agentCard } from './card';

export interface ExistingAppOptions {
  /** HS256 secret of the app's tokens (default: DEV_JWT_SECRET, dev only). */
  readonly jwtSecret?: string;
  /** Where the agent's audit lines go (default: stdout as JSON). */
  readonly audit?: (entry: AuditEntry) => void;
}

export function createApp(options: ExistingAppOptions = {}) {
  const passport = createPassport(options.jwtSecret ?? DEV_JWT_SECRET);
  // eslint-disable-next-line no-console
  const executor = createExpenseAgent(options.audit ?? ((entry) => console.log(JSON.stringify({ audit: entry }))));
  const requireUser = passport.authenticate('jwt', { session: false });
  const agent = createA2ARouter({ agentCard, executor });

  const app = express();

  // The app's own routes, as before.
  app.get('/', (_req, res) => {
    res.json({ app: 'expenses', agent: '/agent', card: '/.well-known/agent-card.json' });
  });
  app.get('/api/me', requireUser, (req, res) => {
    res.json(req.user as AppUser);
  });

  // The agent: the app's auth first (401 from passport without a valid token), then the request
  // scope (request id, trace context), the caller from req.user, the tenant from a header. Tasks are
  // private to (tenant, user). The header is the client's word: where users belong to some tenants
  // only, check membership too (e.g. a tenant function that reads req.user).
  app.use(
    '/agent',
    passport.authenticate('jwt', { session: false }),
    a2aTracing(),
    a2aAuth({ user: fromRequestUser() }),
    a2aTenant({ from: header('x-tenant-id') }),
    agent,
  );

  // Discovery at the origin root, outside the app's auth: the card is public (§8.2).
  app.get('/.well-known/agent-card.json', agent.wellKnownCard);
  return { app, agent };
}
