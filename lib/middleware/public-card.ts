/** The public agent card must be served without credentials or a tenant (§8.2): auth and tenant let it through. */
import type { Request } from 'express';

export const isPublicCardRequest = (req: Request): boolean =>
  (req.method === 'GET' || req.method === 'HEAD') && req.path.endsWith('/.well-known/agent-card.json');
