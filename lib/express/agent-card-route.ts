/**
 * GET <mount>/.well-known/agent-card.json: the public card, with the JSON-RPC interface URL filled
 * in from where the router is mounted unless the card states one. Cached per origin, with ETag.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { cardForBaseUrl, type AgentCardInput } from '../protocol/card.js';
import { baseUrlOf } from './base-url.js';
import { writeJson } from './respond.js';

interface Rendered {
  readonly body: string;
  readonly etag: string;
}

const MAX_CACHED_ORIGINS = 32;

/** If-None-Match per RFC 9110 §13.1.2: a list, `*`, and weak comparison. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
  });
}

/** Serves `card`; `baseUrlFor` says where the JSON-RPC endpoint is, as seen by this request. */
export function agentCardRoute(
  card: AgentCardInput,
  maxAgeSeconds: number,
  baseUrlFor: (req: Request) => string = baseUrlOf,
): (req: Request, res: Response) => void {
  const cache = new Map<string, Rendered>();
  const render = (baseUrl: string): Rendered => {
    let rendered = cache.get(baseUrl);
    if (!rendered) {
      const body = JSON.stringify(cardForBaseUrl(card, baseUrl));
      rendered = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
      if (cache.size >= MAX_CACHED_ORIGINS) cache.delete(cache.keys().next().value!);
      cache.set(baseUrl, rendered);
    }
    return rendered;
  };

  return function a2aAgentCard(req: Request, res: Response): void {
    const { body, etag } = render(baseUrlFor(req));
    res.setHeader('Cache-Control', `public, max-age=${maxAgeSeconds}`);
    res.setHeader('ETag', etag);
    if (matchesEtag(req.get('if-none-match'), etag)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    writeJson(res, 200, body);
  };
}
