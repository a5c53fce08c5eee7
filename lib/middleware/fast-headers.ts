/**
 * Writing response headers the way Node's setHeader does, minus what setHeader repeats on every
 * call: validating the name and value (the callers' are checked once, or valid by construction)
 * and lower-casing the name. On the stack's hot path a dozen setHeader calls per request were a
 * large share of its cost. Only for a plain Node response (setHeader, and removeHeader where it
 * matters, not replaced; headers not sent): anything else goes through setHeader as before.
 */
import { OutgoingMessage } from 'node:http';
import type { Response } from 'express';

/** A response's headers as Node keeps them: `[name as given, value]` under the lower-cased name. */
export type OutHeaders = Record<string, [string, string]>;

// The symbol under which Node keeps them (null until the first header); what setHeader writes and
// getHeader, hasHeader, removeHeader and the header block read. Looked up once, when first needed.
let key: symbol | null | undefined;
function outHeadersKey(): symbol | null {
  if (key === undefined) {
    const probe = new OutgoingMessage();
    const found = Object.getOwnPropertySymbols(probe).find((symbol) => symbol.description === 'kOutHeaders' && (probe as never)[symbol] === null);
    key = found !== undefined && keepsHeadersAsExpected(probe, found) ? found : null;
  }
  return key;
}

/**
 * Checks on a probe response that this Node keeps headers exactly as written here: setHeader stores
 * `[name, value]` under the lower-cased name, and one written that way directly is what getHeader,
 * getHeaderNames and removeHeader see. Any difference (another Node's layout): setHeader is used.
 */
function keepsHeadersAsExpected(probe: OutgoingMessage, symbol: symbol): boolean {
  try {
    probe.setHeader('X-Probe', 'set');
    const headers = (probe as unknown as Record<symbol, Record<string, unknown>>)[symbol];
    const stored = headers?.['x-probe'];
    if (!Array.isArray(stored) || stored.length !== 2 || stored[0] !== 'X-Probe' || stored[1] !== 'set') return false;
    headers['x-direct'] = ['X-Direct', 'direct'];
    if (probe.getHeader('x-direct') !== 'direct' || !probe.getHeaderNames().includes('x-direct')) return false;
    probe.removeHeader('X-Direct');
    return probe.getHeader('x-direct') === undefined;
  } catch {
    return false;
  }
}

/** Whether this Node version keeps headers where outHeaders() looks (else callers use setHeader). */
export function canWriteHeadersDirectly(): boolean {
  return outHeadersKey() !== null;
}

const { setHeader, removeHeader } = OutgoingMessage.prototype;

/**
 * Whether removeHeader is Node's own. Read with Reflect.get: Express 5 gives each response a hidden
 * class of its own, so a plain `res.removeHeader` read misses its inline cache on every request
 * (about 4,000 instructions); nothing else on the request's path reads that name, so the cache
 * entry would never be used again, and Reflect.get's uncached lookup is far cheaper.
 */
export function hasNodeRemoveHeader(res: Response): boolean {
  return Reflect.get(res, 'removeHeader') === removeHeader;
}

/**
 * The object to write headers into, created as setHeader would create it; undefined when the
 * response is not a plain Node response or its headers are sent (use setHeader: it throws then).
 */
export function outHeaders(res: Response): OutHeaders | undefined {
  const symbol = key;
  if (!symbol || res.setHeader !== setHeader || res.headersSent) return undefined;
  const slot = res as unknown as Record<symbol, OutHeaders | null | undefined>;
  const headers = slot[symbol];
  if (headers !== null) return headers;
  return (slot[symbol] = { __proto__: null } as unknown as OutHeaders);
}

/** res.setHeader(name, value) for a name and value known to be valid; `lowerName` is name.toLowerCase(). */
export function setValidHeader(res: Response, lowerName: string, name: string, value: string): void {
  const headers = outHeaders(res);
  if (headers) headers[lowerName] = [name, value];
  else res.setHeader(name, value);
}
