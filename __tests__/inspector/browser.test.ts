/**
 * The inspector in a real browser (Debian's chromium through playwright-core): each view driven as a
 * developer would, against an agent over real HTTP on loopback; with A2A_SCREENSHOTS=1 the run writes docs/images/inspector-*.png.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { fromVerify } from '../../lib';
import { testCard } from '../helpers/fixtures';
import { gate, gates, startInspectedAgent, type InspectedAgent } from './agent';

const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
if (!present && process.env.CI) throw new Error(`the inspector's browser tests need ${CHROMIUM} under CI (.ci/run installs the chromium package)`);
if (!present) process.stderr.write(`inspector browser tests skipped: no ${CHROMIUM} (apt-get install chromium)\n`);

const root = resolve(__dirname, '..', '..');
// The docs' screenshots come from this run, on request only: a plain `npm test` leaves the tree as it was.
const shot = async (page: Page, name: string) => {
  if (process.env.A2A_SCREENSHOTS === '1') await page.screenshot({ path: join(root, 'docs', 'images', `inspector-${name}.png`) });
};

(present ? describe : describe.skip)('the inspector in chromium', () => {
  let agent: InspectedAgent;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    agent = await startInspectedAgent();
    profile = mkdtempSync(join(tmpdir(), 'inspector-profile-'));
    const { chromium } = await import('playwright-core');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      acceptDownloads: true,
      viewport: { width: 1280, height: 860 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await agent?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  /** The chat's controls set, one message sent; the new agent bubble. */
  async function chat(text: string, mode: 'blocking' | 'streaming' | 'return immediately', binding = 'JSON-RPC', version = '1.0', on = page) {
    const page = on;
    await page.click('button[data-view="Chat"]');
    await page.selectOption('#chat-binding', binding);
    await page.selectOption('#chat-version', version);
    await page.selectOption('#chat-mode', mode);
    const before = await page.locator('.bubble.agent').count();
    await page.fill('#chat-text', text);
    await page.click('#chat-send');
    return page.locator('.bubble.agent').nth(before);
  }
  const taskIdIn = async (bubble: ReturnType<Page['locator']>) => /task (\S+)/.exec(await bubble.locator('.meta').first().innerText())![1];

  it('opens only with the token, then shows the card as v1.0 and v0.3 clients get it, with its checks', async () => {
    await page.goto(`${agent.origin}/agent/_inspector/`);
    await page.getByText('Open the inspector with the URL from the server log').waitFor();
    await page.goto(agent.url);
    // The token leaves the address bar (and so the history) at once.
    await page.waitForURL(`${agent.origin}/agent/_inspector/`);
    const checks = page.locator('#card-checks li');
    await checks.first().waitFor();
    expect(await page.locator('#card-checks li.ok').allInnerTexts()).toEqual(
      expect.arrayContaining([
        expect.stringContaining('v1.0 schema'),
        expect.stringContaining('interfaces point here'),
        expect.stringContaining('v0.3 card'),
      ]),
    );
    expect(await page.locator('#card-checks li.bad').count()).toBe(0);
    await page.getByText('As a v0.3 client gets it').waitFor();
    await shot(page, 'card');
  });

  it('sends a blocking message and shows the completed task', async () => {
    const bubble = await chat('hello', 'blocking');
    await bubble.getByText('echo: hello').waitFor();
    await bubble.locator('.state', { hasText: 'COMPLETED' }).waitFor();
  });

  it('appends streamed artifact text as it arrives (HTTP+JSON, v0.3 too)', async () => {
    for (const [binding, version] of [
      ['JSON-RPC', '1.0'],
      ['HTTP+JSON', '0.3'],
    ]) {
      gates.stream = gate();
      const bubble = await chat('stream', 'streaming', binding, version);
      // The agent holds the rest until the test opens the gate: the first chunk is on screen before.
      await bubble.getByText('first chunk').waitFor();
      expect(await bubble.innerText()).not.toContain('second chunk');
      expect(await bubble.locator('.state').innerText()).toBe('WORKING');
      gates.stream.open();
      await bubble.getByText('first chunk, second chunk').waitFor();
      await bubble.locator('.state', { hasText: 'COMPLETED' }).waitFor();
    }
  });

  it('answers an input-required task in place', async () => {
    const bubble = await chat('ask', 'blocking');
    await bubble.getByText('which day?').waitFor();
    await bubble.locator('.state', { hasText: 'INPUT_REQUIRED' }).waitFor();
    await bubble.locator('input.answer').fill('Tuesday');
    await bubble.getByRole('button', { name: 'Answer' }).click();
    await bubble.getByText('booked for Tuesday').waitFor();
    await bubble.locator('.state', { hasText: 'COMPLETED' }).waitFor();
    await shot(page, 'chat');
  });

  it('shows markup from the agent as text: no element is made from it and no script runs', async () => {
    const markup = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>';
    const bubble = await chat('xss', 'blocking');
    await bubble.locator('.state', { hasText: 'COMPLETED' }).waitFor();
    expect(await bubble.locator('pre.text').allInnerTexts()).toContain(markup);
    expect(await bubble.locator('img, script, iframe').count()).toBe(0);
    // The javascript: URL is not made a link.
    expect(await page.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __xss?: unknown }).__xss)).toBeUndefined();
    expect(pageErrors).toEqual([]);
  });

  it('lists a running task live and cancels it from the list: the row turns CANCELED', async () => {
    const bubble = await chat('long', 'return immediately');
    const taskId = await taskIdIn(bubble);
    await page.click('button[data-view="Tasks"]');
    const row = page.locator(`tr[data-task="${taskId}"]`);
    await row.locator('.state', { hasText: 'WORKING' }).waitFor();
    await row.click();
    await page.locator('#task-detail h3', { hasText: taskId }).waitFor();
    await page.click('#task-cancel');
    // Nothing reloads the list but the event feed: CANCELED shows because the engine's event did.
    await page.locator(`tr[data-task="${taskId}"] .state`, { hasText: 'CANCELED' }).waitFor();
    await page.locator('#task-timeline li', { hasText: 'CANCELED' }).waitFor();
    await shot(page, 'tasks');
  });

  it('sends a raw GetTask and shows the response, copyable as curl', async () => {
    await page.click('button[data-view="Chat"]');
    const taskId = await taskIdIn(page.locator('.bubble.agent').first());
    await page.click('button[data-view="Console"]');
    await page.selectOption('#console-method', 'GetTask');
    await page.fill('#console-task', taskId);
    expect(await page.inputValue('#console-body')).toContain('"method": "GetTask"');
    await page.click('#console-send');
    await page.locator('#console-status', { hasText: 'HTTP 200' }).waitFor();
    expect(await page.locator('#console-body-out').innerText()).toContain(taskId);
    await page.click('#console-copy-curl');
    expect(await page.locator('#console-curl').innerText()).toMatch(
      new RegExp(`^curl -N -X POST '${agent.origin}/agent' -H 'a2a-version: 1.0'.*GetTask`, 's'),
    );
    await page.locator('#console-history li').first().waitFor();
    await shot(page, 'console');
  });

  it("delivers a task's push notifications to the test receiver", async () => {
    const bubble = await chat('push', 'return immediately');
    const taskId = await taskIdIn(bubble);
    await page.click('button[data-view="Events & push"]');
    await page.fill('#receiver-task', taskId);
    await page.click('#receiver-register');
    await page.locator('#receiver-result', { hasText: 'HTTP 200' }).waitFor();
    gates.push.open();
    const delivered = page.locator('#receiver-log li', { hasText: 'TASK_STATE_COMPLETED' });
    await delivered.first().waitFor();
    expect(await delivered.first().innerText()).toContain(taskId);
    await page.locator('#events-feed li[data-kind="push-attempt"]').first().waitFor();
    await shot(page, 'events');
  });

  it("sends as the identity chosen, through the app's own auth: no identity is refused, a pasted bearer is the task's owner", async () => {
    const guarded = await startInspectedAgent({
      auth: { user: fromVerify((req) => (req.headers.authorization === 'Bearer let-me-in' ? { id: 'alice', claims: {} } : false)) },
      agentCard: { ...testCard, capabilities: { streaming: true, extendedAgentCard: true } },
      extendedAgentCard: (caller) => ({ ...testCard, description: `the extended card, for ${caller.id}` }),
    });
    const other = await context.newPage();
    try {
      await other.goto(guarded.url);
      await other.locator('#card-checks li').first().waitFor();
      const refused = await chat('hello', 'blocking', 'JSON-RPC', '1.0', other);
      await refused.locator('.bad').waitFor();
      expect(await refused.innerText()).not.toContain('echo: hello');
      await other.selectOption('#identity-kind', 'bearer token');
      await other.fill('#identity-value', 'let-me-in');
      const accepted = await chat('hello', 'blocking', 'JSON-RPC', '1.0', other);
      await accepted.getByText('echo: hello').waitFor();
      await other.click('button[data-view="Tasks"]');
      await other.locator('#tasks-rows tr', { hasText: 'alice' }).waitFor();
      expect(await other.locator('#tasks-rows tr').count()).toBe(1);
      // The extended card, fetched as the same identity.
      await other.click('button[data-view="Card"]');
      await other.getByRole('button', { name: 'Get the extended card with the chosen identity' }).click();
      await other.getByText('Extended card (HTTP 200)').waitFor();
      await other.getByText('"the extended card, for alice"').waitFor();
    } finally {
      await other.close();
      await guarded.close();
    }
  });

  it('exports the session as JSON and imports it back for replay', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#session-export')]);
    const file = await download.path();
    const exported = JSON.parse(readFileSync(file, 'utf8')) as { entries: Array<{ kind: string; data: { body?: string } }> };
    const requests = exported.entries.filter((e) => e.kind === 'request');
    expect(requests.some((e) => e.data.body?.includes('GetTask'))).toBe(true);
    expect(exported.entries.some((e) => e.kind === 'event')).toBe(true);
    await page.reload();
    await page.locator('#card-checks li').first().waitFor();
    await page.setInputFiles('#session-import', file);
    await page.locator('#session-status', { hasText: `Imported ${exported.entries.length} entries` }).waitFor();
    expect(await page.locator('#console-history li').count()).toBe(requests.length);
    await page.locator('#console-history li', { hasText: 'GetTask' }).first().getByRole('button', { name: 'Replay' }).click();
    await page.locator('#console-status', { hasText: 'HTTP 200' }).waitFor();
  });
});
