/** GET <mount>/.well-known/agent-card.json: rendered once per origin and shape, with ETag and Last-Modified (§8.6.1). */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { cardForBaseUrl, type AgentCardInput } from '../protocol/card.js';
import type { AgentCard } from '../protocol/schemas.js';
import { addVary, headerOf, originOf } from '../context/node-request.js';
import { baseUrlOf, cardShapeOf, type CardShape, type PresentCardAt } from './card-presenter.js';
import { writeError, writeJson } from '../context/reply.js';

const v1Card: PresentCardAt = (card, baseUrl) => cardForBaseUrl(card, baseUrl);

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

/** If-Modified-Since per RFC 9110 §13.1.3 (an unparsable date is ignored). */
function notModifiedSince(header: string | undefined, modifiedMs: number): boolean {
  if (!header) return false;
  const since = Date.parse(header);
  return !Number.isNaN(since) && modifiedMs <= since;
}

/** Serves `card` at `baseUrlFor(req)`; undefined there means the bare origin, served uncached. */
export function agentCardRoute(
  card: AgentCardInput,
  maxAgeSeconds: number,
  baseUrlFor: (req: IncomingMessage) => string | undefined = baseUrlOf,
  lastModified: Date = new Date(),
  present: PresentCardAt = v1Card,
): (req: IncomingMessage, res: ServerResponse) => void {
  // HTTP dates have whole seconds: compare at that precision.
  const modifiedMs = Math.floor(lastModified.getTime() / 1000) * 1000;
  const lastModifiedHeader = new Date(modifiedMs).toUTCString();
  const varies = present.variesByVersion === true;
  const publicCache = `public, max-age=${maxAgeSeconds}`;
  const cache = new Map<string, Rendered | Promise<Rendered>>();
  const maxCached = varies ? 2 * MAX_CACHED_ORIGINS : MAX_CACHED_ORIGINS;
  const rendering = (served: AgentCard): Rendered => {
    const body = JSON.stringify(served);
    return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
  };
  const render = (baseUrl: string, shape: CardShape): Rendered | Promise<Rendered> => {
    const key = varies ? `${shape} ${baseUrl}` : baseUrl;
    let rendered = cache.get(key);
    if (!rendered) {
      const served = present(card, baseUrl, shape);
      rendered = served instanceof Promise ? served.then(rendering) : rendering(served);
      if (cache.size >= maxCached) cache.delete(cache.keys().next().value!);
      cache.set(key, rendered);
      // A failed signing is not cached: the next request tries again.
      if (rendered instanceof Promise)
        rendered.then(
          (done) => cache.get(key) === rendered && cache.set(key, done),
          () => cache.delete(key),
        );
    }
    return rendered;
  };

  return function a2aAgentCard(req: IncomingMessage, res: ServerResponse): void {
    // Each shape has its own body, hence its own ETag; caches key it by the header (Vary).
    if (varies) addVary(res, 'A2A-Version');
    const baseUrl = baseUrlFor(req);
    const cacheControl = baseUrl === undefined ? 'no-store' : publicCache;
    const rendered = render(baseUrl ?? originOf(req), varies ? cardShapeOf(req) : 'v1.0');
    if (rendered instanceof Promise) {
      rendered.then(
        (done) => serve(req, res, done, cacheControl),
        (error: unknown) => writeError(req, res, error, 'rest'),
      );
      return;
    }
    serve(req, res, rendered, cacheControl);
  };

  function serve(req: IncomingMessage, res: ServerResponse, { body, etag }: Rendered, cacheControl: string): void {
    res.setHeader('Cache-Control', cacheControl);
    res.setHeader('ETag', etag);
    res.setHeader('Last-Modified', lastModifiedHeader);
    // If-None-Match, when sent, decides; If-Modified-Since only counts without it (§13.2.2).
    const ifNoneMatch = headerOf(req, 'if-none-match');
    if (ifNoneMatch !== undefined ? matchesEtag(ifNoneMatch, etag) : notModifiedSince(headerOf(req, 'if-modified-since'), modifiedMs)) {
      res.statusCode = 304;
      res.end();
      return;
    }
    writeJson(res, 200, body);
  }
}
