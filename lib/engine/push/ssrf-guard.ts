/**
 * The SSRF guard for webhook URLs (§13.2): http(s) only, no userinfo, and every address a host
 * resolves to must be public (not loopback, private, CGNAT, link-local, multicast, unspecified,
 * reserved or a cloud metadata address) unless the allow-list names the host or the address.
 * Checked at Create on the URL, and again at delivery on the address actually connected to.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** One resolved address of a host. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to all its addresses (node's dns.lookup by default; tests inject their own). */
export type WebhookLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** A webhook URL the guard refuses; `message` says why without echoing credentials. */
export class WebhookRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookRefusedError';
  }
}

/** Where a delivery connects: the parsed URL and the one checked address to connect to. */
export interface WebhookTarget {
  readonly url: URL;
  /** The host as written, without IPv6 brackets (Host header, TLS server name). */
  readonly hostname: string;
  readonly address: string;
  readonly family: 4 | 6;
}

// Not publicly routable, or routable to something the server itself can reach: refused by default.
const BLOCKED_V4: ReadonlyArray<readonly [string, number]> = [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8], // RFC 1918
  ['100.64.0.0', 10], // CGNAT (RFC 6598), also Alibaba's metadata 100.100.100.200
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12], // RFC 1918
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.168.0.0', 16], // RFC 1918
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];
const BLOCKED_V6: ReadonlyArray<readonly [string, number]> = [
  ['::', 96], // unspecified, loopback ::1, IPv4-compatible
  ['64:ff9b::', 96], // NAT64: reaches any IPv4 address, private ones included
  ['64:ff9b:1::', 48], // local-use NAT64
  ['100::', 64], // discard
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique local, AWS metadata fd00:ec2::254
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];

/** The default block list; IPv4 rules also match IPv4-mapped IPv6 (`::ffff:127.0.0.1`). */
function defaultBlockList(): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of BLOCKED_V4) list.addSubnet(network, prefix, 'ipv4');
  for (const [network, prefix] of BLOCKED_V6) list.addSubnet(network, prefix, 'ipv6');
  return list;
}

const familyName = (family: 4 | 6): 'ipv4' | 'ipv6' => (family === 4 ? 'ipv4' : 'ipv6');

/** The allow-list: host names (exact, or `*.example.com`), IP addresses and CIDR ranges. */
export interface ParsedAllowList {
  readonly hosts: ReadonlySet<string>;
  readonly suffixes: readonly string[];
  readonly addresses: BlockList;
}

/** Parses allow-list entries; throws a TypeError naming a bad entry (the router reports it as an options error). */
export function parseAllowList(entries: readonly string[]): ParsedAllowList {
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  const addresses = new BlockList();
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    const slash = entry.indexOf('/');
    if (slash !== -1) {
      const network = unbracket(entry.slice(0, slash));
      const family = isIP(network);
      const prefix = Number(entry.slice(slash + 1));
      if (family === 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 4 ? 32 : 128)) {
        throw new TypeError(`"${raw}" is not a CIDR range such as 127.0.0.1/32 or ::1/128`);
      }
      addresses.addSubnet(network, prefix, family === 4 ? 'ipv4' : 'ipv6');
    } else if (isIP(unbracket(entry))) {
      const address = unbracket(entry);
      addresses.addAddress(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
    } else if (entry.startsWith('*.') && entry.length > 2) {
      suffixes.push(entry.slice(1)); // '.example.com'
    } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/.test(entry)) {
      hosts.add(entry.endsWith('.') ? entry.slice(0, -1) : entry);
    } else {
      throw new TypeError(`"${raw}" is not a host name, an IP address or a CIDR range`);
    }
  }
  return { hosts, suffixes, addresses };
}

const unbracket = (host: string): string => (host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host);

const defaultLookup: WebhookLookup = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 }));

export interface SsrfGuardOptions {
  /** Host names, IP addresses or CIDR ranges exempt from the check (e.g. a receiver on loopback). */
  readonly allow?: readonly string[];
  readonly lookup?: WebhookLookup;
  /** false: only `allow` is accepted, public addresses too are refused. Default true. */
  readonly publicAddresses?: boolean;
}

export class SsrfGuard {
  readonly #blocked = defaultBlockList();
  readonly #allow: ParsedAllowList;
  readonly #lookup: WebhookLookup;
  readonly #publicAddresses: boolean;

  constructor(options: SsrfGuardOptions = {}) {
    this.#allow = parseAllowList(options.allow ?? []);
    this.#lookup = options.lookup ?? defaultLookup;
    this.#publicAddresses = options.publicAddresses ?? true;
  }

  /** The URL parsed, if its form is acceptable (scheme, no userinfo); WebhookRefusedError otherwise. */
  parse(text: string): URL {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw new WebhookRefusedError('is not an absolute URL');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new WebhookRefusedError('must be an http or https URL');
    // Credentials travel in `authentication`, never in the URL (they would be logged with it).
    if (url.username || url.password) throw new WebhookRefusedError('must not contain a user name or password');
    if (!url.hostname) throw new WebhookRefusedError('has no host');
    return url;
  }

  /**
   * Resolves the URL's host once and checks every address: the one returned is the address to
   * connect to, so a name that resolves differently a moment later (DNS rebinding) changes nothing.
   */
  async resolve(text: string): Promise<WebhookTarget> {
    const url = this.parse(text);
    const hostname = unbracket(url.hostname).replace(/\.$/, '');
    const literal = isIP(hostname);
    let addresses: readonly ResolvedAddress[];
    if (literal !== 0) addresses = [{ address: hostname, family: literal === 4 ? 4 : 6 }];
    else {
      try {
        addresses = await this.#lookup(hostname);
      } catch {
        throw new WebhookRefusedError('has a host name that does not resolve');
      }
      if (addresses.length === 0) throw new WebhookRefusedError('has a host name that does not resolve');
    }
    const hostAllowed = literal === 0 && this.#hostAllowed(hostname.toLowerCase());
    // All of them, not just the first: a name resolving to a public and a private address is refused.
    for (const { address, family } of addresses) {
      if (!hostAllowed && !this.addressAllowed(address, family)) {
        throw new WebhookRefusedError(
          this.#publicAddresses
            ? 'points to a loopback, private, link-local, multicast or otherwise non-public address'
            : 'is not on the allow-list of webhook hosts',
        );
      }
    }
    return { url, hostname, address: addresses[0].address, family: addresses[0].family };
  }

  /** Whether the server may connect to `address`: allow-listed, or public (unless publicAddresses is off). */
  addressAllowed(address: string, family: 4 | 6): boolean {
    if (this.#allow.addresses.check(address, familyName(family))) return true;
    return this.#publicAddresses && !this.#blocked.check(address, familyName(family));
  }

  #hostAllowed(hostname: string): boolean {
    if (this.#allow.hosts.has(hostname)) return true;
    return this.#allow.suffixes.some((suffix) => hostname.endsWith(suffix));
  }
}
