/**
 * bearerJwt: a caller source that verifies `Authorization: Bearer <JWT>` with jose against a key,
 * an inline JWKS, or a remote JWKS URL.
 */
import { KeyObject, createPublicKey, createSecretKey } from 'node:crypto';
import type { Request } from 'express';
import { createLocalJWKSet, createRemoteJWKSet, jwtVerify } from 'jose';
import type { JWK, JWTHeaderParameters, JWTPayload, JWTVerifyGetKey, JWTVerifyOptions, KeyLike } from 'jose';
import { z } from 'zod';
import { defineCallerSource, invalidCredentials, type A2ACallerInit, type A2ACallerSource } from './caller-source.js';
import { A2AOptionsError } from '../options.js';
import { A2AMiddlewareError } from './errors.js';
import { fn, optionsError, parseOptions } from './options.js';

export interface BearerJwtOptions {
  /**
   * Verification key: a public `KeyObject`/`CryptoKey`, a public JWK, a PEM public key or
   * certificate, or an HMAC secret as bytes (at least 32). Exactly one of key, jwks, jwksUrl.
   */
  readonly key?: KeyLike | JWK | Uint8Array | string;
  /** An inline JSON Web Key Set `{ keys: [...] }`. */
  readonly jwks?: { readonly keys: readonly JWK[] };
  /** A remote JWKS (https, or http on a loopback host), fetched and cached by jose. */
  readonly jwksUrl?: string | URL;
  /** Remote JWKS fetch timeout in ms (default 5000). */
  readonly jwksTimeoutMs?: number;
  readonly issuer?: string | readonly string[];
  readonly audience?: string | readonly string[];
  /** Accepted `alg` values (recommended; e.g. ['RS256']). */
  readonly algorithms?: readonly string[];
  /** Clock skew tolerance in seconds (default 0). */
  readonly clockTolerance?: number;
  /** Maximum token age (from `iat`) in seconds. */
  readonly maxTokenAge?: number;
  /** Claims that must be present. */
  readonly requiredClaims?: readonly string[];
  /**
   * Maps the verified payload to the caller. Default: id = `sub` (required), displayName =
   * `name`/`preferred_username`, claims = the payload.
   */
  readonly toCaller?: (payload: JWTPayload, header: JWTHeaderParameters) => A2ACallerInit | undefined;
}

const JWS_ALGORITHMS = ['HS256', 'HS384', 'HS512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;
const MIN_SECRET_BYTES = 32;
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

const stringOrList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

const schema = z.strictObject({
  key: z.unknown().optional(),
  jwks: z.object({ keys: z.array(z.record(z.string(), z.unknown())) }).optional(),
  jwksUrl: z.union([z.string(), z.instanceof(URL)]).optional(),
  jwksTimeoutMs: z.number().int().positive().max(60_000).optional(),
  issuer: stringOrList.optional(),
  audience: stringOrList.optional(),
  algorithms: z.array(z.enum(JWS_ALGORITHMS)).min(1).optional(),
  clockTolerance: z.number().nonnegative().max(3600).optional(),
  maxTokenAge: z.number().positive().optional(),
  requiredClaims: z.array(z.string().min(1)).optional(),
  toCaller: fn<NonNullable<BearerJwtOptions['toCaller']>>('a function (payload, header) => ({ id, displayName?, claims? })').optional(),
});

function optionError(option: string, message: string): A2AOptionsError {
  return optionsError('bearerJwt', option, message);
}

function checkSecretLength(bytes: number): void {
  if (bytes < MIN_SECRET_BYTES) {
    throw optionError('key', `an HMAC secret must be at least ${MIN_SECRET_BYTES} bytes (got ${bytes})`);
  }
}

/** Turns every accepted key form into what jose verifies with; throws at construction. */
function normalizeKey(key: unknown): KeyLike | Uint8Array {
  if (key instanceof Uint8Array) {
    checkSecretLength(key.byteLength);
    return key;
  }
  if (key instanceof KeyObject) {
    if (key.type === 'private') throw optionError('key', 'pass the public key, not a private key');
    if (key.type === 'secret') checkSecretLength(key.symmetricKeySize ?? 0);
    return key;
  }
  const CryptoKeyClass = (globalThis as { CryptoKey?: abstract new () => { type: string } }).CryptoKey;
  if (CryptoKeyClass && key instanceof CryptoKeyClass) {
    if (key.type === 'private') throw optionError('key', 'pass the public key, not a private key');
    return key;
  }
  if (typeof key === 'string') {
    if (!key.includes('-----BEGIN')) {
      throw optionError('key', 'a string must be a PEM public key or certificate; for an HMAC secret pass new TextEncoder().encode(secret)');
    }
    if (/PRIVATE KEY-----/.test(key)) throw optionError('key', 'pass the public key, not a private key');
    try {
      return createPublicKey(key);
    } catch (err) {
      throw optionError('key', `not a readable PEM public key (${(err as Error).message})`);
    }
  }
  if (key !== null && typeof key === 'object' && typeof (key as JWK).kty === 'string') {
    const jwk = key as JWK;
    if (jwk.d !== undefined) throw optionError('key', 'pass the public JWK, not a private one (it has "d")');
    try {
      if (jwk.kty === 'oct') {
        const secret = createSecretKey(Buffer.from(jwk.k ?? '', 'base64url'));
        checkSecretLength(secret.symmetricKeySize ?? 0);
        return secret;
      }
      return createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
    } catch (err) {
      if (err instanceof A2AOptionsError) throw err;
      throw optionError('key', `not a usable JWK (${(err as Error).message})`);
    }
  }
  throw optionError('key', 'must be a KeyObject, CryptoKey, JWK, PEM string, or Uint8Array secret');
}

function parseJwksUrl(value: string | URL): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw optionError('jwksUrl', 'is not an absolute URL');
  }
  const loopback = url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw optionError('jwksUrl', 'must use https (http is accepted only for loopback hosts)');
  }
  return url;
}

// jose failures that say "our key material is unavailable" rather than "this token is bad".
const UNAVAILABLE_CODES = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC']);

/**
 * A caller source for `Authorization: Bearer <JWT>`. No Authorization header, or another scheme,
 * means "no credentials" (another source or anonymous access may apply); a Bearer token that does
 * not verify (signature, `exp`/`nbf`, issuer, audience, algorithm, no `sub`) is A2A_AUTH_INVALID.
 */
export function bearerJwt(options: BearerJwtOptions): A2ACallerSource {
  const parsed = parseOptions('bearerJwt', schema, options);
  const given = (['key', 'jwks', 'jwksUrl'] as const).filter((name) => parsed[name] !== undefined);
  if (given.length !== 1) {
    throw optionError(given[1] ?? 'key', `set exactly one of "key", "jwks" or "jwksUrl"${given.length ? ` (got ${given.join(', ')})` : ''}`);
  }

  let verifyWith: KeyLike | Uint8Array | JWTVerifyGetKey;
  const remote = parsed.jwksUrl !== undefined;
  if (parsed.key !== undefined) {
    verifyWith = normalizeKey(parsed.key);
  } else if (parsed.jwks !== undefined) {
    try {
      verifyWith = createLocalJWKSet(parsed.jwks as unknown as { keys: JWK[] });
    } catch (err) {
      throw optionError('jwks', (err as Error).message);
    }
  } else {
    verifyWith = createRemoteJWKSet(parseJwksUrl(parsed.jwksUrl as string | URL), {
      timeoutDuration: parsed.jwksTimeoutMs ?? 5000,
    });
  }

  const verifyOptions: JWTVerifyOptions = {
    ...(parsed.issuer === undefined ? {} : { issuer: parsed.issuer }),
    ...(parsed.audience === undefined ? {} : { audience: parsed.audience }),
    ...(parsed.algorithms === undefined ? {} : { algorithms: parsed.algorithms }),
    ...(parsed.clockTolerance === undefined ? {} : { clockTolerance: parsed.clockTolerance }),
    ...(parsed.maxTokenAge === undefined ? {} : { maxTokenAge: parsed.maxTokenAge }),
    ...(parsed.requiredClaims === undefined ? {} : { requiredClaims: parsed.requiredClaims }),
  };
  const toCaller = parsed.toCaller;

  async function verify(token: string) {
    return typeof verifyWith === 'function'
      ? jwtVerify(token, verifyWith, verifyOptions)
      : jwtVerify(token, verifyWith, verifyOptions);
  }

  return defineCallerSource('bearerJwt', async (req: Request) => {
    const header = req.headers.authorization;
    if (header === undefined || !/^\s*bearer(?:\s|$)/i.test(header)) return undefined;
    const match = BEARER.exec(header.trim());
    if (!match) throw invalidCredentials('The Authorization header is not a well-formed bearer token');

    let result: Awaited<ReturnType<typeof verify>>;
    try {
      result = await verify(match[1]);
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      const fromJose = typeof code === 'string' && code.startsWith('ERR_J');
      if ((fromJose && UNAVAILABLE_CODES.has(code)) || (!fromJose && remote)) {
        throw new A2AMiddlewareError('A2A_AUTH_UNAVAILABLE', 'The token signing keys could not be loaded', { cause: err });
      }
      if (!fromJose) throw err;
      throw invalidCredentials(code === 'ERR_JWT_EXPIRED' ? 'The access token expired' : 'The access token is invalid', err);
    }

    const { payload, protectedHeader } = result;
    if (toCaller) {
      const init = toCaller(payload, protectedHeader);
      if (init === undefined) throw invalidCredentials('The access token does not identify a caller');
      return init;
    }
    if (typeof payload.sub !== 'string' || payload.sub === '') {
      throw invalidCredentials('The access token has no subject');
    }
    const name = [payload.name, payload.preferred_username].find(
      (value): value is string => typeof value === 'string' && value !== '',
    );
    return { id: payload.sub, ...(name === undefined ? {} : { displayName: name }), claims: Object.freeze({ ...payload }) };
  });
}
