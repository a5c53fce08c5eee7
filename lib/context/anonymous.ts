/** Anonymous callers: ANONYMOUS_CALLER (no auth: one shared bucket) and a2aAuth's allowAnonymous ones (a fresh id, or one per session key). */
import { createHash, randomUUID } from 'node:crypto';
import type { A2ACaller } from './carrier.js';

/** Without auth every caller is the same anonymous principal (one bucket); a2aAuth changes that. */
export const ANONYMOUS_CALLER: A2ACaller = Object.freeze({ id: 'anonymous', authenticated: false });

/** Prefix of every anonymous caller id; auth.ts refuses authenticated ids that start with it, so no principal lands in an anonymous bucket. */
export const ANONYMOUS_CALLER_PREFIX = 'anonymous:';

/** What an anonymous session key must look like (opaque, URL/header safe, high entropy). */
export const ANONYMOUS_SESSION_KEY_PATTERN = /^[A-Za-z0-9._~+/=-]{32,256}$/;

/**
 * An anonymous caller: a fresh, unshared id per call, or, given a session key that matches ANONYMOUS_SESSION_KEY_PATTERN, an id derived from its hash
 * (the key is a bearer capability: never kept).
 */
export function createAnonymousCaller(sessionKey?: string): A2ACaller {
  if (sessionKey === undefined) {
    return Object.freeze({ id: `${ANONYMOUS_CALLER_PREFIX}${randomUUID()}`, authenticated: false });
  }
  if (!ANONYMOUS_SESSION_KEY_PATTERN.test(sessionKey)) {
    throw new TypeError('createAnonymousCaller(): the session key must be 32-256 characters of [A-Za-z0-9._~+/=-]');
  }
  const digest = createHash('sha256').update('a2a-express-kit/anonymous-session\0').update(sessionKey).digest('base64url');
  return Object.freeze({ id: `${ANONYMOUS_CALLER_PREFIX}session:${digest}`, authenticated: false });
}

export function isAnonymousCallerId(id: string): boolean {
  return id.startsWith(ANONYMOUS_CALLER_PREFIX);
}
