import type { LookupAddress } from 'node:dns';
import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where outbound webhooks may go. A tenant chooses the URL, so without these checks a webhook could
 * reach the service's own network: the VPC, a sidecar on loopback, or the cloud metadata endpoint
 * (169.254.169.254). Unless a deployment allows private targets (local mode does), a target must be
 * https and every address its host resolves to must be a public one; the connection then goes to the
 * address that was checked, so a DNS answer that changes between check and connect cannot slip through.
 */

export const MAX_WEBHOOK_URL_LENGTH = 2048;

interface Range {
  label: string;
  list: BlockList;
}

const range = (label: string, subnets: Array<[string, number, 'ipv4' | 'ipv6']>): Range => {
  const list = new BlockList();
  for (const [network, prefix, family] of subnets) list.addSubnet(network, prefix, family);
  return { label, list };
};

/** Ranges that are not the public Internet, with the word an error message uses for each. */
const REFUSED_RANGES: Range[] = [
  range('unspecified', [
    ['0.0.0.0', 8, 'ipv4'],
    ['::', 128, 'ipv6'],
  ]),
  range('loopback', [
    ['127.0.0.0', 8, 'ipv4'],
    ['::1', 128, 'ipv6'],
  ]),
  range('private', [
    ['10.0.0.0', 8, 'ipv4'],
    ['172.16.0.0', 12, 'ipv4'],
    ['192.168.0.0', 16, 'ipv4'],
    // IETF protocol assignments and benchmarking networks: never a customer's server.
    ['192.0.0.0', 24, 'ipv4'],
    ['198.18.0.0', 15, 'ipv4'],
    // Deprecated site-local IPv6 addresses, still routed as private by some networks.
    ['fec0::', 10, 'ipv6'],
  ]),
  range('carrier-grade NAT', [['100.64.0.0', 10, 'ipv4']]),
  range('link-local', [
    ['169.254.0.0', 16, 'ipv4'],
    ['fe80::', 10, 'ipv6'],
  ]),
  range('unique-local', [['fc00::', 7, 'ipv6']]),
  range('multicast', [
    ['224.0.0.0', 4, 'ipv4'],
    ['ff00::', 8, 'ipv6'],
  ]),
  range('reserved', [
    ['240.0.0.0', 4, 'ipv4'],
    ['100::', 64, 'ipv6'],
  ]),
];

/**
 * The IPv4 address an IPv6 address carries, for the forms that reach an IPv4 host: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedIPv4(address: string): string | undefined {
  const words = ipv6Words(address);
  if (!words) return undefined;
  const v4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const zeros = (from: number, to: number) => words.slice(from, to).every((word) => word === 0);
  if (zeros(0, 5) && (words[5] === 0xffff || words[5] === 0)) return v4(words[6] ?? 0, words[7] ?? 0);
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return v4(words[6] ?? 0, words[7] ?? 0);
  if (words[0] === 0x2002) return v4(words[1] ?? 0, words[2] ?? 0);
  return undefined;
}

/** The eight 16-bit words of an IPv6 address (with `::` and a trailing dotted quad expanded). */
function ipv6Words(address: string): number[] | undefined {
  let text = address.toLowerCase().split('%')[0] as string;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part ? part.split(':').map((word) => Number.parseInt(word, 16)) : []);
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const words = tail === undefined ? left : [...left, ...new Array(8 - left.length - right.length).fill(0), ...right];
  return words.length === 8 && words.every((word) => Number.isInteger(word)) ? words : undefined;
}

/** Why an IP address may not be a webhook target (`'loopback'`, `'private'`…), or undefined when it may. */
export function refusedRange(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'invalid';
  const type = family === 4 ? 'ipv4' : 'ipv6';
  for (const { label, list } of REFUSED_RANGES) if (list.check(address, type)) return label;
  if (family === 6) {
    const v4 = embeddedIPv4(address);
    if (v4) return refusedRange(v4);
  }
  return undefined;
}

/** A URL's host without the brackets of an IPv6 literal. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * The host the rules judge. The URL parser has already lower-cased it, read every IPv4 spelling (decimal,
 * hex, octal, short forms, a trailing dot) as the dotted quad it is, and written IPv6 in its shortest
 * form (IPv4-mapped and -compatible addresses are judged by the IPv4 address they carry). It keeps the
 * trailing dots of a name, though, and to a resolver `localhost.` is localhost.
 */
const normalizedHost = (url: URL): string => hostOf(url).replace(/\.+$/, '');

const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/**
 * Names that cannot be a host on the public Internet, whatever they resolve to: a name of one label
 * (`metadata`, `instance-data`: the resolver's search list makes it a name of the local network), and
 * the suffixes set aside for private networks: `.internal` (ICANN; `metadata.google.internal` is the
 * cloud metadata endpoint), `.local` (mDNS, and Kubernetes' `cluster.local`), `.localdomain`,
 * `.home.arpa` (RFC 8375), `.corp` and `.home` (which ICANN will not delegate), and `.lan` and `.intranet`
 * (names in private use, RFC 6762 appendix G).
 */
const PRIVATE_SUFFIXES = ['internal', 'local', 'localdomain', 'home.arpa', 'corp', 'home', 'lan', 'intranet'];

const isPrivateName = (host: string) =>
  !host.includes('.') || PRIVATE_SUFFIXES.some((suffix) => host === suffix || host.endsWith(`.${suffix}`));

/**
 * What is wrong with a URL as a webhook target, or undefined when it may be registered. Only the URL
 * itself is judged here; names are resolved (and judged again) before every delivery attempt.
 *
 * @example
 * webhookUrlProblem('http://10.0.0.7/hook', { allowPrivateTargets: false }) // 'must use https'
 */
export function webhookUrlProblem(raw: string, options: { allowPrivateTargets: boolean }): string | undefined {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL';
  }
  const schemes = options.allowPrivateTargets ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) {
    return options.allowPrivateTargets ? 'must use https or http' : 'must use https';
  }
  if (url.username || url.password) return 'must not contain credentials (user:password@)';
  if (options.allowPrivateTargets) return undefined;
  const host = normalizedHost(url);
  if (isIP(host)) {
    const refused = refusedRange(host);
    if (refused) return `must not point to a ${refused} address`;
  } else if (isLocalhostName(host)) {
    return 'must not point to localhost';
  } else if (isPrivateName(host)) {
    return 'must name a host on the public Internet, not a name of a private network';
  }
  return undefined;
}

/** A host's addresses, as `dns.lookup` with `all: true` gives them. */
export type HostLookup = (host: string) => Promise<Array<{ address: string; family: number }>>;

export const dnsLookup: HostLookup = (host) => lookup(host, { all: true, verbatim: true });

/** A target that the rules above refuse; its attempt is logged as failed without a request being sent. */
/**
 * A `lookup` for `http(s).request` that answers the one address a target was vetted at, whatever the name
 * would resolve to by the time of the connection (DNS rebinding).
 */
export function pinnedLookup(target: { address: string; family: 4 | 6 }) {
  return (
    _host: string,
    options: { all?: boolean },
    callback: (error: Error | null, address: string | LookupAddress[], family?: number) => void,
  ) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
}

export class TargetRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TargetRefusedError';
  }
}

/**
 * The address to connect to for a delivery: the literal address, or the first that the host resolves
 * to once all of them have passed (a host with one private address among public ones is refused, since
 * the client would not control which one is used).
 */
export async function vetTarget(
  url: URL,
  options: { allowPrivateTargets: boolean; lookup: HostLookup },
): Promise<{ address: string; family: 4 | 6 }> {
  const problem = webhookUrlProblem(url.href, options);
  if (problem) throw new TargetRefusedError(`Refused: the URL ${problem}`);
  const host = hostOf(url);
  const literal = isIP(host);
  // The name as written: its trailing dot makes it absolute, where without it a resolver's search list
  // could append a domain. Whatever it resolves to is judged below.
  const addresses = literal ? [{ address: host, family: literal }] : await options.lookup(host);
  if (addresses.length === 0) throw new Error(`DNS lookup of ${host} returned no address`);
  if (!options.allowPrivateTargets) {
    for (const { address } of addresses) {
      const refused = refusedRange(address);
      if (refused) {
        throw new TargetRefusedError(`Refused: ${host} resolves to a ${refused} address (${address})`);
      }
    }
  }
  const [first] = addresses as [{ address: string; family: number }];
  return { address: first.address, family: first.family === 6 ? 6 : 4 };
}
