/**
 * The SSRF guard (§13.2): loopback, private, CGNAT, link-local, multicast, unspecified, reserved
 * and metadata addresses are refused in every spelling the URL parser accepts (decimal, hex,
 * short forms, IPv6, IPv4-mapped IPv6), and for host names resolving to them; only http(s), no
 * userinfo; the allow-list lets named hosts, addresses and ranges through.
 */
import { SsrfGuard, WebhookRefusedError, type WebhookLookup } from '../../lib/engine/push/ssrf-guard';

/** A resolver for the suite's made-up names (no real DNS, no network). */
const names: Record<string, { address: string; family: 4 | 6 }[]> = {
  'public.test': [{ address: '93.184.216.34', family: 4 }],
  'private.test': [{ address: '10.1.2.3', family: 4 }],
  'mixed.test': [
    { address: '93.184.216.34', family: 4 },
    { address: '192.168.1.1', family: 4 },
  ],
  'metadata.test': [{ address: '169.254.169.254', family: 4 }],
  'v6.test': [{ address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 }],
  'ula.test': [{ address: 'fd00:ec2::254', family: 6 }],
};
const lookup: WebhookLookup = async (hostname) => {
  const found = names[hostname];
  if (!found) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found;
};

describe('SsrfGuard', () => {
  const guard = new SsrfGuard({ lookup });

  it.each([
    'http://127.0.0.1/hook',
    'http://127.1/hook',
    'http://2130706433/hook',
    'http://0x7f.1/hook',
    'http://0177.0.0.1/hook',
    'http://0.0.0.0/hook',
    'http://10.0.0.1/hook',
    'http://172.16.5.4/hook',
    'http://192.168.0.10/hook',
    'http://100.64.0.1/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://224.0.0.1/hook',
    'http://255.255.255.255/hook',
    'http://[::1]/hook',
    'http://[::]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://[::ffff:10.0.0.1]/hook',
    'http://[fd00:ec2::254]/hook',
    'http://[fc00::1]/hook',
    'http://[fe80::1]/hook',
    'http://[ff02::1]/hook',
    'http://[64:ff9b::a00:1]/hook',
    'http://private.test/hook',
    'http://mixed.test/hook',
    'http://metadata.test/hook',
    'http://ula.test/hook',
  ])('refuses %s', async (url) => {
    await expect(guard.resolve(url)).rejects.toThrow(/non-public address/);
  });

  it('refuses localhost as the system resolves it', async () => {
    await expect(new SsrfGuard().resolve('http://localhost:8080/hook')).rejects.toBeInstanceOf(WebhookRefusedError);
  });

  it.each([
    ['ftp://93.184.216.34/hook', /http or https/],
    ['file:///etc/passwd', /http or https/],
    ['http://user:pass@93.184.216.34/hook', /user name or password/],
    ['not a url', /absolute URL/],
    ['http://nowhere.test/hook', /does not resolve/],
  ])('refuses %s', async (url, reason) => {
    await expect(guard.resolve(url)).rejects.toThrow(reason);
  });

  it('accepts public addresses and names, and connects to the address it checked', async () => {
    await expect(guard.resolve('https://public.test/hook')).resolves.toMatchObject({ hostname: 'public.test', address: '93.184.216.34', family: 4 });
    await expect(guard.resolve('https://v6.test/hook')).resolves.toMatchObject({ family: 6 });
    await expect(guard.resolve('http://93.184.216.34:8080/x')).resolves.toMatchObject({ address: '93.184.216.34' });
    await expect(guard.resolve('http://[2606:2800:220:1:248:1893:25c8:1946]/x')).resolves.toMatchObject({ family: 6 });
  });

  it('lets allow-listed addresses, ranges and host names through', async () => {
    const allowing = new SsrfGuard({ lookup, allow: ['127.0.0.1', '10.0.0.0/8', 'metadata.test', '*.corp.test', '::1/128'] });
    await expect(allowing.resolve('http://127.0.0.1:3000/hook')).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(allowing.resolve('http://10.9.9.9/hook')).resolves.toBeDefined();
    await expect(allowing.resolve('http://private.test/hook')).resolves.toMatchObject({ address: '10.1.2.3' });
    await expect(allowing.resolve('http://metadata.test/hook')).resolves.toBeDefined();
    await expect(allowing.resolve('http://[::1]/hook')).resolves.toBeDefined();
    // Only what is listed: another loopback address, another private range.
    await expect(allowing.resolve('http://127.0.0.2/hook')).rejects.toBeInstanceOf(WebhookRefusedError);
    await expect(allowing.resolve('http://192.168.1.1/hook')).rejects.toBeInstanceOf(WebhookRefusedError);
  });

  it('accepts only the allow-list when public addresses are turned off', async () => {
    const closed = new SsrfGuard({ lookup, allow: ['127.0.0.1', 'hooks.corp.test'], publicAddresses: false });
    await expect(closed.resolve('http://127.0.0.1:3000/hook')).resolves.toMatchObject({ address: '127.0.0.1' });
    await expect(closed.resolve('http://93.184.216.34/hook')).rejects.toThrow(/not on the allow-list/);
    await expect(closed.resolve('https://public.test/hook')).rejects.toThrow(/not on the allow-list/);
    await expect(closed.resolve('http://[2606:2800:220:1:248:1893:25c8:1946]/x')).rejects.toBeInstanceOf(WebhookRefusedError);
    expect(closed.addressAllowed('93.184.216.34', 4)).toBe(false);
    expect(closed.addressAllowed('127.0.0.1', 4)).toBe(true);
  });

  it('rejects allow-list entries it cannot read', () => {
    expect(() => new SsrfGuard({ allow: ['10.0.0.0/33'] })).toThrow(/not a CIDR range/);
    expect(() => new SsrfGuard({ allow: ['hooks example.com'] })).toThrow(/not a host name/);
  });
});
