/**
 * The SSRF guard for webhook URLs (§13.2): http(s), no userinfo, every resolved address public unless allow-listed.
 * Checked at Create on the URL, and again at delivery on the address actually connected to.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** node's dns.lookup by default; tests inject their own. */
export type WebhookLookup = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** Named to the client and in the log (never the address a name resolved to). */
type AddressClass = 'loopback' | 'private' | 'shared (CGNAT)' | 'link-local' | 'multicast' | 'unspecified' | 'reserved';

/** A webhook URL the guard refuses: `message` is for the client (no credentials, no server configuration). */
export class WebhookRefusedError extends Error {
  /** Set when the URL was refused for where it points (and the allow-list would let it through). */
  readonly addressClass?: AddressClass | 'not allow-listed';
  /** With addressClass: the allow-list entry that would let it through, for the operator's log only. */
  readonly allowEntry?: string;
  constructor(message: string, addressClass?: AddressClass | 'not allow-listed', allowEntry?: string) {
    super(message);
    this.name = 'WebhookRefusedError';
    if (addressClass) this.addressClass = addressClass;
    if (allowEntry !== undefined) this.allowEntry = allowEntry;
  }
}

export interface WebhookTarget {
  readonly url: URL;
  /** Without IPv6 brackets (Host header, TLS server name). */
  readonly hostname: string;
  readonly address: string;
  readonly family: 4 | 6;
}

// Not publicly routable, or routable to something the server itself can reach: refused by default.
// Within a family, a more specific range comes first: the first match names the class.
const BLOCKED_V4: ReadonlyArray<readonly [string, number, AddressClass]> = [
  ['0.0.0.0', 8, 'unspecified'], // "this network"
  ['10.0.0.0', 8, 'private'], // RFC 1918
  ['100.64.0.0', 10, 'shared (CGNAT)'], // RFC 6598, also Alibaba's metadata 100.100.100.200
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], // cloud metadata 169.254.169.254
  ['172.16.0.0', 12, 'private'], // RFC 1918
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'reserved'], // TEST-NET-1
  ['192.168.0.0', 16, 'private'], // RFC 1918
  ['198.18.0.0', 15, 'reserved'], // benchmarking
  ['198.51.100.0', 24, 'reserved'], // TEST-NET-2
  ['203.0.113.0', 24, 'reserved'], // TEST-NET-3
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // reserved, broadcast
];
const BLOCKED_V6: ReadonlyArray<readonly [string, number, AddressClass]> = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['::', 96, 'reserved'], // IPv4-compatible
  ['64:ff9b::', 96, 'reserved'], // NAT64: reaches any IPv4 address, private ones included
  ['64:ff9b:1::', 48, 'reserved'], // local-use NAT64
  ['100::', 64, 'reserved'], // discard
  ['2001:db8::', 32, 'reserved'], // documentation
  ['fc00::', 7, 'private'], // unique local, AWS metadata fd00:ec2::254
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'], // site-local (deprecated)
  ['ff00::', 8, 'multicast'],
];

/** Consulted only to name a refusal, never on the path that allows. */
const CLASSIFIED: ReadonlyArray<readonly [BlockList, AddressClass]> = [
  ...BLOCKED_V4.map(([network, prefix, cls]) => [rangeList(network, prefix, 'ipv4'), cls] as const),
  ...BLOCKED_V6.map(([network, prefix, cls]) => [rangeList(network, prefix, 'ipv6'), cls] as const),
];

function rangeList(network: string, prefix: number, family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return list;
}

function addressClassOf(address: string, family: 4 | 6): AddressClass {
  const name = familyName(family);
  return CLASSIFIED.find(([list]) => list.check(address, name))?.[1] ?? 'reserved';
}

/** The default block list; IPv4 rules also match IPv4-mapped IPv6 (`::ffff:127.0.0.1`). */
function defaultBlockList(): BlockList {
  const list = new BlockList();
  for (const [network, prefix] of BLOCKED_V4) list.addSubnet(network, prefix, 'ipv4');
  for (const [network, prefix] of BLOCKED_V6) list.addSubnet(network, prefix, 'ipv6');
  return list;
}

const familyName = (family: 4 | 6): 'ipv4' | 'ipv6' => (family === 4 ? 'ipv4' : 'ipv6');

interface ParsedAllowList {
  readonly hosts: ReadonlySet<string>;
  readonly suffixes: readonly string[];
  readonly addresses: BlockList;
}

/** Throws a TypeError naming a bad entry (the router reports it as an options error). */
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

interface SsrfGuardOptions {
  /** Host names, IP addresses or CIDR ranges exempt from the check (e.g. a receiver on loopback). */
  readonly allow?: readonly string[];
  readonly lookup?: WebhookLookup;
  /** false: only `allow` is accepted, public addresses too are refused. Default true. */
  readonly publicAddresses?: boolean;
  /** One exact URL prefix on a loopback address let through (the inspector's own receiver), nothing else. */
  readonly exempt?: (url: URL) => boolean;
}

export class SsrfGuard {
  readonly #blocked = defaultBlockList();
  readonly #allow: ParsedAllowList;
  readonly #lookup: WebhookLookup;
  readonly #publicAddresses: boolean;
  readonly #exempt: ((url: URL) => boolean) | undefined;

  constructor(options: SsrfGuardOptions = {}) {
    this.#exempt = options.exempt;
    this.#allow = parseAllowList(options.allow ?? []);
    this.#lookup = options.lookup ?? defaultLookup;
    this.#publicAddresses = options.publicAddresses ?? true;
  }

  /** WebhookRefusedError for a bad scheme or userinfo. */
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

  /** The address returned is the one to connect to, so a name resolving differently a moment later (DNS rebinding) changes nothing. */
  async resolve(text: string): Promise<WebhookTarget> {
    const url = this.parse(text);
    const hostname = unbracket(url.hostname).replace(/\.$/, '');
    const literal = isIP(hostname);
    if (literal !== 0 && this.#exempt?.(url)) return { url, hostname, address: hostname, family: literal === 4 ? 4 : 6 };
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
      if (!hostAllowed && !this.addressAllowed(address, family))
        throw this.#refusal(address, family, literal === 0 ? hostname.toLowerCase() : hostname);
    }
    return { url, hostname, address: addresses[0].address, family: addresses[0].family };
  }

  addressAllowed(address: string, family: 4 | 6): boolean {
    if (this.#allow.addresses.check(address, familyName(family))) return true;
    return this.#publicAddresses && !this.#blocked.check(address, familyName(family));
  }

  /** The kind of address for the client; the entry to allow-list, for the log. */
  #refusal(address: string, family: 4 | 6, host: string): WebhookRefusedError {
    if (!this.#publicAddresses && !this.#blocked.check(address, familyName(family))) {
      return new WebhookRefusedError('is not on the allow-list of webhook hosts', 'not allow-listed', host);
    }
    const cls = addressClassOf(address, family);
    return new WebhookRefusedError(`points to a non-public address (${cls}), refused to guard against SSRF`, cls, host);
  }

  #hostAllowed(hostname: string): boolean {
    if (this.#allow.hosts.has(hostname)) return true;
    return this.#allow.suffixes.some((suffix) => hostname.endsWith(suffix));
  }
}
