/**
 * The middleware preset: builds security → tracing → auth → tenant in that order from their options (or takes ready-made ones), for `app.use(mount,
 * ...a2aMiddlewareChain(o), router)` and for createA2ARouter's `{ security, tracing, auth, tenant }` options.
 */
import { z } from 'zod';
import { A2AOptionsError, parseOptions } from '../options.js';
import { a2aAuth, type A2AAuthOptions } from './auth.js';
import { a2aSecurity, type A2ASecurityOptions } from './security.js';
import { a2aTenant, type A2ATenantOptions } from './tenant.js';
import { a2aTracing, type A2ATracingOptions } from './tracing.js';
import { a2aMiddlewareKind, type A2AMiddleware, type A2AMiddlewareKind } from './types.js';

export interface A2AMiddlewareChainOptions {
  /** Helmet preset + body limit: `true` for the defaults, options, or a built a2aSecurity(). */
  readonly security?: boolean | A2ASecurityOptions | A2AMiddleware;
  /** Request id + trace context: `true` for the defaults, options, or a built a2aTracing(). */
  readonly tracing?: boolean | A2ATracingOptions | A2AMiddleware;
  /** The caller: a2aAuth options or a built a2aAuth(). */
  readonly auth?: false | A2AAuthOptions | A2AMiddleware;
  /** The tenant: a2aTenant options or a built a2aTenant(). */
  readonly tenant?: false | A2ATenantOptions | A2AMiddleware;
}

const slot = z.union([z.boolean(), z.record(z.string(), z.unknown()), z.custom<A2AMiddleware>((v) => typeof v === 'function')]).optional();

const schema = z.strictObject({ security: slot, tracing: slot, auth: slot, tenant: slot });

/** The order the pieces run in: reject early and cheaply, open the scope, then who, then where. */
const ORDER: readonly A2AMiddlewareKind[] = ['security', 'tracing', 'auth', 'tenant'];

type Build = (options: never) => A2AMiddleware;
const FACTORIES: Record<A2AMiddlewareKind, { build: Build; needsOptions: boolean }> = {
  security: { build: a2aSecurity as Build, needsOptions: false },
  tracing: { build: a2aTracing as Build, needsOptions: false },
  auth: { build: a2aAuth as Build, needsOptions: true },
  tenant: { build: a2aTenant as Build, needsOptions: true },
};

/**
 * The configured pieces, built and in order. Factories' own option errors surface unchanged (they name the factory and the option); a built
 * middleware in the wrong slot is an error.
 */
export function a2aMiddlewareChain(options: A2AMiddlewareChainOptions, factory = 'a2aMiddlewareChain'): A2AMiddleware[] {
  const parsed = parseOptions(factory, schema, options);
  const chain: A2AMiddleware[] = [];
  for (const kind of ORDER) {
    const value = parsed[kind];
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') {
      const actual = a2aMiddlewareKind(value);
      if (actual !== kind) {
        throw new A2AOptionsError(
          `${factory}: option "${kind}": expected options or a built ${factoryName(kind)}(...), got ${actual ? `a ${factoryName(actual)}() middleware` : 'another function'}`,
        );
      }
      chain.push(value as A2AMiddleware);
      continue;
    }
    const { build, needsOptions } = FACTORIES[kind];
    if (value === true) {
      if (needsOptions) throw new A2AOptionsError(`${factory}: option "${kind}": true is not enough; pass ${factoryName(kind)} options`);
      chain.push(build(undefined as never));
      continue;
    }
    chain.push(build(value as never));
  }
  return chain;
}

function factoryName(kind: A2AMiddlewareKind): string {
  return `a2a${kind[0].toUpperCase()}${kind.slice(1)}`;
}
