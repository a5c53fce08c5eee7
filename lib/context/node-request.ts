/** What the router reads of a request by plain Node means (Express's own value when set), so Connect and bare Node hosts work too. */
import type { IncomingMessage } from 'node:http';

/** The Express additions read here; absent on Connect and plain Node requests. */
interface MaybeExpress {
  readonly path?: string;
  readonly baseUrl?: string;
  readonly originalUrl?: string;
  readonly protocol?: string;
  readonly hostname?: string;
  readonly query?: Record<string, unknown>;
}

/** One request header (Node joins repeated ones with ', '), as Express's `req.get` reads it. */
export function headerOf(req: IncomingMessage, lowerCaseName: string): string | undefined {
  const value = req.headers[lowerCaseName];
  return typeof value === 'string' ? value : value?.join(', ');
}

/** The path part of a request target (`/a/b?x` → `/a/b`; absolute-form → its pathname). */
function pathnameOf(url: string): string {
  if (url.charCodeAt(0) === 0x2f /* '/' */) {
    const query = url.indexOf('?');
    return query === -1 ? url : url.slice(0, query);
  }
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** The request path below the mount point: Express's `req.path`, else read from `req.url`. */
export function requestPath(req: IncomingMessage): string {
  const url = req.url ?? '/';
  // The common case costs no URL parsing (Express's `req.path` parses).
  if (url.charCodeAt(0) !== 0x2f /* '/' */) {
    const stated = (req as MaybeExpress).path;
    if (stated !== undefined) return stated;
  }
  return pathnameOf(url);
}

/**
 * Where the handler serving `req` is mounted, from the origin: Express's `req.baseUrl`; on Connect, `req.originalUrl` minus the `req.url` it stripped
 * the mount path from; '' when neither is set.
 */
export function mountPathOf(req: IncomingMessage): string {
  const { baseUrl, originalUrl } = req as MaybeExpress;
  // Express 4 gives `/agent/` for a request to `/agent/` on a router mounted at '/agent/'.
  if (baseUrl !== undefined) return trimTrailingSlash(baseUrl);
  if (originalUrl === undefined || req.url === undefined || originalUrl === req.url) return '';
  const full = pathnameOf(originalUrl);
  const below = pathnameOf(req.url);
  // Connect turns `/agent` (mounted at /agent) into `/`.
  if (full.endsWith(below)) return trimTrailingSlash(full.slice(0, full.length - below.length));
  return below === '/' ? trimTrailingSlash(full) : '';
}

/** `/agent/` → `/agent`; `/` → ''. */
function trimTrailingSlash(path: string): string {
  return path.endsWith('/') ? path.slice(0, -1) : path;
}

/** `http` or `https`: Express's `req.protocol` (which honours `trust proxy`), else the socket's. */
export function protocolOf(req: IncomingMessage): string {
  const stated = (req as MaybeExpress).protocol;
  if (stated !== undefined) return stated;
  return (req.socket as { encrypted?: boolean } | undefined)?.encrypted ? 'https' : 'http';
}

/** `<protocol>://<host>` as this request reached the server. */
export function originOf(req: IncomingMessage): string {
  return `${protocolOf(req)}://${headerOf(req, 'host') ?? 'localhost'}`;
}

/** The host name without port: Express's `req.hostname` (which honours `trust proxy`), else the Host header's. */
export function hostnameOf(req: IncomingMessage): string {
  const stated = (req as MaybeExpress).hostname;
  if (stated !== undefined) return stated;
  const host = headerOf(req, 'host') ?? '';
  // An IPv6 literal keeps its brackets' content; else everything before the port.
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    return end === -1 ? host : host.slice(0, end + 1);
  }
  const colon = host.indexOf(':');
  return colon === -1 ? host : host.slice(0, colon);
}

/** A query parameter from Express's `req.query`, else `req.url`; a repeated one is an array (as Express gives it), undefined when absent. */
export function queryParamOf(req: IncomingMessage, name: string): unknown {
  const query = (req as MaybeExpress).query;
  if (query !== undefined) return query[name];
  const url = req.url ?? '';
  const start = url.indexOf('?');
  if (start === -1) return undefined;
  const values = new URLSearchParams(url.slice(start + 1)).getAll(name);
  return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
}

/** Adds `field` to the response's Vary header (as Express's `res.vary`), once. */
export function addVary(res: { getHeader(name: string): unknown; setHeader(name: string, value: string): unknown }, field: string): void {
  const current = res.getHeader('vary');
  const text = Array.isArray(current) ? current.join(', ') : typeof current === 'string' ? current : '';
  if (text === '') return void res.setHeader('Vary', field);
  const lower = field.toLowerCase();
  if (text.split(',').some((token) => token.trim() === '*' || token.trim().toLowerCase() === lower)) return;
  res.setHeader('Vary', `${text}, ${field}`);
}
