/** Agent card signatures (§8.4): a flattened, detached JWS over the canonical card; the key is checked at build. */
import { createHash, createPrivateKey, createPublicKey, KeyObject, webcrypto, type JsonWebKey } from 'node:crypto';
import { loadJose } from '../middleware/bearer-jwt.js';
import { canonicalCardPayload, cardWithoutDefaults } from '../protocol/card-canonical.js';
import { AgentCardSchema, type AgentCard, type AgentCardSignature } from '../protocol/schemas.js';

export const CARD_SIGNING_ALGORITHMS = ['ES256', 'ES384', 'ES512', 'ES256K', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA'] as const;
export type CardSigningAlgorithm = (typeof CARD_SIGNING_ALGORITHMS)[number];

/** A private key as the `signCard.key` option takes it. */
export type CardSigningKey = KeyObject | webcrypto.CryptoKey | JsonWebKey | string;

export interface CardSigningOptions {
  /** The private key: a KeyObject, a CryptoKey, a private JWK, or a PKCS#8 / SEC1 / PKCS#1 PEM string. */
  readonly key: CardSigningKey;
  /** `kid` of the protected header; default: the RFC 7638 JWK thumbprint of the public key. */
  readonly kid?: string;
  /** Default: from the key (ES256 for P-256, ES384, ES512, ES256K, RS256 for RSA, PS256 for RSA-PSS, EdDSA for Ed25519/Ed448). */
  readonly alg?: CardSigningAlgorithm;
  /** `jku` of the protected header: where verifiers find the JWKS with the public key. */
  readonly jku?: string;
}

/** A key the signer cannot use, with the option at fault and the reason (the router reports it as an options error). */
export class CardSigningKeyError extends Error {
  constructor(
    readonly option: 'key' | 'alg',
    message: string,
  ) {
    super(message);
  }
}

const CURVE_ALG: Readonly<Record<string, CardSigningAlgorithm>> = {
  prime256v1: 'ES256',
  secp384r1: 'ES384',
  secp521r1: 'ES512',
  secp256k1: 'ES256K',
};

function algorithmsFor(key: KeyObject): readonly CardSigningAlgorithm[] {
  switch (key.asymmetricKeyType) {
    case 'ec': {
      const alg = CURVE_ALG[key.asymmetricKeyDetails?.namedCurve ?? ''];
      return alg ? [alg] : [];
    }
    case 'rsa':
      return ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'];
    case 'rsa-pss':
      return ['PS256', 'PS384', 'PS512'];
    case 'ed25519':
    case 'ed448':
      return ['EdDSA'];
    default:
      return [];
  }
}

/** Web Crypto's CryptoKey class (a global since Node 17; `webcrypto.CryptoKey` is not set on every version). */
const WebCryptoKey = (globalThis as { CryptoKey?: abstract new () => unknown }).CryptoKey;

function privateKeyOf(input: CardSigningKey): KeyObject {
  let key: KeyObject;
  try {
    if (input instanceof KeyObject) key = input;
    else if (typeof input === 'string') key = createPrivateKey(input);
    else if (WebCryptoKey && input instanceof WebCryptoKey) key = KeyObject.from(input as webcrypto.CryptoKey);
    else key = createPrivateKey({ key: input as JsonWebKey, format: 'jwk' });
  } catch (error) {
    throw new CardSigningKeyError('key', `is not a usable private key (${(error as Error).message})`);
  }
  if (key.type !== 'private')
    throw new CardSigningKeyError('key', `must be a private key (got a ${key.type} key): the card is signed with it, verifiers use the public key`);
  return key;
}

/** RFC 7638 thumbprint (SHA-256, base64url) of a public JWK. */
function thumbprint(jwk: JsonWebKey): string {
  const members: Record<string, readonly string[]> = { EC: ['crv', 'kty', 'x', 'y'], RSA: ['e', 'kty', 'n'], OKP: ['crv', 'kty', 'x'] };
  const names = members[jwk.kty ?? ''] ?? [];
  const canonical = `{${names.map((name) => `"${name}":"${String((jwk as Record<string, unknown>)[name])}"`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}

export class CardSigner {
  readonly #key: KeyObject;
  readonly #protectedHeader: { alg: string; typ: 'JOSE'; kid: string; jku?: string };

  /** Throws CardSigningKeyError for a key it cannot use or an `alg` that does not fit the key. */
  constructor(options: CardSigningOptions) {
    this.#key = privateKeyOf(options.key);
    const usable = algorithmsFor(this.#key);
    if (usable.length === 0)
      throw new CardSigningKeyError(
        'key',
        `has a key type (${this.#key.asymmetricKeyType}) that cannot sign a JWS; use an EC (P-256/384/521), RSA or Ed25519 key`,
      );
    const alg = options.alg ?? usable[0];
    if (!usable.includes(alg))
      throw new CardSigningKeyError('alg', `cannot sign with alg ${alg}: this ${this.#key.asymmetricKeyType} key signs with ${usable.join(', ')}`);
    const kid = options.kid ?? thumbprint(createPublicKey(this.#key).export({ format: 'jwk' }));
    this.#protectedHeader = { alg, typ: 'JOSE', kid, ...(options.jku ? { jku: options.jku } : {}) };
  }

  /** The public key, as a JWK with `kid`, `alg` and `use` (for a JWKS the deployer publishes at `jku`). */
  get publicJwk(): JsonWebKey & { kid: string; alg: string; use: 'sig' } {
    return { ...createPublicKey(this.#key).export({ format: 'jwk' }), kid: this.#protectedHeader.kid, alg: this.#protectedHeader.alg, use: 'sig' };
  }

  async signature(card: AgentCard): Promise<AgentCardSignature> {
    const { FlattenedSign } = await loadJose();
    const jws = await new FlattenedSign(new TextEncoder().encode(canonicalCardPayload(card)))
      .setProtectedHeader(this.#protectedHeader)
      .sign(this.#key);
    return { protected: jws.protected!, signature: jws.signature };
  }

  /** `card` signed without default-valued fields; a merged card also over its v1.0 fields, for verifiers that re-parse it. */
  async sign<Card extends AgentCard>(card: Card): Promise<Card> {
    const served = cardWithoutDefaults(card);
    const signatures = [await this.signature(served)];
    const v1Only = AgentCardSchema.parse(served);
    if (canonicalCardPayload(v1Only) !== canonicalCardPayload(served)) signatures.push(await this.signature(v1Only));
    return { ...served, signatures: [...(served.signatures ?? []), ...signatures] };
  }
}
