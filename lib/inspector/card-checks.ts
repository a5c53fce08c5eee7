/**
 * The inspector's card checks: what a v1.0 and a v0.3 client rely on in the card as served, and
 * each signature verified against the router's signing key.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { loadJose } from '../middleware/bearer-jwt.js';
import { canonicalCardPayload } from '../protocol/card-canonical.js';
import { AgentCardSchema, type AgentCard } from '../protocol/schemas.js';

interface CardCheck {
  readonly name: string;
  readonly ok: boolean | 'info';
  readonly detail: string;
}

type Json = Record<string, unknown>;

/** Scheme names a security requirement uses (`{ schemes: { name: ... } }`, or the v0.3 `{ name: [...] }`). */
function schemesOf(requirement: unknown): string[] {
  if (typeof requirement !== 'object' || requirement === null) return [];
  const schemes = (requirement as Json).schemes;
  return Object.keys(typeof schemes === 'object' && schemes !== null ? schemes : requirement);
}

export async function checkCard(v1: unknown, v03: unknown, expectedUrl: string, signingKey: KeyObject | undefined): Promise<CardCheck[]> {
  const checks: CardCheck[] = [];
  const parsed = AgentCardSchema.safeParse(v1);
  checks.push({
    name: 'v1.0 schema',
    ok: parsed.success,
    detail: parsed.success ? 'the card parses as a v1.0 AgentCard' : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
  });
  if (!parsed.success) return checks;
  const card = parsed.data;
  const here = card.supportedInterfaces.filter((i) => i.url === expectedUrl);
  checks.push({
    name: 'interfaces point here',
    ok: here.length > 0,
    detail:
      here.length > 0
        ? `${here.map((i) => `${i.protocolBinding} ${i.protocolVersion}`).join(', ')} at ${expectedUrl}`
        : `no interface at ${expectedUrl}`,
  });
  const declared = Object.keys(card.securitySchemes ?? {});
  const used = (card.securityRequirements ?? []).flatMap(schemesOf);
  const undeclared = used.filter((name) => !declared.includes(name));
  checks.push({
    name: 'security schemes declared',
    ok: undeclared.length === 0,
    detail: undeclared.length === 0 ? `declared: ${declared.join(', ') || 'none'}` : `required but not declared: ${undeclared.join(', ')}`,
  });
  const ids = card.skills.map((s) => s.id);
  const duplicates = ids.filter((id, i) => ids.indexOf(id) !== i);
  checks.push({
    name: 'skill ids unique',
    ok: duplicates.length === 0,
    detail: duplicates.length ? `repeated: ${duplicates.join(', ')}` : `${ids.length} skill(s)`,
  });
  checks.push({
    name: 'capabilities',
    ok: 'info',
    detail: `streaming ${card.capabilities.streaming === true}, push ${card.capabilities.pushNotifications === true}, extended card ${card.capabilities.extendedAgentCard === true}`,
  });
  checks.push(v03Check(v03));
  checks.push(...(await signatureChecks(v1 as AgentCard, signingKey)));
  return checks;
}

/** What a v0.3 client reads first: `url`, `protocolVersion` and `preferredTransport`. */
function v03Check(v03: unknown): CardCheck {
  if (typeof v03 !== 'object' || v03 === null) return { name: 'v0.3 card', ok: 'info', detail: 'not served (compatibility off?)' };
  const card = v03 as Json;
  const missing = ['url', 'protocolVersion', 'preferredTransport'].filter((k) => typeof card[k] !== 'string');
  return {
    name: 'v0.3 card',
    ok: missing.length === 0,
    detail:
      missing.length === 0
        ? `${String(card.preferredTransport)} at ${String(card.url)}, protocol ${String(card.protocolVersion)}`
        : `missing ${missing.join(', ')}`,
  };
}

/** Each signature, over the card as served or its v1.0 fields alone (what the signer signs). */
async function signatureChecks(card: AgentCard, key: KeyObject | undefined): Promise<CardCheck[]> {
  const signatures = card.signatures ?? [];
  if (signatures.length === 0) return [{ name: 'signature', ok: 'info', detail: 'the card is not signed' }];
  if (!key) return [{ name: 'signature', ok: 'info', detail: `${signatures.length} signature(s); no signCard key here to verify with` }];
  const { flattenedVerify } = await loadJose();
  const payloads = [canonicalCardPayload(card), canonicalCardPayload(AgentCardSchema.parse(card))];
  return Promise.all(
    signatures.map(async (signature, index): Promise<CardCheck> => {
      for (const payload of payloads) {
        try {
          await flattenedVerify(
            { protected: signature.protected, signature: signature.signature, payload: Buffer.from(payload).toString('base64url') },
            key,
          );
          return { name: `signature ${index + 1}`, ok: true, detail: 'verified with the router’s signing key' };
        } catch {
          // the other payload, then a failure
        }
      }
      return { name: `signature ${index + 1}`, ok: false, detail: 'does not verify against the router’s signing key' };
    }),
  );
}

/** The public half of the `signCard.key` option. */
export function publicKeyOf(key: unknown): KeyObject | undefined {
  if (key === undefined) return undefined;
  try {
    return createPublicKey(key as Parameters<typeof createPublicKey>[0]);
  } catch {
    return undefined;
  }
}
