/** The card's Last-Modified (§8.6.1 MAY) and If-Modified-Since, at the mount and at the origin root. */
import express from 'express';
import { createA2ARouter, silentLogger, type AgentExecutor } from '../../lib';
import { testCard } from '../helpers/fixtures';
import { listen, type Listening } from '../helpers/http';

const executor: AgentExecutor = { execute: (_ctx, events) => events.reply('hi') };

describe('agent card Last-Modified', () => {
  let server: Listening;
  let built: number;
  beforeAll(async () => {
    const app = express();
    built = Date.now();
    const agent = createA2ARouter({ agentCard: testCard, executor, logger: silentLogger });
    app.use('/agent', agent);
    app.get('/.well-known/agent-card.json', agent.wellKnownCard);
    server = await listen(app);
  });
  afterAll(() => server.close());

  const paths = ['/agent/.well-known/agent-card.json', '/.well-known/agent-card.json'];

  it.each(paths)('%s has a Last-Modified of when the router was built, the same on every request', async (path) => {
    const first = await fetch(`${server.baseUrl}${path}`);
    const lastModified = first.headers.get('last-modified');
    expect(lastModified).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    expect(Math.abs(Date.parse(lastModified!) - built)).toBeLessThan(2000);
    await first.text();
    expect((await fetch(`${server.baseUrl}${path}`)).headers.get('last-modified')).toBe(lastModified);
  });

  it.each(paths)('%s answers If-Modified-Since at or after it with 304, and earlier with 200', async (path) => {
    const url = `${server.baseUrl}${path}`;
    const lastModified = (await fetch(url)).headers.get('last-modified')!;
    const same = await fetch(url, { headers: { 'If-Modified-Since': lastModified } });
    expect(same.status).toBe(304);
    expect(await same.text()).toBe('');
    const later = await fetch(url, { headers: { 'If-Modified-Since': new Date(Date.parse(lastModified) + 60_000).toUTCString() } });
    expect(later.status).toBe(304);
    const earlier = await fetch(url, { headers: { 'If-Modified-Since': new Date(Date.parse(lastModified) - 1000).toUTCString() } });
    expect(earlier.status).toBe(200);
    expect(((await earlier.json()) as { name: string }).name).toBe(testCard.name);
    const garbage = await fetch(url, { headers: { 'If-Modified-Since': 'yesterday' } });
    expect(garbage.status).toBe(200);
  });

  it('lets If-None-Match decide when both are sent (RFC 9110 §13.2.2)', async () => {
    const url = `${server.baseUrl}${paths[0]}`;
    const first = await fetch(url);
    const lastModified = first.headers.get('last-modified')!;
    const etag = first.headers.get('etag')!;
    const staleTag = await fetch(url, { headers: { 'If-None-Match': '"other"', 'If-Modified-Since': lastModified } });
    expect(staleTag.status).toBe(200);
    const currentTag = await fetch(url, { headers: { 'If-None-Match': etag, 'If-Modified-Since': 'Thu, 01 Jan 1970 00:00:00 GMT' } });
    expect(currentTag.status).toBe(304);
  });
});
