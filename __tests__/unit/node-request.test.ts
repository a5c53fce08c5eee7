/** lib/http/node-request.ts: what the router reads of a request that has no Express helpers. */
import type { IncomingMessage } from 'node:http';
import { addVary, hostnameOf, mountPathOf, protocolOf, queryParamOf, requestPath } from '../../lib/context/node-request';

const request = (fields: Record<string, unknown>): IncomingMessage => ({ headers: {}, socket: {}, ...fields }) as unknown as IncomingMessage;

describe('mountPathOf', () => {
  it.each([
    ['/agent', '/', '/agent'],
    ['/agent/', '/', '/agent'],
    ['/agent?A2A-Version=1.0', '/?A2A-Version=1.0', '/agent'],
    ['/api/v2/agent/tasks/1', '/tasks/1', '/api/v2/agent'],
    ['/agent/.well-known/agent-card.json', '/.well-known/agent-card.json', '/agent'],
  ])('Connect: originalUrl %s, url %s → %s', (originalUrl, url, expected) => {
    expect(mountPathOf(request({ originalUrl, url }))).toBe(expected);
  });

  it("is '' for a bare handler, and Express's baseUrl (without a trailing slash) when set", () => {
    expect(mountPathOf(request({ url: '/tasks/1' }))).toBe('');
    expect(mountPathOf(request({ url: '/', baseUrl: '/agent/', originalUrl: '/elsewhere' }))).toBe('/agent');
  });
});

describe('the other readers', () => {
  it('reads a query parameter from the URL, a repeated one as an array, and prefers req.query', () => {
    expect(queryParamOf(request({ url: '/x?A2A-Version=1.0' }), 'A2A-Version')).toBe('1.0');
    expect(queryParamOf(request({ url: '/x?A2A-Version=1.0&A2A-Version=0.3' }), 'A2A-Version')).toEqual(['1.0', '0.3']);
    expect(queryParamOf(request({ url: '/x' }), 'A2A-Version')).toBeUndefined();
    expect(queryParamOf(request({ url: '/x?A2A-Version=1.0', query: {} }), 'A2A-Version')).toBeUndefined();
  });

  it('reads the path of an origin-form and an absolute-form target', () => {
    expect(requestPath(request({ url: '/tasks/1?x=1' }))).toBe('/tasks/1');
    expect(requestPath(request({ url: 'http://h.example/tasks/1?x=1' }))).toBe('/tasks/1');
  });

  it('reads the host name and protocol without Express', () => {
    expect(hostnameOf(request({ headers: { host: 'acme.agents.example.com:8080' } }))).toBe('acme.agents.example.com');
    expect(hostnameOf(request({ headers: { host: '[::1]:8080' } }))).toBe('[::1]');
    expect(protocolOf(request({ socket: { encrypted: true } }))).toBe('https');
    expect(protocolOf(request({}))).toBe('http');
  });

  it('adds a field to Vary once', () => {
    const headers = new Map<string, string>();
    const res = {
      getHeader: (name: string) => headers.get(name.toLowerCase()),
      setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), value),
    };
    addVary(res, 'A2A-Version');
    addVary(res, 'a2a-version');
    expect(headers.get('vary')).toBe('A2A-Version');
    headers.set('vary', 'Accept-Encoding');
    addVary(res, 'A2A-Version');
    expect(headers.get('vary')).toBe('Accept-Encoding, A2A-Version');
  });
});
