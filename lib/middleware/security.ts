/**
 * a2aSecurity: a helmet preset for a JSON + SSE API and a request body size limit answered with an A2A-shaped 413. The limit is recorded per request
 * so the router's body parser enforces the same one on bodies without Content-Length (chunked); see body-limit.ts for bodies the host parsed.
 */
import { validateHeaderName, validateHeaderValue } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import helmet, { type HelmetOptions } from 'helmet';
import { z } from 'zod';
import { A2AOptionsError, closestKey, optionsError, parseOptions } from '../options.js';
import { peekRequestRecord, requestRecord } from '../context/request-state.js';
import { answerBeforeBody, bodyOverLimit } from './body-limit.js';
import { canWriteHeadersDirectly, hasNodeRemoveHeader, outHeaders } from '../internals/node-out-headers.js';
import { A2AMiddlewareError, reportMiddlewareError, type A2AErrorMode } from './errors.js';
import { detectUncalledFactory } from './misuse.js';
import { brandMiddleware, type A2AMiddleware } from './types.js';

/** Default request body limit: 1 MiB (A2A messages may carry inline file parts). */
export const A2A_DEFAULT_BODY_LIMIT = 1024 * 1024;
const MAX_BODY_LIMIT = 1024 * 1024 * 1024;

/**
 * The preset: the headers that act on a JSON or event-stream response. Such a response is never a document, so helmet's document-only headers (COOP,
 * Origin-Agent-Cluster, Referrer-Policy, DNS prefetch, download options, cross-domain policies, the legacy XSS filter) change nothing for it; they
 * are off, and each comes back with an override (`helmet: { referrerPolicy: { policy: … } }`). Kept: a CSP that loads nothing and forbids framing
 * (should a response ever be rendered), its legacy twin X-Frame-Options, nosniff (JSON never read as script or HTML), and a same-origin resource
 * policy (no cross-origin no-cors reads). HSTS is off because it is an origin-wide policy (with includeSubDomains, even domain-wide) that belongs to
 * the app or its edge, not to a router mounted on one path; enable it with `helmet: { strictTransportSecurity: … }`. Fewer headers is also less per
 * response: seven fewer lines are about 250 bytes on every answer.
 */
export const A2A_HELMET_PRESET: Readonly<HelmetOptions> = Object.freeze<HelmetOptions>({
  contentSecurityPolicy: { useDefaults: false, directives: { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] } },
  crossOriginEmbedderPolicy: false,
  crossOriginOpenerPolicy: false,
  crossOriginResourcePolicy: { policy: 'same-origin' },
  originAgentCluster: false,
  referrerPolicy: false,
  strictTransportSecurity: false,
  xContentTypeOptions: true,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xFrameOptions: { action: 'deny' },
  xPermittedCrossDomainPolicies: false,
  xPoweredBy: true,
  xXssProtection: false,
});

export interface A2ASecurityOptions {
  /** Overrides merged over A2A_HELMET_PRESET (per header), or false to skip helmet. */
  readonly helmet?: HelmetOptions | false;
  /** Maximum request body: bytes, or a string such as '512kb', '2mb' (default 1 MiB). */
  readonly bodyLimit?: number | string;
  /** 'respond' (default) writes 413 itself; 'next' passes the error to an A2A-aware error handler. */
  readonly errors?: A2AErrorMode;
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** Parses a byte size: a non-negative integer, or '<n>[b|kb|mb|gb]' (1024-based, like body-parser). */
export function parseByteSize(value: number | string): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?\s*$/i.exec(value);
  if (!match) return undefined;
  const bytes = Math.floor(Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]);
  return bytes > 0 ? bytes : undefined;
}

/** The body limit a2aSecurity set for this request (for the router's body parser), if any. */
export function readA2ABodyLimit(req: object): number | undefined {
  return peekRequestRecord(req)?.bodyLimit;
}

/** The 413 error, shared with the router for bodies its parser finds too large. */
export function bodyTooLargeError(limit: number): A2AMiddlewareError {
  return new A2AMiddlewareError('A2A_BODY_TOO_LARGE', 'Request body too large', { metadata: { limit: String(limit) } });
}

const schema = z.strictObject({
  helmet: z.union([z.literal(false), z.record(z.string(), z.unknown())]).optional(),
  bodyLimit: z
    .union([z.number(), z.string()])
    .transform((value, ctx) => {
      const bytes = parseByteSize(value);
      if (bytes === undefined || bytes > MAX_BODY_LIMIT) {
        ctx.addIssue({ code: 'custom', message: "must be a positive number of bytes up to 1gb, or a size such as '512kb' or '2mb'" });
        return z.NEVER;
      }
      return bytes;
    })
    .default(A2A_DEFAULT_BODY_LIMIT),
  errors: z.enum(['respond', 'next']).default('respond'),
});

// helmet accepts two names for several headers and refuses both at once: merge on canonical names.
const HELMET_ALIASES: Record<string, string> = {
  hsts: 'strictTransportSecurity',
  noSniff: 'xContentTypeOptions',
  dnsPrefetchControl: 'xDnsPrefetchControl',
  ieNoOpen: 'xDownloadOptions',
  frameguard: 'xFrameOptions',
  permittedCrossDomainPolicies: 'xPermittedCrossDomainPolicies',
  hidePoweredBy: 'xPoweredBy',
  xssFilter: 'xXssProtection',
};
const HELMET_KEYS = [
  'contentSecurityPolicy',
  'crossOriginEmbedderPolicy',
  'crossOriginOpenerPolicy',
  'crossOriginResourcePolicy',
  'originAgentCluster',
  'referrerPolicy',
  'strictTransportSecurity',
  'xContentTypeOptions',
  'xDnsPrefetchControl',
  'xDownloadOptions',
  'xFrameOptions',
  'xPermittedCrossDomainPolicies',
  'xPoweredBy',
  'xXssProtection',
];

function buildHelmet(overrides: Record<string, unknown> | undefined): ReturnType<typeof helmet> {
  const merged: Record<string, unknown> = { ...A2A_HELMET_PRESET };
  for (const [key, value] of Object.entries(overrides ?? {})) {
    const canonical = HELMET_ALIASES[key] ?? key;
    if (!HELMET_KEYS.includes(canonical)) {
      const hint = closestKey(key, [...HELMET_KEYS, ...Object.keys(HELMET_ALIASES)]);
      throw new A2AOptionsError(`a2aSecurity: option "helmet.${key}" is unknown${hint ? ` (did you mean "helmet.${hint}"?)` : ''}`);
    }
    merged[canonical] = value;
  }
  try {
    return helmet(merged as HelmetOptions);
  } catch (err) {
    throw optionsError('a2aSecurity', 'helmet', (err as Error).message);
  }
}

type HeaderMiddleware = (req: Request, res: Response, next: (err?: unknown) => void) => void;
type HeaderStep = { readonly apply: (res: Response) => void } | { readonly middleware: HeaderMiddleware };

const hasFunction = (value: unknown): boolean =>
  typeof value === 'function' || (value !== null && typeof value === 'object' && Object.values(value).some(hasFunction));

/** Static options: helmet runs once against a recording response, replayed per request; options with functions (a CSP nonce) keep helmet per request. */
function precomputed(middleware: ReturnType<typeof helmet>, overrides: Record<string, unknown> | undefined): HeaderStep {
  const perRequest = { middleware: middleware as unknown as HeaderMiddleware };
  if (overrides && hasFunction(overrides)) return perRequest;
  // Names are stored lower-cased (as Node keys them anyway), so setHeader has nothing to convert.
  const names: string[] = [];
  const values: string[] = [];
  const removed: string[] = [];
  let failed: unknown;
  const recorder = {
    setHeader: (name: string, value: string) => void (names.push(name.toLowerCase()), values.push(String(value))),
    removeHeader: (name: string) => void removed.push(name),
  };
  middleware({} as never, recorder as never, (err?: unknown) => (failed = err));
  if (failed) return perRequest;
  const viaNode = (res: Response): void => {
    for (let i = 0; i < removed.length; i++) res.removeHeader(removed[i]);
    for (let i = 0; i < names.length; i++) res.setHeader(names[i], values[i]);
  };
  const direct = directHeaderWriter(names, values, removed);
  if (!direct) return { apply: viaNode };
  return {
    apply: (res: Response): void => {
      if (!direct(res)) viaNode(res);
    },
  };
}

// removeHeader sets flags for these instead of only deleting the entry.
const REMOVE_WITH_SIDE_EFFECTS = new Set(['connection', 'content-length', 'transfer-encoding', 'date']);

/** The static headers written as setHeader/removeHeader would (names and values validated once); false when the response needs Node's methods. */
function directHeaderWriter(
  names: readonly string[],
  values: readonly string[],
  removed: readonly string[],
): ((res: Response) => boolean) | undefined {
  if (names.length === 0 || !canWriteHeadersDirectly()) return undefined;
  const removedKeys = removed.map((name) => name.toLowerCase());
  if (removedKeys.some((name) => REMOVE_WITH_SIDE_EFFECTS.has(name))) return undefined;
  try {
    for (let i = 0; i < names.length; i++) {
      validateHeaderName(names[i]);
      validateHeaderValue(names[i], values[i]);
    }
    for (const name of removed) validateHeaderName(name);
  } catch {
    return undefined; // setHeader throws per request, as before
  }
  const removes = removedKeys.length > 0;
  return (res: Response): boolean => {
    if (removes && !hasNodeRemoveHeader(res)) return false;
    const headers = outHeaders(res);
    if (!headers) return false;
    for (let i = 0; i < removedKeys.length; i++) delete headers[removedKeys[i]];
    for (let i = 0; i < names.length; i++) headers[names[i]] = [names[i], values[i]];
    return true;
  };
}

/**
 * a2aSecurity(options): helmet headers, then the size check: a `Content-Length` above the limit is answered 413 A2A_BODY_TOO_LARGE before any byte is
 * read (JSON-RPC body: code -32600, message "Request body too large"), and so is a body the host app already parsed that is over the limit; the limit
 * is recorded for the router's parser, which enforces it on streamed bodies.
 */
export function a2aSecurity(options: A2ASecurityOptions = {}): A2AMiddleware {
  // eslint-disable-next-line prefer-rest-params -- how the factory was called (app.use(a2aX) vs a2aX()), not its parameters
  const misused = detectUncalledFactory('a2aSecurity', 'a2aSecurity()', arguments);
  if (misused) return misused;

  const parsed = parseOptions('a2aSecurity', schema, options);
  const headers = parsed.helmet === false ? undefined : precomputed(buildHelmet(parsed.helmet), parsed.helmet);
  const limit = parsed.bodyLimit;
  const mode = parsed.errors;

  function checkSize(req: Request, res: Response, next: NextFunction): void {
    const record = requestRecord(req);
    const previous = record.bodyLimit;
    record.bodyLimit = previous === undefined ? limit : Math.min(limit, previous);
    // A declared length over the limit, or a body the host already parsed with a larger limit.
    if (bodyOverLimit(req, limit)) {
      answerBeforeBody(req, res);
      reportMiddlewareError(bodyTooLargeError(limit), req, res, next, mode);
      return;
    }
    next();
  }

  // Decided once here, not per request.
  const perRequestHelmet = headers && 'middleware' in headers ? headers.middleware : undefined;
  const applyHeaders = headers && 'apply' in headers ? headers.apply : undefined;

  return brandMiddleware(function a2aSecurity(req: Request, res: Response, next: NextFunction): void {
    if (perRequestHelmet) {
      perRequestHelmet(req, res, (err?: unknown) => (err ? next(err) : checkSize(req, res, next)));
      return;
    }
    if (applyHeaders) applyHeaders(res);
    checkSize(req, res, next);
  }, 'security');
}
