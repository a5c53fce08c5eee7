/**
 * Private reach: Node's `kOutHeaders`, where setHeader keeps a response's headers. The stack's static
 * headers go there directly, validated once, sparing setHeader's per-call work (measured gain: commit).
 */
import { OutgoingMessage } from 'node:http';
import type { Response } from 'express';

// Only for a plain Node response (setHeader, and removeHeader where it matters, not replaced; headers
// not sent), and only where a start-up probe finds this layout; __tests__/unit/node-out-headers.test.ts
// fails naming this file and the Node version when a release changes it. Against plain setHeader
// (callgrind, bench/tools/instructions.sh, node --single-threaded): Message -39k (-2.9 %), GetTask
// -15k (-1.2 %) instructions/request; writeHead(status, headers) cannot do better, since Express has
// set X-Powered-By by then and writeHead merges through setHeader once any header was set.

/** A response's headers as Node keeps them: `[name as given, value]` under the lower-cased name. */
type OutHeaders = Record<string, [string, string]>;

// The symbol under which Node keeps them (null until the first header); what setHeader writes and
// getHeader, hasHeader, removeHeader and the header block read. Looked up once, when first needed.
let key: symbol | null | undefined;
let drift: string | undefined;
function outHeadersKey(): symbol | null {
  if (key === undefined) {
    const probe = new OutgoingMessage();
    const found = Object.getOwnPropertySymbols(probe).find((symbol) => symbol.description === 'kOutHeaders' && (probe as never)[symbol] === null);
    drift = found === undefined ? 'a new OutgoingMessage has no kOutHeaders symbol holding null' : headersLayoutDrift(probe, found);
    key = drift === undefined ? found! : null;
  }
  return key;
}

/**
 * Checks on a probe response that this Node keeps headers exactly as written here: setHeader stores
 * `[name, value]` under the lower-cased name, and one written that way directly is what getHeader,
 * getHeaderNames and removeHeader see. Returns what differs (another Node's layout), if anything.
 */
function headersLayoutDrift(probe: OutgoingMessage, symbol: symbol): string | undefined {
  try {
    probe.setHeader('X-Probe', 'set');
    const headers = (probe as unknown as Record<symbol, Record<string, unknown>>)[symbol];
    const stored = headers?.['x-probe'];
    if (!Array.isArray(stored) || stored.length !== 2 || stored[0] !== 'X-Probe' || stored[1] !== 'set') {
      return "setHeader('X-Probe', 'set') does not store ['X-Probe', 'set'] under 'x-probe' in kOutHeaders";
    }
    headers['x-direct'] = ['X-Direct', 'direct'];
    if (probe.getHeader('x-direct') !== 'direct' || !probe.getHeaderNames().includes('x-direct')) {
      return 'getHeader/getHeaderNames do not see a header written into kOutHeaders directly';
    }
    probe.removeHeader('X-Direct');
    return probe.getHeader('x-direct') === undefined ? undefined : 'removeHeader does not remove a header written into kOutHeaders directly';
  } catch (err) {
    return `the probe threw: ${(err as Error).message}`;
  }
}

/**
 * What this Node does differently from what the fast path relies on (undefined when nothing): for
 * the probe test, which fails with it where the kit would quietly fall back to setHeader.
 */
export function nodeOutHeadersDrift(): string | undefined {
  outHeadersKey();
  return drift;
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
