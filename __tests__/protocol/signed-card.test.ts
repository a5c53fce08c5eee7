/**
 * Signed agent cards (§8.4): with `signCard`, every served card (public, origin root, extended over
 * v1.0 and v0.3) carries a flattened JWS whose payload is the RFC 8785 canonical form of the card
 * without `signatures`. Each is verified here independently of the kit: canonicalized with the
 * `canonicalize` package, verified with jose and the public key. A merged (v0.3-compatible) card
 * also carries a signature over its v1.0 fields, which the official JavaScript SDK's own
 * canonicalization verifies.
 */
// The SDK's CJS build requires jose v6 (ESM-only); only its canonicalizeAgentCard is used here, which
// never calls jose, so that copy is replaced by an empty module (as in official-client.test.ts).
jest.mock(require.resolve('jose', { paths: [require('node:path').dirname(require.resolve('@a2a-js/sdk'))] }), () => ({}));

import { generateKeyPairSync, webcrypto, type KeyObject } from 'node:crypto';
import canonicalize from 'canonicalize';
import express from 'express';
import { base64url, calculateJwkThumbprint, decodeProtectedHeader, flattenedVerify } from 'jose';
import { canonicalizeAgentCard } from '@a2a-js/sdk';
import { A2AOptionsError, createA2ARouter, silentLogger, type AgentCardInput, type AgentExecutor } from '../../lib';
import { startAgent, testCard, type TestServer } from '../helpers/fixtures';
import { listen, rpc } from '../helpers/http';
import { expectProtoJson } from '../helpers/proto-json';

const executor: AgentExecutor = { execute: (_ctx, events) => events.complete('ok') };

type Card = any;

const card: AgentCardInput = {
  ...testCard,
  capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
  documentationUrl: 'https://docs.example.com/agent',
  securitySchemes: {
    oauth: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://id.example.com/token', scopes: { read: 'Read' } } } } },
  },
  securityRequirements: [{ schemes: { oauth: { list: ['read'] } } }],
};

/** The JWS payload a verifier computes from the received card (§8.4.3): without `signatures`, JCS. */
function payloadOf(received: Card): string {
  const { signatures: _signatures, ...rest } = received;
  return canonicalize(rest)!;
}

/** Verifies one signature of `received` over `payload` with `publicKey`; returns the protected header. */
async function verify(received: Card, index: number, publicKey: KeyObject, payload = payloadOf(received)) {
  const signature = received.signatures[index];
  const jws = { payload: base64url.encode(new TextEncoder().encode(payload)), protected: signature.protected, signature: signature.signature };
  await flattenedVerify(jws, publicKey);
  return decodeProtectedHeader(signature);
}

/** No field holds a proto default (so a verifier's default removal changes nothing). */
function expectNoDefaults(value: unknown, path = ''): void {
  if (Array.isArray(value)) return value.forEach((item, i) => expectNoDefaults(item, `${path}[${i}]`));
  if (typeof value !== 'object' || value === null) return;
  for (const [key, field] of Object.entries(value)) {
    if (key === 'capabilities' || key === 'header') continue; // optional-presence booleans; a Struct
    expect({ at: `${path}.${key}`, field }).not.toEqual({ at: `${path}.${key}`, field: '' });
    expect({ at: `${path}.${key}`, empty: Array.isArray(field) && field.length === 0 }).toEqual({ at: `${path}.${key}`, empty: false });
    expectNoDefaults(field, `${path}.${key}`);
  }
}

describe('signCard', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  let server: TestServer;
  beforeAll(async () => {
    server = await startAgent(executor, {
      agentCard: card,
      extendedAgentCard: { ...card, name: 'Extended', skills: [{ id: 'x', name: 'X', description: 'Extra', tags: ['extra'], examples: [] }] },
      callContext: () => ({ caller: { id: 'alice', authenticated: true } }),
      signCard: { key: privateKey, jku: 'https://agent.example.com/jwks.json' },
    });
  });
  afterAll(() => server.close());

  it('the public card: a JWS over its JCS form, with alg, typ JOSE, kid (the key thumbprint) and jku', async () => {
    const received: Card = await (await fetch(`${server.url}/.well-known/agent-card.json`)).json();
    expect(received.signatures).toHaveLength(2);
    expectNoDefaults(received);
    const header = await verify(received, 0, publicKey);
    expect(header).toEqual({
      alg: 'ES256',
      typ: 'JOSE',
      kid: await calculateJwkThumbprint(publicKey.export({ format: 'jwk' }) as never),
      jku: 'https://agent.example.com/jwks.json',
    });
    // Field presence respected: an `optional` field set to false is signed as sent.
    expect(received.capabilities.pushNotifications).toBe(false);
  });

  it('the second signature covers the v1.0 fields, as the official SDK canonicalizes them', async () => {
    const received: Card = await (await fetch(`${server.url}/.well-known/agent-card.json`)).json();
    expect(received.url).toBeDefined(); // a merged card (v0.3 compatibility)
    await expect(verify(received, 1, publicKey)).rejects.toThrow(); // not over the v0.3 fields
    await verify(received, 1, publicKey, canonicalizeAgentCard(received));
  });

  it('the v1.0 card (a request stating 1.0) carries one signature, verified over the received JSON and by the SDK canonicalization alike', async () => {
    const received: Card = await (await fetch(`${server.url}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } })).json();
    expectProtoJson('AgentCard', received); // exactly v1.0, signatures included
    expect(received.signatures).toHaveLength(1);
    expectNoDefaults(received);
    await verify(received, 0, publicKey);
    await verify(received, 0, publicKey, canonicalizeAgentCard(received));
  });

  it('a changed card no longer verifies', async () => {
    const received: Card = await (await fetch(`${server.url}/.well-known/agent-card.json`)).json();
    await expect(verify({ ...received, name: 'Impostor' }, 0, publicKey)).rejects.toThrow();
    await expect(verify({ ...received, url: 'https://evil.example.com' }, 0, publicKey)).rejects.toThrow();
  });

  it('the extended card, over v1.0 and over v0.3, is signed too', async () => {
    const viaV1: Card = (await rpc(server.url, 'GetExtendedAgentCard', {})).body.result;
    const viaV03: Card = (await rpc(server.url, 'agent/getAuthenticatedExtendedCard', undefined, { headers: { 'A2A-Version': '' } })).body.result;
    for (const received of [viaV1, viaV03]) {
      expect(received.name).toBe('Extended');
      expect(received.skills[0]).not.toHaveProperty('examples'); // [] is a default: not served, not signed
      expectNoDefaults(received);
      await verify(received, 0, publicKey);
    }
  });

  it('the extended card over v0.3 HTTP+JSON (the v0.3 proto ProtoJSON) carries one signature, over that form', async () => {
    const response = await fetch(`${server.url}/v1/card`);
    expect(response.status).toBe(200);
    const received: Card = await response.json();
    expect(received).toMatchObject({ name: 'Extended', protocolVersion: '0.3.0', security: [{ schemes: { oauth: { list: ['read'] } } }] });
    expect(received.signatures).toHaveLength(1);
    expectNoDefaults(received);
    await verify(received, 0, publicKey);
    await expect(verify({ ...received, name: 'Impostor' }, 0, publicKey)).rejects.toThrow();
  });

  it('the card at the origin root is signed for its own URL', async () => {
    const agent = createA2ARouter({ agentCard: card, executor, logger: silentLogger, signCard: { key: privateKey } });
    const app = express();
    app.use('/agent', agent);
    app.get('/.well-known/agent-card.json', agent.wellKnownCard);
    const root = await listen(app);
    try {
      const received: Card = await (await fetch(`${root.baseUrl}/.well-known/agent-card.json`)).json();
      expect(received.url).toBe(`${root.baseUrl}/agent`);
      const header = await verify(received, 0, publicKey);
      expect(header).not.toHaveProperty('jku');
    } finally {
      await root.close();
    }
  });
});

describe('signCard keys and options', () => {
  let server: TestServer | undefined;
  afterEach(() => server?.close());

  const signedCard = async (options: Parameters<typeof startAgent>[1]) => {
    server = await startAgent(executor, options);
    return (await (await fetch(`${server.url}/.well-known/agent-card.json`)).json()) as Card;
  };

  it.each([
    ['an RSA key (RS256)', () => generateKeyPairSync('rsa', { modulusLength: 2048 }), 'RS256'],
    ['an Ed25519 key (EdDSA)', () => generateKeyPairSync('ed25519'), 'EdDSA'],
    ['a P-384 key (ES384)', () => generateKeyPairSync('ec', { namedCurve: 'P-384' }), 'ES384'],
  ])('signs with %s', async (_what, make, alg) => {
    const { privateKey, publicKey } = make();
    const received = await signedCard({ signCard: { key: privateKey, kid: 'key-1' } });
    expect(await verify(received, 0, publicKey)).toMatchObject({ alg, kid: 'key-1', typ: 'JOSE' });
  });

  it('takes a private JWK or a PEM string, and an explicit alg; compatibility off gives one signature', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const fromJwk = await signedCard({ signCard: { key: privateKey.export({ format: 'jwk' }), alg: 'PS256' }, compatibility: { v0_3: false } });
    expect(fromJwk.signatures).toHaveLength(1);
    expect(await verify(fromJwk, 0, publicKey)).toMatchObject({ alg: 'PS256' });
    await server!.close();
    const fromPem = await signedCard({ signCard: { key: privateKey.export({ format: 'pem', type: 'pkcs8' }) as string } });
    await verify(fromPem, 0, publicKey);
  });

  it('takes a Web Crypto CryptoKey', async () => {
    const { privateKey, publicKey } = (await webcrypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
      'sign',
      'verify',
    ])) as webcrypto.CryptoKeyPair;
    const received = await signedCard({ signCard: { key: privateKey } });
    expect(await verify(received, 0, publicKey as unknown as KeyObject)).toMatchObject({ alg: 'ES256' });
  });

  const build = (signCard: unknown) => () => createA2ARouter({ agentCard: testCard, executor, logger: silentLogger, signCard } as never);

  it.each([
    ['a string that is no key', { key: 'not a key' }, /signCard\.key.*not a usable private key/],
    ['a public key', { key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey }, /signCard\.key.*must be a private key/],
    [
      'an alg the key cannot sign with',
      { key: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey, alg: 'RS256' },
      /signCard\.alg.*cannot sign with alg RS256/,
    ],
    ['an unknown alg', { key: generateKeyPairSync('ed25519').privateKey, alg: 'HS256' }, /signCard\.alg/],
    ['a typo', { key: generateKeyPairSync('ed25519').privateKey, kd: 'x' }, /"signCard\.kd" is unknown \(did you mean "signCard\.kid"\?\)/],
    ['a jku that is no URL', { key: generateKeyPairSync('ed25519').privateKey, jku: 'jwks.json' }, /signCard\.jku/],
  ])('refuses %s when the router is built', (_what, signCard, message) => {
    expect(build(signCard)).toThrow(A2AOptionsError);
    expect(build(signCard)).toThrow(message);
  });
});
