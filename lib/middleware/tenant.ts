/**
 * a2aTenant: resolves the tenant of a request (header, path parameter, token claim, subdomain or a function), validates it, and contributes it to the
 * request's A2A state. The router then rejects a `params.tenant` or REST `/{tenant}` prefix that differs from it.
 */
import { hostnameOf } from '../context/node-request.js';
import { isPublicCardRequest } from './auth.js';
import type { NextFunction, Request, Response } from 'express';
import { z } from 'zod';
import { readA2AState, writableA2AState } from '../context/request-state.js';
import { A2AMiddlewareError, A2AWiringError, reportMiddlewareError, type A2AErrorMode } from './errors.js';
import { isPromiseLike, resolveAndContinue, type MaybePromise } from './maybe-async.js';
import { detectUncalledFactory } from './misuse.js';
import { parseArgument, parseOptions } from '../options.js';
import { brandMiddleware, type A2AMiddleware } from './types.js';

/** A built-in tenant source (from header(), pathParam(), claim(), subdomain()). */
export interface A2ATenantSourceObject {
  readonly kind: 'a2a-tenant-source';
  /** Used in error messages, e.g. `header(x-tenant-id)`. */
  readonly name: string;
  resolve(req: Request): string | undefined;
}

/** A tenant function returns the tenant, or undefined when the request names none. */
export type A2ATenantFunction = (req: Request) => string | undefined | Promise<string | undefined>;

export type A2ATenantSource = A2ATenantSourceObject | A2ATenantFunction;

export interface A2ATenantOptions {
  /** Where the tenant comes from; with several, the first that yields one wins. */
  readonly from: A2ATenantSource | readonly A2ATenantSource[];
  /** Reject requests without a tenant with 400 A2A_TENANT_REQUIRED (default true). */
  readonly required?: boolean;
  /** Maximum tenant length (default 128). */
  readonly maxLength?: number;
  /**
   * Allowed tenant shape (default: letters, digits, '.', '_', '-', starting with a letter or digit). Keep it path-safe: the tenant also appears as
   * the REST `/{tenant}` prefix.
   */
  readonly pattern?: RegExp;
  /** 'respond' (default) writes 400 itself; 'next' passes the error to an A2A-aware error handler. */
  readonly errors?: A2AErrorMode;
}

export const DEFAULT_TENANT_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

function tenantSource(name: string, resolve: (req: Request) => string | undefined): A2ATenantSourceObject {
  return Object.freeze({ kind: 'a2a-tenant-source' as const, name, resolve });
}

/** The tenant from a request header, e.g. header('x-tenant-id'). */
export function header(name: string): A2ATenantSourceObject {
  const headerName = parseArgument('header', 'name', z.string().regex(HEADER_NAME, { error: 'must be an HTTP header name' }), name).toLowerCase();
  return tenantSource(`header(${headerName})`, (req) => {
    const value = req.headers[headerName];
    // Repeated headers are ambiguous; the joined value fails validation.
    return Array.isArray(value) ? value.join(',') : value;
  });
}

/** The tenant from a route parameter of the mount path, e.g. app.use('/t/:tenant', ...) + pathParam('tenant'). */
export function pathParam(name: string): A2ATenantSourceObject {
  const param = parseArgument('pathParam', 'name', z.string().regex(/^[A-Za-z0-9_]+$/, { error: 'must be a route parameter name' }), name);
  return tenantSource(`pathParam(${param})`, (req) => {
    const value = (req.params as Record<string, unknown> | undefined)?.[param];
    return typeof value === 'string' ? value : undefined;
  });
}

/**
 * The tenant from a claim of the caller (set by a2aAuth, which must run first): claim('tid'), or a path into nested claims: claim(['org', 'id']).
 * Claim names may contain dots, so a string is never split.
 */
export function claim(name: string | readonly string[]): A2ATenantSourceObject {
  const path = parseArgument('claim', 'name', z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]), name);
  const keys = typeof path === 'string' ? [path] : path;
  const label = `claim(${keys.join('/')})`;
  return tenantSource(label, (req) => {
    const caller = readA2AState(req)?.caller;
    if (caller === undefined) {
      throw new A2AWiringError('A2A_MIDDLEWARE_ORDER', `${label} reads the caller's claims: install a2aAuth() before a2aTenant()`);
    }
    let value: unknown = caller.claims;
    for (const key of keys) {
      value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    }
    if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
    return typeof value === 'string' ? value : undefined;
  });
}

export interface SubdomainOptions {
  /**
   * The domain under which tenants live, e.g. 'agents.example.com' → 'acme.agents.example.com' is tenant 'acme'. Without it, the leftmost label of a
   * host with at least three labels is used.
   */
  readonly baseDomain?: string;
}

/**
 * The tenant from the subdomain (Express's `req.hostname`, which honours `trust proxy`; elsewhere the Host header's). The Host header is
 * client-controlled: use this for routing, and authorise tenants per caller elsewhere.
 */
export function subdomain(options: SubdomainOptions = {}): A2ATenantSourceObject {
  const { baseDomain } = parseOptions(
    'subdomain',
    z.strictObject({
      baseDomain: z
        .string()
        .transform((value) => value.toLowerCase().replace(/^\./, ''))
        .pipe(z.string().regex(HOSTNAME, { error: 'must be a domain name such as agents.example.com' }))
        .optional(),
    }),
    options,
  );
  return tenantSource(baseDomain ? `subdomain(${baseDomain})` : 'subdomain()', (req) => {
    const host = hostnameOf(req).toLowerCase();
    if (host === '' || host.includes(':') || /^[0-9.]+$/.test(host)) return undefined; // IP literals
    if (baseDomain === undefined) {
      const labels = host.split('.');
      return labels.length >= 3 ? labels[0] : undefined;
    }
    if (!host.endsWith(`.${baseDomain}`)) return undefined;
    const rest = host.slice(0, -(baseDomain.length + 1));
    if (rest.includes('.')) {
      throw new A2AMiddlewareError('A2A_INVALID_TENANT', 'The host has more than one label before the tenant domain');
    }
    return rest;
  });
}

const HELPERS = new Map<unknown, string>([
  [header, "header('x-tenant-id')"],
  [pathParam, "pathParam('tenant')"],
  [claim, "claim('tenant')"],
  [subdomain, 'subdomain()'],
]);

const sourceSchema = z.custom<A2ATenantSource>(
  (value) =>
    !HELPERS.has(value) &&
    (typeof value === 'function' || (value !== null && typeof value === 'object' && (value as { kind?: unknown }).kind === 'a2a-tenant-source')),
  {
    error: (issue) =>
      HELPERS.has(issue.input)
        ? `${(issue.input as { name: string }).name} was passed without being called: write ${HELPERS.get(issue.input)}`
        : "must be a tenant source: header('x-tenant-id'), pathParam('tenant'), claim('tid'), subdomain() or (req) => string | undefined",
  },
);

const tenantSchema = z.strictObject({
  from: z.union([sourceSchema, z.array(sourceSchema).min(1)]),
  required: z.boolean().default(true),
  maxLength: z.number().int().min(1).max(256).default(128),
  pattern: z.instanceof(RegExp, { error: 'must be a RegExp' }).optional(),
  errors: z.enum(['respond', 'next']).default('respond'),
});

function sourceName(source: A2ATenantSource): string {
  return typeof source === 'function' ? `function ${source.name || '(anonymous)'}` : source.name;
}

/**
 * a2aTenant(options): resolves and validates the tenant. Missing (when required) → 400 A2A_TENANT_REQUIRED; malformed → 400 A2A_INVALID_TENANT.
 * JSON-RPC bodies use -32602.
 */
export function a2aTenant(options: A2ATenantOptions): A2AMiddleware {
  // eslint-disable-next-line prefer-rest-params -- how the factory was called (app.use(a2aX) vs a2aX()), not its parameters
  const misused = detectUncalledFactory('a2aTenant', "a2aTenant({ from: header('x-tenant-id') })", arguments);
  if (misused) return misused;

  const parsed = parseOptions('a2aTenant', tenantSchema, options);
  const sources: readonly A2ATenantSource[] = Array.isArray(parsed.from) ? parsed.from : [parsed.from as A2ATenantSource];
  // A global or sticky RegExp would make test() stateful across requests.
  const pattern = parsed.pattern ? new RegExp(parsed.pattern.source, parsed.pattern.flags.replace(/[gy]/g, '')) : DEFAULT_TENANT_PATTERN;
  const { required, maxLength, errors: mode } = parsed;

  /** The checked tenant of one source's answer; undefined to try the next source. */
  function check(value: unknown, source: A2ATenantSource): string | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'string') {
      throw new A2AWiringError('A2A_MIDDLEWARE_MISUSE', `a2aTenant: ${sourceName(source)} returned a ${typeof value}; return a string or undefined`);
    }
    if (value.length === 0) return undefined;
    if (value.length > maxLength || !pattern.test(value)) {
      throw new A2AMiddlewareError(
        'A2A_INVALID_TENANT',
        `The tenant from ${sourceName(source)} is invalid: it must be at most ${maxLength} characters matching ${pattern}`,
      );
    }
    return value;
  }

  const accept = (req: Request, tenant: string | undefined): void => {
    if (tenant !== undefined) writableA2AState(req).tenant = tenant; // contributeA2AState(req, { tenant }), no patch object
  };
  const reject = (err: unknown, req: Request, res: Response, next: NextFunction): void => reportMiddlewareError(err, req, res, next, mode);

  /** Synchronous while the sources answer synchronously (headers, claims, plain functions). */
  function resolveTenant(req: Request, from = 0): MaybePromise<string | undefined> {
    for (let i = from; i < sources.length; i++) {
      const source = sources[i];
      const value: unknown = typeof source === 'function' ? source(req) : source.resolve(req);
      if (isPromiseLike(value)) {
        return Promise.resolve(value).then((answer) => check(answer, source) ?? resolveTenant(req, i + 1));
      }
      const tenant = check(value, source);
      if (tenant !== undefined) return tenant;
    }
    if (required) {
      throw new A2AMiddlewareError('A2A_TENANT_REQUIRED', `A tenant is required (from ${sources.map(sourceName).join(' or ')})`);
    }
    return undefined;
  }

  return brandMiddleware(function a2aTenant(req: Request, res: Response, next: NextFunction): void {
    if (isPublicCardRequest(req)) return next();
    resolveAndContinue(resolveTenant, accept, reject, req, res, next);
  }, 'tenant');
}
