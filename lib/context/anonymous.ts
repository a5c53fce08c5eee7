/**
 * Anonymous callers. Tasks are owned by (tenant, caller.id), so an anonymous id decides who can see
 * a task again. Without auth, every caller is ANONYMOUS_CALLER (one shared bucket). With a2aAuth's
 * allowAnonymous:
 * - Without a session key, every request gets a fresh id `anonymous:<uuid>`: nothing an anonymous
 *   request creates is reachable by any later request (including its own): a fire-and-forget or
 *   blocking/streaming call only. Anonymous callers never share one bucket.
 * - With `allowAnonymous: { sessionHeader }`, a client may present a high-entropy opaque key
 *   (32–256 chars) in that header; its id is `anonymous:session:<base64url(sha256(key))>`. Only
 *   holders of the same key share a bucket, so the key acts like a bearer capability; the key itself
 *   is never stored or logged, only its hash.
 * - The `anonymous:` prefix is reserved: an authenticated caller whose id starts with it is rejected
 *   (see auth.ts), so no authenticated principal can land in an anonymous bucket or vice versa.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { A2ACaller } from './carrier.js';

/** Without auth every caller is the same anonymous principal (one bucket); a2aAuth changes that. */
export const ANONYMOUS_CALLER: A2ACaller = Object.freeze({ id: 'anonymous', authenticated: false });

/** Prefix of every anonymous caller id; authenticated ids may not start with it. */
export const ANONYMOUS_CALLER_PREFIX = 'anonymous:';

/** What an anonymous session key must look like (opaque, URL/header safe, high entropy). */
export const ANONYMOUS_SESSION_KEY_PATTERN = /^[A-Za-z0-9._~+/=-]{32,256}$/;

/**
 * An anonymous caller: a fresh, unshared id per call, or, given a session key that matches
 * ANONYMOUS_SESSION_KEY_PATTERN, an id derived from its hash.
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
