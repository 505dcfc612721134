/**
 * Where the server may connect: the one decider of the optional egress policy
 * ALLOWED_UPSTREAM_HOSTS (lib/config.ts). Every outbound client (Superset, git providers and
 * remotes, LLM providers, the S3 backup store, the OIDC provider) asks it, at create/update time
 * through assertDestinationAllowed and at connect time through the lookup of ./connect.ts.
 *
 * The policy is an allow-list of entries, comma-separated:
 *   superset.example.com       that host name exactly
 *   *.example.com              any name under example.com (not example.com itself)
 *   10.1.2.3, 2001:db8::7      that address
 *   10.0.0.0/8, fd00::/8       any address in that range (IPv4 and IPv6; IPv4-mapped IPv6 counts as IPv4)
 * A destination is allowed when its host name matches a name entry, or when its host is an
 * address in an allowed range, or when every address its name resolves to is (a name no entry
 * names is resolved for that; the connection then goes to the address that was checked). No
 * entries (unset) means no restriction.
 *
 * Entries are parsed by the WHATWG URL parser (names: IDNA, case, a trailing dot) and node:net
 * (addresses and ranges, BlockList), never by hand.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { HostNotAllowedError } from '../errors.ts';

/** Resolves a host name to every address it has (dns.lookup, the resolver the sockets use). */
export type Resolve = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** What the policy says of a host before any DNS: allowed, refused, or allowed only if every address it resolves to is. */
export type HostVerdict = 'allowed' | 'refused' | 'by_address';

/** A host as the URL parser spells it: lower case, no IPv6 brackets, no trailing dot. */
export function normaliseHost(host: string): string {
  const h = host.toLowerCase().replace(/\.$/, '');
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** The host of a URL (WHATWG parser), normalised; throws a TypeError for a URL without one. */
export function hostOfUrl(url: string | URL): string {
  const host = normaliseHost((typeof url === 'string' ? new URL(url) : url).hostname);
  if (!host) throw new TypeError('the URL has no host');
  return host;
}

/** A host name entry as the URL parser reads it, or undefined when it is not one. */
function parseName(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(`http://${raw}/`);
  } catch {
    // expected: not a host: not on the list.
    return undefined;
  }
  const host = normaliseHost(url.hostname);
  // Only a bare name: no port, path, credentials or anything the parser would have moved elsewhere.
  if (url.port || url.username || url.password || url.pathname !== '/' || url.search || url.hash) return undefined;
  if (!host || isIP(host) || host.includes('*')) return undefined;
  return host;
}

function parseRange(raw: string, ranges: BlockList): boolean {
  const slash = raw.lastIndexOf('/');
  const address = normaliseHost(raw.slice(0, slash));
  const bits = raw.slice(slash + 1);
  const family = isIP(address);
  if (!family || !/^\d{1,3}$/.test(bits)) return false;
  try {
    ranges.addSubnet(address, Number(bits), family === 4 ? 'ipv4' : 'ipv6');
    return true;
  } catch {
    // expected: a prefix out of range for the family is refused by the caller.
    return false; // prefix out of range for the family
  }
}

export class EgressPolicyError extends Error {
  override name = 'EgressPolicyError';
}

export class EgressPolicy {
  /** The entries as given (trimmed), for messages and the documentation of a refusal. */
  readonly entries: readonly string[];
  readonly restricted: boolean;
  readonly resolve: Resolve;
  private readonly names = new Set<string>();
  private readonly suffixes: string[] = [];
  private readonly addresses = new BlockList();
  private hasAddresses = false;

  private constructor(entries: readonly string[], resolve: Resolve) {
    this.entries = entries;
    this.restricted = entries.length > 0;
    this.resolve = resolve;
  }

  /** No restriction (ALLOWED_UPSTREAM_HOSTS unset). */
  static readonly OPEN = new EgressPolicy([], systemResolve);

  /**
   * Parses the entries; every bad one is named in one EgressPolicyError. `resolve` replaces the
   * system resolver (tests).
   */
  static parse(entries: readonly string[], opts: { resolve?: Resolve } = {}): EgressPolicy {
    const list = entries.map((e) => e.trim()).filter(Boolean);
    const policy = new EgressPolicy(list, opts.resolve ?? systemResolve);
    const bad: string[] = [];
    for (const raw of list) {
      const entry = raw.toLowerCase();
      if (entry.includes('/')) {
        if (parseRange(entry, policy.addresses)) policy.hasAddresses = true;
        else bad.push(`'${raw}': not an address range (address/prefix, e.g. 10.0.0.0/8 or fd00::/8)`);
      } else if (isIP(normaliseHost(entry))) {
        const address = normaliseHost(entry);
        policy.addresses.addAddress(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');
        policy.hasAddresses = true;
      } else if (entry.startsWith('*.')) {
        const name = parseName(entry.slice(2));
        if (name) policy.suffixes.push(`.${name}`);
        else bad.push(`'${raw}': not a wildcard name (*.example.com)`);
      } else {
        const name = parseName(entry);
        if (name) policy.names.add(name);
        else bad.push(`'${raw}': not a host name, address or range (a '*' only as '*.' before a name)`);
      }
    }
    if (bad.length) throw new EgressPolicyError(bad.join('; '));
    return policy;
  }

  /** Whether an address (IPv4 or IPv6, brackets allowed) is in an allowed range. */
  allowsAddress(address: string): boolean {
    if (!this.restricted) return true;
    const a = normaliseHost(address);
    const family = isIP(a);
    return family !== 0 && this.addresses.check(a, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** The verdict on a host (a name or an address) before any DNS. */
  hostVerdict(host: string): HostVerdict {
    if (!this.restricted) return 'allowed';
    const h = normaliseHost(host);
    if (isIP(h)) return this.allowsAddress(h) ? 'allowed' : 'refused';
    if (this.names.has(h) || this.suffixes.some((s) => h.endsWith(s))) return 'allowed';
    return this.hasAddresses ? 'by_address' : 'refused';
  }

  /**
   * The addresses a connection to `host` may use: all of them for an allowed name or address, and
   * for a name allowed only by its addresses, the resolved ones when every one is allowed. Throws
   * HostNotAllowedError (503) otherwise: a name that now resolves to an address outside the ranges
   * is refused, not connected to.
   */
  async addressesFor(host: string): Promise<Array<{ address: string; family: number }>> {
    const h = normaliseHost(host);
    const family = isIP(h);
    const verdict = this.hostVerdict(h);
    if (verdict === 'refused') throw refusal(h, 'connect');
    if (family) return [{ address: h, family }];
    const addresses = await this.resolve(h);
    if (verdict === 'allowed') return addresses;
    const outside = addresses.filter((a) => !this.allowsAddress(a.address));
    if (!addresses.length || outside.length)
      throw refusal(
        h,
        'connect',
        outside.map((a) => a.address),
      );
    return addresses;
  }
}

function refusal(host: string, when: 'input' | 'connect', outside: string[] = [], field?: string): HostNotAllowedError {
  const resolved = outside.length ? ` (it resolves to ${outside.slice(0, 4).join(', ')})` : '';
  return new HostNotAllowedError(host, `${host}${resolved} is not allowed by ALLOWED_UPSTREAM_HOSTS`, when, field);
}

/**
 * Refuses (400 `host_not_allowed`, before anything is stored) a URL the policy does not allow; a
 * name allowed only by address ranges is resolved now and every address checked. Call it on every
 * destination a request would store (a base URL, a remote).
 */
export async function assertDestinationAllowed(policy: EgressPolicy, url: string, field: string): Promise<void> {
  if (!policy.restricted) return;
  const host = hostOfUrl(url);
  const verdict = policy.hostVerdict(host);
  if (verdict === 'allowed') return;
  if (verdict === 'refused') throw refusal(host, 'input', [], field);
  let addresses: Array<{ address: string }>;
  try {
    addresses = await policy.resolve(host);
  } catch {
    throw new HostNotAllowedError(host, `${host} does not resolve, so it cannot be checked against ALLOWED_UPSTREAM_HOSTS`, 'input', field);
  }
  const outside = addresses.filter((a) => !policy.allowsAddress(a.address)).map((a) => a.address);
  if (!addresses.length || outside.length) throw refusal(host, 'input', outside, field);
}

/** Refuses a configured destination (a variable) the policy cannot allow whatever it resolves to: called at start. */
export function configuredDestinationError(policy: EgressPolicy, variable: string, url: string | undefined): string | undefined {
  if (!url || !policy.restricted) return undefined;
  const host = hostOfUrl(url);
  return policy.hostVerdict(host) === 'refused' ? `${variable}: ${host} is not allowed by ALLOWED_UPSTREAM_HOSTS` : undefined;
}

/** The policy a configuration names, built once per list (every client of one process shares it). */
const built = new Map<string, EgressPolicy>();
export function egressPolicy(config: { ALLOWED_UPSTREAM_HOSTS?: readonly string[] }): EgressPolicy {
  const entries = config.ALLOWED_UPSTREAM_HOSTS ?? [];
  if (!entries.length) return EgressPolicy.OPEN;
  const key = entries.join(',');
  let policy = built.get(key);
  if (!policy) built.set(key, (policy = EgressPolicy.parse(entries)));
  return policy;
}

/** The policy's refusal anywhere in an error's chain (undici and fetch wrap connection errors in `cause`). */
export function egressRefusal(err: unknown, depth = 0): HostNotAllowedError | undefined {
  if (err instanceof HostNotAllowedError) return err;
  if (!err || typeof err !== 'object' || depth > 5) return undefined;
  const e = err as { cause?: unknown; errors?: unknown[] };
  for (const inner of [e.cause, ...(Array.isArray(e.errors) ? e.errors : [])]) {
    const found = egressRefusal(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}
