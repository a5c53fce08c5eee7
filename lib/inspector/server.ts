/**
 * The inspector's HTTP side below `<mount>/_inspector`: the page and its bundle, the admin API
 * (token in a header) and the test webhook receiver, every path behind the gate (./gate.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../options.js';
import type { AgentCard } from '../protocol/schemas.js';
import type { TaskStore } from '../engine/seams/task-store.js';
import type { PushConfigStore } from '../engine/seams/push-config-store.js';
import { mountPathOf, originOf, requestPath } from '../context/node-request.js';
import { checkCard, publicKeyOf } from './card-checks.js';
import { InspectorFeed, type FeedEntry } from './feed.js';
import { gate, SECURITY_HEADERS } from './gate.js';

export interface InspectorDeps {
  readonly token: string;
  readonly hosts: readonly string[];
  readonly receiverPath: string;
  readonly logger: Logger;
  readonly card: AgentCard;
  readonly taskStore: TaskStore;
  readonly pushConfigs: PushConfigStore | undefined;
  /** The `signCard.key` option, to verify the served card's signatures. */
  readonly signingKey: unknown;
}

export interface InspectorServer {
  readonly feed: InspectorFeed;
  handle(req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void): void;
  /** Ends the open event streams (router.close(): an open page must not hold the server open). */
  close(): void;
}

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A2A inspector</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="app.css"><script src="app.js" defer></script></head>
<body><noscript>The inspector needs JavaScript.</noscript></body></html>
`;

/** The bundle: beside the built package (dist/inspector), or, from the sources, in dist/ of the repository. */
function assetDir(): string | undefined {
  return [join(__dirname, 'inspector'), join(__dirname, '..', '..', 'dist', 'inspector')].find((dir) => existsSync(join(dir, 'app.js')));
}

const TYPES: Record<string, string> = { 'app.js': 'text/javascript; charset=utf-8', 'app.css': 'text/css; charset=utf-8' };

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

const json = (res: ServerResponse, status: number, value: unknown) => send(res, status, 'application/json', JSON.stringify(value));

function readBody(req: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) req.destroy(new Error('body too large'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export function createInspector(deps: InspectorDeps): InspectorServer {
  const feed = new InspectorFeed();
  const signingKey = publicKeyOf(deps.signingKey);
  const assets = new Map<string, Buffer>();
  const dir = assetDir();
  if (dir) for (const name of Object.keys(TYPES)) assets.set(name, readFileSync(join(dir, name)));
  else deps.logger.warn({ code: 'A2A_INSPECTOR_NO_BUNDLE' }, 'the inspector bundle is missing: run npm run build');
  const streams = new Set<ServerResponse>();
  const received: Array<{ at: string; headers: IncomingMessage['headers']; body: unknown }> = [];

  const api = async (req: IncomingMessage, res: ServerResponse, route: string, query: URLSearchParams): Promise<void> => {
    const base = originOf(req) + mountPathOf(req);
    if (route === 'session' && req.method === 'GET') {
      return json(res, 200, { agentUrl: base, receiverUrl: base + deps.receiverPath, push: deps.pushConfigs !== undefined });
    }
    if (route === 'card-check' && req.method === 'POST') {
      const { v1, v03 } = JSON.parse(await readBody(req, 1 << 20)) as { v1: unknown; v03: unknown };
      return json(res, 200, await checkCard(v1, v03, base, signingKey));
    }
    if (route === 'tasks' && req.method === 'GET') {
      const text = (name: string) => query.get(name) ?? undefined;
      const page = feed.tasks({
        state: text('state'),
        contextId: text('contextId'),
        owner: text('owner'),
        tenant: text('tenant'),
        since: text('since'),
        offset: Math.max(0, Number(query.get('offset') ?? 0) || 0),
        limit: Math.min(200, Math.max(1, Number(query.get('limit') ?? 50) || 50)),
      });
      return json(res, 200, page);
    }
    if (route === 'task' && req.method === 'GET') {
      const scope = { tenant: query.get('tenant') ?? '', owner: query.get('owner') ?? '' };
      const taskId = query.get('id') ?? '';
      // The store read in the task's own scope, as its owner's requests read it.
      const stored = await deps.taskStore.get(scope, taskId);
      if (!stored) return json(res, 404, { error: 'no such task in that scope' });
      const pushConfigs = deps.pushConfigs ? await deps.pushConfigs.list(scope, taskId) : [];
      const events = feed.since(0, taskId);
      return json(res, 200, { ...stored, scope, pushConfigs, events });
    }
    if (route === 'receiver' && req.method === 'GET') return json(res, 200, received);
    if (route === 'events' && req.method === 'GET') return stream(res, Number(query.get('after') ?? 0) || 0);
    json(res, 404, { error: `no admin route ${req.method} ${route}` });
  };

  /** Server-sent events of the feed: the kept entries after `after`, then each as it happens. */
  const stream = (res: ServerResponse, after: number): void => {
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    // Headers now, not with the first event: the page knows at once that it is live.
    res.flushHeaders();
    const write = (entry: FeedEntry) => res.write(`id: ${entry.seq}\ndata: ${JSON.stringify(entry)}\n\n`);
    for (const entry of feed.since(after)) write(entry);
    const stop = feed.listen(write);
    const ping = setInterval(() => res.write(': ping\n\n'), 15_000);
    ping.unref();
    streams.add(res);
    res.on('close', () => {
      stop();
      clearInterval(ping);
      streams.delete(res);
    });
  };

  const receive = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = await readBody(req, 1 << 20);
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text
    }
    const entry = { at: new Date().toISOString(), headers: req.headers, body };
    received.push(entry);
    if (received.length > 500) received.shift();
    feed.note('push-received', { ...entry, taskId: taskIdOf(body) });
    res.writeHead(204, SECURITY_HEADERS).end();
  };

  return {
    feed,
    close: () => {
      for (const res of streams) res.end();
    },
    handle(req, res, next) {
      const below = requestPath(req).slice('/_inspector'.length);
      // The page's URLs are relative to `<mount>/_inspector/`.
      if (below === '' && req.method === 'GET') return void res.writeHead(308, { ...SECURITY_HEADERS, location: '_inspector/' }).end();
      const path = below || '/';
      const isReceiver = '/_inspector' + path === deps.receiverPath;
      const refusal = gate(req, { token: deps.token, hosts: deps.hosts, needsToken: path.startsWith('/api/'), isReceiver });
      if (refusal) return json(res, refusal.status, { error: refusal.reason });
      if (isReceiver && req.method === 'POST') return void receive(req, res).catch(next);
      if (req.method === 'GET' && (path === '/' || path === '/index.html')) return send(res, 200, 'text/html; charset=utf-8', PAGE);
      const asset = req.method === 'GET' ? assets.get(path.slice(1)) : undefined;
      if (asset) return send(res, 200, TYPES[path.slice(1)], asset);
      if (path.startsWith('/api/')) {
        const url = new URL(req.url ?? '/', 'http://x');
        return void api(req, res, path.slice('/api/'.length), url.searchParams).catch((error: unknown) =>
          json(res, 400, { error: error instanceof Error ? error.message : String(error) }),
        );
      }
      json(res, 404, { error: 'not found' });
    },
  };
}

/** The task a push notification is about (a StreamResponse's task or update). */
function taskIdOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  for (const value of Object.values(body as Record<string, unknown>)) {
    if (typeof value === 'object' && value !== null) {
      const v = value as Record<string, unknown>;
      if (typeof v.taskId === 'string') return v.taskId;
      if (typeof v.id === 'string') return v.id;
    }
  }
  return undefined;
}
