/** The Card view's checks through the admin API: a signed card verifies, a changed one does not; a broken card is named. */
import { generateKeyPairSync } from 'node:crypto';
import { startInspectedAgent, type InspectedAgent } from './agent';

let agent: InspectedAgent;
beforeAll(async () => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  agent = await startInspectedAgent({ signCard: { key: privateKey } });
});
afterAll(() => agent.close());

async function check(v1: unknown, v03: unknown) {
  const response = await fetch(`${agent.origin}/agent/_inspector/api/card-check`, {
    method: 'POST',
    headers: { 'x-inspector-token': agent.token, 'content-type': 'application/json' },
    body: JSON.stringify({ v1, v03 }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Array<{ name: string; ok: boolean | 'info'; detail: string }>;
}

it('verifies each signature of the served card against the signing key, and fails a changed card', async () => {
  const card = (await (await fetch(`${agent.origin}/agent/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } })).json()) as Record<
    string,
    unknown
  >;
  const v03 = await (await fetch(`${agent.origin}/agent/.well-known/agent-card.json`)).json();
  const checks = await check(card, v03);
  const signatures = checks.filter((c) => c.name.startsWith('signature'));
  expect(signatures.length).toBeGreaterThan(0);
  expect(signatures.every((c) => c.ok === true)).toBe(true);
  expect(checks.filter((c) => c.ok === false)).toEqual([]);
  const changed = await check({ ...card, description: 'not what was signed' }, v03);
  expect(changed.filter((c) => c.name.startsWith('signature')).every((c) => c.ok === false)).toBe(true);
});

it('names what is wrong with a card that is not a v1.0 card', async () => {
  const checks = await check({ name: 'x' }, undefined);
  expect(checks[0]).toMatchObject({ name: 'v1.0 schema', ok: false });
  expect(checks[0].detail).toMatch(/description/);
});
