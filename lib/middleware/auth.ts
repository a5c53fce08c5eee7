/**
 * a2aAuth: turns the app's own authentication result (or a bearer JWT) into the A2A caller, and answers 401 + `WWW-Authenticate` when there is none,
 * unless anonymous access is allowed.
 */
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { type A2ACaller } from '../context/carrier.js';
import { readA2AState, writableA2AState } from '../context/request-state.js';
import { ANONYMOUS_CALLER_PREFIX, ANONYMOUS_SESSION_KEY_PATTERN, createAnonymousCaller } from '../context/anonymous.js';
import { defineCallerSource, invalidCredentials, isCallerSource, snapshotClaims, type A2ACallerInit, type A2ACallerSource } from './caller-source.js';
import { A2AOptionsError, fn, parseOptions } from '../options.js';
import { DEFAULT_REALM, rememberChallenge } from '../context/reply.js';
import { A2AMiddlewareError, A2AWiringError, reportMiddlewareError, type A2AErrorMode } from './errors.js';
import { isPromiseLike, resolveAndContinue, type MaybePromise } from './maybe-async.js';
import { detectUncalledFactory } from './misuse.js';
import { noteAuthRun } from './wiring.js';
import { brandMiddleware, type A2AMiddleware, type A2AMiddlewareLogger } from './types.js';
import type { IncomingMessage } from 'node:http';
import { requestPath } from '../context/node-request.js';

/** What a custom `challenge` function is told about the failure. */
export interface A2AAuthChallengeInput {
  readonly code: 'A2A_AUTH_REQUIRED' | 'A2A_AUTH_INVALID';
  readonly realm: string;
  /** Safe, generic description (never token contents). */
  readonly description?: string;
}

export interface A2AAuthOptions {
  /** Where the caller comes from; several sources are tried in order, the first caller wins. */
  readonly user?: A2ACallerSource | readonly A2ACallerSource[];
  /**
   * Let requests without credentials through as anonymous callers (default false). Requests with credentials that fail to verify are rejected either
   * way. See anonymous.ts for the bucket design; `{ sessionHeader }` lets a client keep one private anonymous bucket with an opaque key.
   */
  readonly allowAnonymous?: boolean | { readonly sessionHeader: string };
  /** `realm` of the default `WWW-Authenticate: Bearer` challenge (default 'a2a'). */
  readonly realm?: string;
  /** Replaces the whole `WWW-Authenticate` value (a string, or built per failure). */
  readonly challenge?: string | ((failure: A2AAuthChallengeInput) => string);
  /** 'respond' (default) writes 401 itself; 'next' passes the error to an A2A-aware error handler. */
  readonly errors?: A2AErrorMode;
  /** Gets one `warn` line per rejected request (code, source, request id; never credentials). */
  readonly logger?: A2AMiddlewareLogger;
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const QUOTABLE = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/; // printable ASCII without '"' and '\'
const PRINTABLE = /^[\x20-\x7e]+$/;

const sourceSchema = z.custom<A2ACallerSource>(isCallerSource, {
  error: (issue) =>
    typeof issue.input === 'function'
      ? `must be a caller source; "${(issue.input as { name?: string }).name || 'function'}" looks like a helper passed without being called (write fromRequestUser(), not fromRequestUser), or wrap a function with fromVerify(fn)`
      : 'must be a caller source: fromRequestUser(), bearerJwt({...}) or fromVerify(fn)',
});

const authSchema = z.strictObject({
  user: z.union([sourceSchema, z.array(sourceSchema).min(1)]).optional(),
  allowAnonymous: z
    .union([z.boolean(), z.strictObject({ sessionHeader: z.string().regex(HEADER_NAME, { error: 'must be an HTTP header name' }) })])
    .default(false),
  realm: z.string().min(1).max(128).regex(QUOTABLE, { error: 'must be printable ASCII without quotes or backslashes' }).default(DEFAULT_REALM),
  challenge: z
    .union([
      z.string().min(1).regex(PRINTABLE, { error: 'must be printable ASCII' }),
      fn<(failure: A2AAuthChallengeInput) => string>('a function (failure) => string'),
    ])
    .optional(),
  errors: z.enum(['respond', 'next']).default('respond'),
  logger: z
    .custom<A2AMiddlewareLogger>((v) => v !== null && typeof v === 'object' && typeof (v as { warn?: unknown }).warn === 'function', {
      error: 'must be a logger with a warn(obj, msg) method (pino-compatible)',
    })
    .optional(),
});

const MAX_CALLER_ID_LENGTH = 512;
// C0 and C1 controls, DEL, and the Unicode line and paragraph separators (log and header injection).
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL_CHARACTERS = /[\x00-\x1f\x7f-\x9f\u2028\u2029]/;

/**
 * The one check of every source's answer (bearerJwt, fromRequestUser, fromVerify, custom sources). A non-string id is a mapping bug (500, to the
 * app's error handler); a string that cannot be a caller id (empty, longer than 512, control characters) came from the credential: 401.
 */
function toCaller(init: A2ACallerInit, source: A2ACallerSource): A2ACaller {
  const { id, displayName, claims } = init as { id?: unknown; displayName?: unknown; claims?: unknown };
  if (typeof id !== 'string') {
    throw new A2AWiringError('A2A_AUTH_MISCONFIGURED', `${source.name}: the caller id must be a string (got ${id === null ? 'null' : typeof id})`);
  }
  if (id.length === 0 || id.length > MAX_CALLER_ID_LENGTH || CONTROL_CHARACTERS.test(id)) {
    throw invalidCredentials(`The credential's subject is not a usable caller id (1-${MAX_CALLER_ID_LENGTH} characters, no control characters)`);
  }
  if (id.startsWith(ANONYMOUS_CALLER_PREFIX)) {
    // Reserved for anonymous buckets: never let an authenticated principal alias one.
    throw invalidCredentials('The credential names a reserved principal');
  }
  // The same object as { id, authenticated, ...displayName?, ...claims? }, without the spreads.
  const hasClaims = claims !== null && typeof claims === 'object';
  const caller: { id: string; authenticated: true; displayName?: string; claims?: Readonly<Record<string, unknown>> } =
    typeof displayName === 'string'
      ? hasClaims
        ? { id, authenticated: true, displayName, claims: claims as Readonly<Record<string, unknown>> }
        : { id, authenticated: true, displayName }
      : hasClaims
        ? { id, authenticated: true, claims: claims as Readonly<Record<string, unknown>> }
        : { id, authenticated: true };
  return Object.freeze(caller);
}

/** More than one `Authorization` header (Node keeps only the first in `req.headers`). */
function repeatedAuthorization(req: Request): boolean {
  if (req.headers.authorization === undefined) return false;
  // Reflect.get: on Express 5's per-request hidden class a plain read misses its inline cache (~3,500 instructions); this costs a tenth of that.
  const raw = Reflect.get(req, 'rawHeaders') as string[];
  let seen = 0;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization' && ++seen > 1) return true;
  }
  return false;
}

function headerValue(req: Request, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(',') : value;
}

type AuthSettings = z.output<typeof authSchema>;
type AllowAnonymous = AuthSettings['allowAnonymous'];
/** Builds the `WWW-Authenticate` value for a failure; `message` describes an invalid credential. */
type ChallengeFor = (code: A2AAuthChallengeInput['code'], message?: string) => string;

function callerSourcesOf(parsed: AuthSettings): readonly A2ACallerSource[] {
  if (parsed.user === undefined && parsed.allowAnonymous === false) {
    throw new A2AOptionsError('a2aAuth: option "user" is required unless allowAnonymous is true (e.g. user: fromRequestUser())');
  }
  return parsed.user === undefined ? [] : Array.isArray(parsed.user) ? parsed.user : [parsed.user as A2ACallerSource];
}

function challengeWriter(realm: string, challenge: AuthSettings['challenge']): ChallengeFor {
  return function challengeFor(code: A2AAuthChallengeInput['code'], message = ''): string {
    // eslint-disable-next-line no-control-regex -- quotes, backslashes and control characters cannot go in a header
    const description = code === 'A2A_AUTH_INVALID' ? message.replace(/["\\\x00-\x1f\x7f]/g, '') : undefined;
    if (typeof challenge === 'string') return challenge;
    if (typeof challenge === 'function') return challenge({ code, realm, description });
    return code === 'A2A_AUTH_INVALID'
      ? `Bearer realm="${realm}", error="invalid_token", error_description="${description}"`
      : `Bearer realm="${realm}"`;
  };
}

/** Stores the caller in the request's A2A state (and, for an anonymous one, the challenge of a later 401). */
function callerAcceptor(challengeFor: ChallengeFor): (req: Request, caller: A2ACaller) => void {
  /** The no-credentials challenge, for a 401 raised after an anonymous caller got through. */
  const anonymousChallenge = (): string | undefined => {
    try {
      const header = challengeFor('A2A_AUTH_REQUIRED');
      return typeof header === 'string' && PRINTABLE.test(header) ? header : undefined;
    } catch {
      return undefined; // the writer falls back to the default challenge
    }
  };
  return (req: Request, caller: A2ACaller): void => {
    writableA2AState(req).caller = caller; // contributeA2AState(req, { caller }) without the patch object
    if (!caller.authenticated) rememberChallenge(req, anonymousChallenge);
  };
}

/** The first source's caller, else an anonymous one where allowed; synchronous while the sources are (no promise on the common path). */
function callerIdentifier(sources: readonly A2ACallerSource[], anonymous: AllowAnonymous): (req: Request) => MaybePromise<A2ACaller> {
  const sessionHeader = typeof anonymous === 'object' ? anonymous.sessionHeader.toLowerCase() : undefined;

  function identify(req: Request, from = 0): MaybePromise<A2ACaller> {
    if (from === 0 && repeatedAuthorization(req)) {
      // Ambiguous: proxies and libraries disagree on which one counts.
      throw invalidCredentials('The request carries more than one Authorization header');
    }
    for (let i = from; i < sources.length; i++) {
      const source = sources[i];
      const init = source.resolve(req);
      if (isPromiseLike(init)) {
        return Promise.resolve(init).then((value) => (value !== undefined ? toCaller(value, source) : identify(req, i + 1)));
      }
      if (init !== undefined) return toCaller(init, source);
    }
    return withoutCredentials(req);
  }

  function withoutCredentials(req: Request): A2ACaller {
    if (anonymous === false) throw new A2AMiddlewareError('A2A_AUTH_REQUIRED');
    const key = sessionHeader === undefined ? undefined : headerValue(req, sessionHeader);
    if (key === undefined || key === '') return createAnonymousCaller();
    if (!ANONYMOUS_SESSION_KEY_PATTERN.test(key)) {
      throw invalidCredentials('The anonymous session key must be 32-256 characters of [A-Za-z0-9._~+/=-]');
    }
    return createAnonymousCaller(key);
  }

  return identify;
}

/** Shapes a failure: adds the challenge to a 401, logs one line, and answers (or passes it on). */
function failureReporter(
  challengeFor: ChallengeFor,
  logger: A2AMiddlewareLogger | undefined,
  mode: A2AErrorMode,
): (err: unknown, req: Request, res: Response, next: NextFunction) => void {
  return function fail(err: unknown, req: Request, res: Response, next: NextFunction): void {
    let reported = err;
    try {
      if (err instanceof A2AMiddlewareError && (err.reason === 'A2A_AUTH_REQUIRED' || err.reason === 'A2A_AUTH_INVALID')) {
        const header = challengeFor(err.reason, err.message);
        if (typeof header !== 'string' || !PRINTABLE.test(header)) {
          throw new A2AWiringError('A2A_MIDDLEWARE_MISUSE', 'a2aAuth: the challenge function must return a printable ASCII header value');
        }
        reported = new A2AMiddlewareError(err.reason, err.message, {
          headers: { ...err.headers, 'WWW-Authenticate': header },
          metadata: err.metadata,
          cause: err.cause,
        });
      }
      if (logger && err instanceof A2AMiddlewareError) {
        // One line, no stack: the jose code (e.g. ERR_JWS_SIGNATURE_VERIFICATION_FAILED) says why.
        const cause = (err.cause as { code?: unknown } | undefined)?.code;
        logger.warn(
          { reason: err.reason, requestId: readA2AState(req)?.requestId, detail: err.message, ...(typeof cause === 'string' ? { cause } : {}) },
          'A2A authentication failed',
        );
      }
    } catch (failure) {
      next(failure);
      return;
    }
    reportMiddlewareError(reported, req, res, next, mode);
  };
}

/**
 * a2aAuth(options): resolves the caller and contributes it to the request's A2A state.
 *
 * Failures: no credentials → 401 `A2A_AUTH_REQUIRED` with `WWW-Authenticate: Bearer realm="…"` (unless `allowAnonymous`); credentials that fail → 401
 * `A2A_AUTH_INVALID` with `error="invalid_token"`; an unreachable JWKS → 503. The body is a JSON-RPC error envelope (code -32600, `error.data[0]` an
 * ErrorInfo whose `reason` is the code) for JSON-RPC posts, and a `google.rpc.Status` for REST routes.
 */
export function a2aAuth(options: A2AAuthOptions): A2AMiddleware {
  // eslint-disable-next-line prefer-rest-params -- how the factory was called (app.use(a2aX) vs a2aX()), not its parameters
  const misused = detectUncalledFactory('a2aAuth', 'a2aAuth({ user: fromRequestUser() })', arguments);
  if (misused) return misused;

  const parsed = parseOptions('a2aAuth', authSchema, options);
  const sources = callerSourcesOf(parsed);
  const challengeFor = challengeWriter(parsed.realm, parsed.challenge);
  const identify = callerIdentifier(sources, parsed.allowAnonymous);
  const accept = callerAcceptor(challengeFor);
  const fail = failureReporter(challengeFor, parsed.logger, parsed.errors);

  return brandMiddleware(function a2aAuth(req: Request, res: Response, next: NextFunction): void {
    if (isPublicCardRequest(req)) return next();
    noteAuthRun(req);
    resolveAndContinue(identify, accept, fail, req, res, next);
  }, 'auth');
}

export type RequestUserProvider = 'auto' | 'passport' | 'express-jwt' | 'express-openid-connect';

export interface FromRequestUserOptions {
  /** 'passport' → `req.user`, 'express-jwt' → `req.auth`, 'express-openid-connect' → `req.oidc.user`; 'auto' (default) tries them in that order. */
  readonly from?: RequestUserProvider;
  /**
   * Maps the found object to the caller. Default: id = `sub`, else `id` (string or number); displayName =
   * `displayName`/`name`/`preferred_username`/`username`; claims = a shallow copy of the object (use `map` to pick claims when `req.user` is a
   * database row).
   */
  readonly map?: (user: Record<string, unknown>, req: Request) => A2ACallerInit | undefined;
}

const fromRequestUserSchema = z.strictObject({
  from: z.enum(['auto', 'passport', 'express-jwt', 'express-openid-connect']).default('auto'),
  map: fn<NonNullable<FromRequestUserOptions['map']>>('a function (user, req) => ({ id, displayName?, claims? })').optional(),
});

type UserLookup = (req: Request) => { where: string; user: Record<string, unknown> } | undefined;

function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
}

const lookups: Record<Exclude<RequestUserProvider, 'auto'>, UserLookup> = {
  passport: (req) => {
    const r = req as Request & { user?: unknown; isAuthenticated?: () => boolean };
    if (typeof r.isAuthenticated === 'function' && !r.isAuthenticated()) return undefined;
    const user = asObject(r.user);
    return user && { where: 'req.user', user };
  },
  'express-jwt': (req) => {
    const user = asObject((req as Request & { auth?: unknown }).auth);
    return user && { where: 'req.auth', user };
  },
  'express-openid-connect': (req) => {
    const oidc = asObject((req as Request & { oidc?: unknown }).oidc);
    if (!oidc) return undefined;
    if (typeof oidc.isAuthenticated === 'function' && !(oidc.isAuthenticated as () => boolean)()) return undefined;
    const user = asObject(oidc.user);
    return user && { where: 'req.oidc.user', user };
  },
};

function defaultUserMap(user: Record<string, unknown>): A2ACallerInit | undefined {
  const raw = typeof user.sub === 'string' && user.sub !== '' ? user.sub : user.id;
  const id = typeof raw === 'string' ? raw : typeof raw === 'number' && Number.isFinite(raw) ? String(raw) : undefined;
  if (id === undefined || id === '') return undefined;
  const displayName = [user.displayName, user.name, user.preferred_username, user.username].find(
    (value): value is string => typeof value === 'string' && value !== '',
  );
  return { id, ...(displayName === undefined ? {} : { displayName }), claims: snapshotClaims(user) };
}

/**
 * Reads the principal the app's own authentication left on the request: passport (`req.user`), express-jwt (`req.auth`), express-openid-connect
 * (`req.oidc.user`). No object there means no credentials; the app's auth middleware is responsible for verifying them.
 */
export function fromRequestUser(options: FromRequestUserOptions = {}): A2ACallerSource {
  const { from, map } = parseOptions('fromRequestUser', fromRequestUserSchema, options);
  const order = from === 'auto' ? (['passport', 'express-jwt', 'express-openid-connect'] as const) : [from];
  return defineCallerSource('fromRequestUser', (req) => {
    for (const provider of order) {
      const found = lookups[provider](req);
      if (!found) continue;
      const init = map ? map(found.user, req) : defaultUserMap(found.user);
      if (init === undefined) {
        if (map) return undefined;
        throw new A2AWiringError(
          'A2A_AUTH_MISCONFIGURED',
          `fromRequestUser: ${found.where} has no string "sub" or "id"; pass map: (user) => ({ id: ... })`,
        );
      }
      return init;
    }
    return undefined;
  });
}

/**
 * The result of a custom verify function: a caller; `undefined`/`null` when the request carries no credentials (anonymous may apply); `false` when it
 * carries credentials that are not valid (401). A thrown error is a server error (500) unless it is an A2AMiddlewareError.
 */
export type A2AVerifyResult = A2ACallerInit | undefined | null | false;

export interface FromVerifyOptions {
  /** Name used in errors and logs (default 'fromVerify'). */
  readonly name?: string;
}

/** A caller source from a custom `verify(req)` (API keys, mTLS subject, an upstream gateway header). */
export function fromVerify(verify: (req: Request) => A2AVerifyResult | Promise<A2AVerifyResult>, options: FromVerifyOptions = {}): A2ACallerSource {
  const { verify: checked, name } = parseOptions(
    'fromVerify',
    z.strictObject({ verify: fn<typeof verify>('a function (req) => caller | undefined | false'), name: z.string().min(1).default('fromVerify') }),
    { verify, ...options },
  );
  const interpret = (result: A2AVerifyResult): A2ACallerInit | undefined => {
    if (result === undefined || result === null) return undefined;
    if (result === false) throw invalidCredentials('The credentials are not valid');
    return result;
  };
  // A synchronous verify keeps the whole auth step synchronous.
  return defineCallerSource(name, (req) => {
    const result = checked(req);
    return isPromiseLike(result) ? Promise.resolve(result).then(interpret) : interpret(result);
  });
}

// The public card is served without credentials or a tenant (§8.2); only the card path relative to the mount is exempt, so an app-wide a2aAuth never
// opens other routes ending with the same path.
export const isPublicCardRequest = (req: IncomingMessage): boolean =>
  (req.method === 'GET' || req.method === 'HEAD') && requestPath(req) === '/.well-known/agent-card.json';
