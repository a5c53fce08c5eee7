/** Where the router is mounted, learnt as an Express sub-app is (see internals/express-sub-app.ts). */
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from '../options.js';
import { statedJsonRpcInterface } from '../protocol/card.js';
import type { AgentCard } from '../protocol/schemas.js';
import { rememberMountLayer } from '../middleware/wiring.js';
import { mountAsSubApp } from '../internals/express-sub-app.js';

export interface MountableApp {
  handle: (req: Request, res: Response, next: NextFunction) => void;
  set: () => unknown;
  emit: (event: string, parent: unknown) => boolean;
  mountpath?: string | string[];
  parent?: { path?: () => string };
}

/**
 * Makes `router` mountable; returns its path through the parent apps (no trailing `/`), undefined
 * before an app mounted it (a Router emits no 'mount'). Warns when the card's JSON-RPC URL points elsewhere.
 */
export function makeMountable(
  router: MountableApp & ((req: Request, res: Response, next: NextFunction) => void),
  card: AgentCard,
  checkCard: boolean,
  logger: Logger,
): () => string | undefined {
  return mountAsSubApp(router, (parent, mountpath) => {
    rememberMountLayer(router, parent);
    if (checkCard) warnOnMountMismatch(mountpath, card, logger);
  });
}

function warnOnMountMismatch(mountpath: string | string[] | undefined, card: AgentCard, logger: Logger): void {
  const stated = statedJsonRpcInterface(card);
  if (!stated || typeof mountpath !== 'string') return;
  let statedPath: string;
  try {
    statedPath = new URL(stated.url).pathname;
  } catch {
    logger.warn({ url: stated.url }, 'the agent card states a JSON-RPC interface URL that is not an absolute URL');
    return;
  }
  const trim = (p: string) => (p.length > 1 && p.endsWith('/') ? p.slice(0, -1) : p);
  if (trim(statedPath) !== trim(mountpath)) {
    logger.warn(
      { statedUrl: stated.url, mountPath: mountpath },
      `the agent card's JSON-RPC interface URL (${stated.url}) does not match where the router is mounted (${mountpath}); clients will post to the wrong place`,
    );
  }
}
