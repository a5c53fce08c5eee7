/** Private reach: Node's `kOutHeaders`, where static headers are written directly, validated once, sparing setHeader's work. */
// Only on a plain Node response whose layout a start-up probe confirmed (node-out-headers.test.ts names a change).
// Against setHeader: Message -2.9 %, GetTask -1.2 % instructions; writeHead merges through setHeader, so it cannot help.
import { OutgoingMessage } from 'node:http';
import type { Response } from 'express';

/** A response's headers as Node keeps them: `[name as given, value]` under the lower-cased name. */
type OutHeaders = Record<string, [string, string]>;

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

/** What differs, on a probe response, from the layout written here (`[name, value]` under the lower-cased name). */
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

/** What this Node does differently from what the fast path relies on, for the probe test. */
export function nodeOutHeadersDrift(): string | undefined {
  outHeadersKey();
  return drift;
}

export function canWriteHeadersDirectly(): boolean {
  return outHeadersKey() !== null;
}

const { setHeader, removeHeader } = OutgoingMessage.prototype;

/**
 * Whether removeHeader is Node's own. Reflect.get: under Express 5 each response has its own hidden class,
 * so a plain read misses its inline cache every request (~4,000 instructions); an uncached lookup is cheaper.
 */
export function hasNodeRemoveHeader(res: Response): boolean {
  return Reflect.get(res, 'removeHeader') === removeHeader;
}

/** The object to write headers into, as setHeader creates it; undefined off a plain Node response or once sent. */
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
