/**
 * Who may reach the inspector: a loopback peer (the socket's address, never a forwarded header),
 * naming a local Host (DNS rebinding), from no Origin or its own, and for the admin API the token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** No CORS headers, ever; the page runs only its own bundle and talks only to its own origin. */
export const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
} as const;

const isLoopback = (address: string | undefined): boolean =>
  address !== undefined && (/^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(address) || address === '::1');

const LOCAL_HOSTS = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/;

/** The host name of a Host header value (`[::1]:3000` → `[::1]`). */
function hostName(host: string): string {
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0];
}

// Hashing both sides gives equal lengths, which timingSafeEqual needs, without revealing the length.
const digest = (value: string) => createHash('sha256').update(value).digest();

export function gate(
  req: IncomingMessage,
  options: { token: string; hosts: readonly string[]; needsToken: boolean; isReceiver: boolean },
): { status: number; reason: string } | undefined {
  if (!isLoopback(req.socket.remoteAddress)) return { status: 403, reason: 'the inspector answers loopback peers only' };
  const host = req.headers.host ?? '';
  const name = hostName(host).toLowerCase();
  if (!LOCAL_HOSTS.test(name) && !options.hosts.includes(name)) return { status: 403, reason: `Host ${host} is not a local name` };
  if (options.isReceiver) return undefined;
  const origin = req.headers.origin;
  if (origin !== undefined && origin !== `http://${host}` && origin !== `https://${host}`) {
    return { status: 403, reason: `Origin ${origin} is not the inspector's own` };
  }
  if (!options.needsToken) return undefined;
  const given = req.headers['x-inspector-token'];
  if (typeof given !== 'string' || !timingSafeEqual(digest(given), digest(options.token))) {
    return { status: 401, reason: 'the admin API needs the token from the log in the X-Inspector-Token header' };
  }
  return undefined;
}
