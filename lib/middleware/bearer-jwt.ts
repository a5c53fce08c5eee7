/** bearerJwt: a caller source that verifies `Authorization: Bearer <JWT>` with jose against a key, an inline JWKS, or a remote JWKS URL. */
import { KeyObject, createPublicKey, createSecretKey } from 'node:crypto';
import type { Request } from 'express';
import type * as Jose from 'jose';
import type { JWK, JWTHeaderParameters, JWTPayload, JWTVerifyGetKey, JWTVerifyOptions, KeyLike } from 'jose';
import { z } from 'zod';
import { defineCallerSource, invalidCredentials, type A2ACallerInit, type A2ACallerSource } from './caller-source.js';
import { A2AOptionsError, fn, optionsError, parseOptions } from '../options.js';
import { A2AMiddlewareError } from './errors.js';

export interface BearerJwtOptions {
  /**
   * Verification key: a public `KeyObject`/`CryptoKey`, a public JWK, a PEM public key or certificate, or an HMAC secret as bytes (at least 32).
   * Exactly one of key, jwks, jwksUrl.
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
  /**
   * Accepted `alg` values, e.g. ['RS256']. Default: every algorithm the key can verify (an RSA key RS256-512 and PS256-512, an EC key the ES
   * algorithm of its curve, an Ed25519/Ed448 key EdDSA, a secret HS256-512; for a JWKS, those of its keys). Values the key cannot verify are refused.
   */
  readonly algorithms?: readonly string[];
  /**
   * Refuse tokens without an `exp` claim (default true): such a token, once issued, is accepted forever. `false` accepts them (e.g. tokens of an
   * internal issuer that never sets `exp`).
   */
  readonly requireExpiration?: boolean;
  /** Clock skew tolerance in seconds (default 0). */
  readonly clockTolerance?: number;
  /** Maximum token age (from `iat`) in seconds. */
  readonly maxTokenAge?: number;
  /** Claims that must be present. */
  readonly requiredClaims?: readonly string[];
  /** Maps the verified payload to the caller. Default: id = `sub` (required), displayName = `name`/`preferred_username`, claims = the payload. */
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
  requireExpiration: z.boolean().default(true),
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

type JwsAlgorithm = (typeof JWS_ALGORITHMS)[number];

const HMAC: readonly JwsAlgorithm[] = ['HS256', 'HS384', 'HS512'];
const RSA: readonly JwsAlgorithm[] = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
const RSA_PSS: readonly JwsAlgorithm[] = ['PS256', 'PS384', 'PS512'];
// Node's curve names (KeyObject) and the JOSE/WebCrypto ones (JWK, CryptoKey).
const EC_CURVES: Readonly<Record<string, JwsAlgorithm>> = {
  prime256v1: 'ES256',
  'P-256': 'ES256',
  secp384r1: 'ES384',
  'P-384': 'ES384',
  secp521r1: 'ES512',
  'P-521': 'ES512',
};
const SHA_BITS: Readonly<Record<string, string>> = { 'SHA-256': '256', 'SHA-384': '384', 'SHA-512': '512' };

const isJwsAlgorithm = (value: unknown): value is JwsAlgorithm => (JWS_ALGORITHMS as readonly unknown[]).includes(value);

/** What a key can verify; an empty list for a key jose cannot verify JWS with. */
function algorithmsOfKey(key: KeyLike | Uint8Array): readonly JwsAlgorithm[] {
  if (key instanceof Uint8Array) return HMAC;
  if (key instanceof KeyObject) {
    if (key.type === 'secret') return HMAC;
    switch (key.asymmetricKeyType) {
      case 'rsa':
        return RSA;
      case 'rsa-pss':
        return RSA_PSS;
      case 'ec': {
        const alg = EC_CURVES[key.asymmetricKeyDetails?.namedCurve ?? ''];
        return alg ? [alg] : [];
      }
      case 'ed25519':
      case 'ed448':
        return ['EdDSA'];
      default:
        return [];
    }
  }
  // A CryptoKey is bound to one algorithm (and hash) when it is imported.
  const algorithm = (key as { algorithm?: { name?: string; hash?: { name?: string }; namedCurve?: string } }).algorithm ?? {};
  const bits = SHA_BITS[algorithm.hash?.name ?? ''];
  const candidate =
    algorithm.name === 'HMAC'
      ? `HS${bits}`
      : algorithm.name === 'RSASSA-PKCS1-v1_5'
        ? `RS${bits}`
        : algorithm.name === 'RSA-PSS'
          ? `PS${bits}`
          : algorithm.name === 'ECDSA'
            ? EC_CURVES[algorithm.namedCurve ?? '']
            : algorithm.name === 'Ed25519' || algorithm.name === 'Ed448'
              ? 'EdDSA'
              : undefined;
  return isJwsAlgorithm(candidate) ? [candidate] : [];
}

function algorithmsOfJwk(jwk: JWK): readonly JwsAlgorithm[] {
  const byType: readonly JwsAlgorithm[] =
    jwk.kty === 'RSA'
      ? RSA
      : jwk.kty === 'EC'
        ? EC_CURVES[jwk.crv ?? '']
          ? [EC_CURVES[jwk.crv ?? '']]
          : []
        : jwk.kty === 'OKP' && (jwk.crv === 'Ed25519' || jwk.crv === 'Ed448')
          ? ['EdDSA']
          : []; // 'oct' keys cannot be selected from a JWKS by jose
  return typeof jwk.alg === 'string' ? byType.filter((alg) => alg === jwk.alg) : byType;
}

/** The stated algorithms (the key must verify them) or all it can: else HS256 against an RSA key makes jose throw a TypeError, not a failure. */
function allowedAlgorithms(stated: readonly JwsAlgorithm[] | undefined, usable: readonly JwsAlgorithm[], option: 'key' | 'jwks'): JwsAlgorithm[] {
  if (usable.length === 0) {
    throw optionError(
      option,
      option === 'key'
        ? 'is not a key JWS tokens can be verified with (RSA, EC P-256/384/521, Ed25519/Ed448 or an HMAC secret)'
        : 'has no key JWS tokens can be verified with (RSA, EC P-256/384/521, Ed25519/Ed448)',
    );
  }
  if (stated === undefined) return [...usable];
  const unusable = stated.filter((alg) => !usable.includes(alg));
  if (unusable.length > 0) {
    throw optionError('algorithms', `${unusable.join(', ')} cannot be verified with the given ${option} (it verifies ${usable.join(', ')})`);
  }
  return [...stated];
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

/** A safe description of why a token failed (sent in `error_description`; never token contents). */
function describeFailure(err: unknown): string {
  const { code, claim, reason } = err as { code?: unknown; claim?: unknown; reason?: unknown };
  if (code === 'ERR_JWT_EXPIRED') return 'The access token expired';
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED' && claim === 'exp' && reason === 'missing') return 'The access token has no expiration time (exp)';
  return 'The access token is invalid';
}

// jose failures that say "our key material is unavailable" rather than "this token is bad".
const UNAVAILABLE_CODES = new Set(['ERR_JWKS_TIMEOUT', 'ERR_JWKS_INVALID', 'ERR_JOSE_GENERIC']);

type BearerJwtSettings = z.output<typeof schema>;

/** What tokens are verified with, and the algorithms accepted (undefined: jose's choice, for a remote set). */
interface KeyMaterial {
  /** Built from jose once it is loaded (on the first token); the options were checked at construction. */
  readonly verifyWith: (jose: typeof Jose) => KeyLike | Uint8Array | JWTVerifyGetKey;
  readonly algorithms: JwsAlgorithm[] | undefined;
  /** A remote JWKS: a failure that is not jose's own means the keys could not be loaded. */
  readonly remote: boolean;
}

/** The one of key, jwks and jwksUrl that was given, checked and turned into what jose verifies with. */
function keyMaterialOf(parsed: BearerJwtSettings): KeyMaterial {
  const given = (['key', 'jwks', 'jwksUrl'] as const).filter((name) => parsed[name] !== undefined);
  if (given.length !== 1) {
    throw optionError(given[1] ?? 'key', `set exactly one of "key", "jwks" or "jwksUrl"${given.length ? ` (got ${given.join(', ')})` : ''}`);
  }
  if (parsed.key !== undefined) {
    const verifyWith = normalizeKey(parsed.key);
    const jwkAlg = (parsed.key as { alg?: unknown } | null)?.alg;
    const usable = algorithmsOfKey(verifyWith).filter((alg) => typeof jwkAlg !== 'string' || alg === jwkAlg);
    return { verifyWith: () => verifyWith, algorithms: allowedAlgorithms(parsed.algorithms, usable, 'key'), remote: false };
  }
  if (parsed.jwks !== undefined) {
    // The schema has checked the set's shape ({ keys: [objects] }), all jose's createLocalJWKSet checks.
    const keys = parsed.jwks.keys as unknown as JWK[];
    const algorithms = allowedAlgorithms(parsed.algorithms, [...new Set(keys.flatMap(algorithmsOfJwk))], 'jwks');
    return { verifyWith: (jose) => jose.createLocalJWKSet({ keys }), algorithms, remote: false };
  }
  // A remote set's keys are unknown until fetched; jose picks a key of the token's algorithm's type, so a mismatch already fails verification.
  const url = parseJwksUrl(parsed.jwksUrl as string | URL);
  const timeoutDuration = parsed.jwksTimeoutMs ?? 5000;
  return { verifyWith: (jose) => jose.createRemoteJWKSet(url, { timeoutDuration }), algorithms: parsed.algorithms, remote: true };
}

function verifyOptionsOf(parsed: BearerJwtSettings, algorithms: JwsAlgorithm[] | undefined): JWTVerifyOptions {
  const verifyOptions: JWTVerifyOptions = {
    ...(parsed.issuer === undefined ? {} : { issuer: parsed.issuer }),
    ...(parsed.audience === undefined ? {} : { audience: parsed.audience }),
    ...(algorithms === undefined ? {} : { algorithms }),
    ...(parsed.clockTolerance === undefined ? {} : { clockTolerance: parsed.clockTolerance }),
    ...(parsed.maxTokenAge === undefined ? {} : { maxTokenAge: parsed.maxTokenAge }),
  };
  const requiredClaims = [...new Set([...(parsed.requiredClaims ?? []), ...(parsed.requireExpiration ? ['exp'] : [])])];
  if (requiredClaims.length > 0) verifyOptions.requiredClaims = requiredClaims;
  return verifyOptions;
}

/** A token that did not verify: 503 when the keys could not be loaded, else 401 with a safe description. */
function verificationFailure(err: unknown, remote: boolean): A2AMiddlewareError {
  const code = (err as { code?: unknown }).code;
  const fromJose = typeof code === 'string' && code.startsWith('ERR_J');
  if ((fromJose && UNAVAILABLE_CODES.has(code)) || (!fromJose && remote)) {
    return new A2AMiddlewareError('A2A_AUTH_UNAVAILABLE', 'The token signing keys could not be loaded', { cause: err });
  }
  // With local key material every failure is the token's (the key was checked at construction).
  return invalidCredentials(describeFailure(err), err);
}

/** The caller a verified token names: through `toCaller` when given, else sub, name and the payload. */
function callerOfToken(payload: JWTPayload, protectedHeader: JWTHeaderParameters, toCaller: BearerJwtOptions['toCaller']): A2ACallerInit {
  if (toCaller) {
    const init = toCaller(payload, protectedHeader);
    if (init === undefined) throw invalidCredentials('The access token does not identify a caller');
    return init;
  }
  if (typeof payload.sub !== 'string' || payload.sub === '') {
    throw invalidCredentials('The access token has no subject');
  }
  const name = [payload.name, payload.preferred_username].find((value): value is string => typeof value === 'string' && value !== '');
  return { id: payload.sub, ...(name === undefined ? {} : { displayName: name }), claims: Object.freeze({ ...payload }) };
}

/**
 * A caller source for `Authorization: Bearer <JWT>`. No Authorization header, or another scheme, means "no credentials" (another source or anonymous
 * access may apply); a Bearer token that does not verify (signature, algorithm, `exp`/`nbf`, no `exp` unless `requireExpiration: false`, issuer,
 * audience, no `sub`) is A2A_AUTH_INVALID.
 */
export function bearerJwt(options: BearerJwtOptions): A2ACallerSource {
  const parsed = parseOptions('bearerJwt', schema, options);
  const { verifyWith, algorithms, remote } = keyMaterialOf(parsed);
  const verifyOptions = verifyOptionsOf(parsed, algorithms);
  const toCaller = parsed.toCaller;

  let verifier: Promise<(token: string) => Promise<Jose.JWTVerifyResult>> | undefined;
  async function verify(token: string) {
    verifier ??= loadJose().then((jose) => {
      const key = verifyWith(jose);
      return (jwt: string) => (typeof key === 'function' ? jose.jwtVerify(jwt, key, verifyOptions) : jose.jwtVerify(jwt, key, verifyOptions));
    });
    return (await verifier)(token);
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
      throw verificationFailure(err, remote);
    }
    return callerOfToken(result.payload, result.protectedHeader, toCaller);
  });
}

// jose is loaded at the first token verified or card signed: an app doing neither skips its ~80 modules (20-50 ms).
let jose: Promise<typeof Jose> | undefined;

export function loadJose(): Promise<typeof Jose> {
  jose ??= import('jose');
  return jose;
}
