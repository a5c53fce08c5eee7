/**
 * Caller sources: how a2aAuth finds out who sent a request (req.user, a bearer JWT, a custom check). A source answers a caller, `undefined` for "no
 * credentials here", or throws A2A_AUTH_INVALID.
 */
import type { Request } from 'express';
import { A2AMiddlewareError } from './errors.js';

/** What a source or a `map`/`verify` function returns for an identified caller. */
export interface A2ACallerInit {
  /** Stable principal id (tasks are owned by it); must not start with `anonymous:`. */
  readonly id: string;
  readonly displayName?: string;
  readonly claims?: Readonly<Record<string, unknown>>;
}

export interface A2ACallerSource {
  readonly kind: 'a2a-caller-source';
  /** Used in error messages and logs, e.g. `bearerJwt`. */
  readonly name: string;
  /**
   * The caller, `undefined` when the request carries no credentials for this source, or throws an A2AMiddlewareError `A2A_AUTH_INVALID` when it
   * carries credentials that do not verify.
   */
  resolve(req: Request): A2ACallerInit | undefined | Promise<A2ACallerInit | undefined>;
}

export function defineCallerSource(
  name: string,
  resolve: (req: Request) => A2ACallerInit | undefined | Promise<A2ACallerInit | undefined>,
): A2ACallerSource {
  return Object.freeze({ kind: 'a2a-caller-source' as const, name, resolve });
}

export function isCallerSource(value: unknown): value is A2ACallerSource {
  return (
    value !== null &&
    typeof value === 'object' &&
    (value as { kind?: unknown }).kind === 'a2a-caller-source' &&
    typeof (value as { resolve?: unknown }).resolve === 'function'
  );
}

/** The error a source throws for credentials that are present but not acceptable. */
export function invalidCredentials(description: string, cause?: unknown): A2AMiddlewareError {
  return new A2AMiddlewareError('A2A_AUTH_INVALID', description, { cause });
}

/** A frozen shallow copy of an object's own enumerable properties, for `claims`. */
export function snapshotClaims(value: object): Readonly<Record<string, unknown>> {
  return Object.freeze({ ...(value as Record<string, unknown>) });
}
