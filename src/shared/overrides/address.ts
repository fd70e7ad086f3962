// IP addresses and networks, pure: parsing and normalizing IPv4 and IPv6 (RFC 4291 text, RFC 5952
// canonical form), the keys `RateLimiter.requestKey` makes of them, CIDR networks, and the flat
// list of address intervals that answers "which network entry holds this address" in one indexed
// read. Written here, with no dependency: a few dozen lines of parsing, and BigInt for 128 bits.
import { invalid } from "../validation/validate.js";
import type { NetworkInterval } from "../shapes/override-validators.js";

/**
 * An address in one space for both families: an IPv6 address as its 128 bits, an IPv4 address as
 * its IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), so one ordering and one network arithmetic
 * serve both. `v4` says it is (or maps) an IPv4 address.
 */
export type Address = { value: bigint; v4: boolean };

/** A CIDR network in the same space: its first address and its prefix length there (0-128; an IPv4 /n is 96 + n). */
export type Network = { start: bigint; prefix: number };

const MAPPED = 0xffffn << 32n;
const ALL = (1n << 128n) - 1n;

/** The address `::ffff:0:0/96` holds: every IPv4 address, mapped. */
function isMapped(value: bigint): boolean {
  return value >> 32n === 0xffffn;
}

/** The 32 bits of a dotted quad, or undefined unless it is exactly four decimal octets (no leading zeros). */
function parseV4(text: string): number | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    // Leading zeros are refused: some parsers read "010" as octal (8), others as 10.
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const octet = Number(part);
    if (octet > 255) return undefined;
    value = value * 256 + octet;
  }
  return value;
}

/** The 128 bits of an IPv6 address in RFC 4291 text (hex groups, one `::`, an IPv4 tail), or undefined. */
function parseV6(text: string): bigint | undefined {
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const groupsOf = (half: string): number[] | undefined => {
    if (half === "") return [];
    const parts = half.split(":");
    const groups: number[] = [];
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i]!;
      if (i === parts.length - 1 && part.includes(".")) {
        const v4 = parseV4(part);
        if (v4 === undefined) return undefined;
        groups.push(v4 >>> 16, v4 & 0xffff);
      } else if (/^[0-9a-fA-F]{1,4}$/.test(part)) groups.push(parseInt(part, 16));
      else return undefined;
    }
    return groups;
  };
  const head = groupsOf(halves[0]!);
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : [];
  if (head === undefined || tail === undefined) return undefined;
  // An IPv4 tail is only allowed last: in the head it may not be followed by `::`.
  if (halves.length === 2 && halves[0]!.includes(".")) return undefined;
  const given = head.length + tail.length;
  if (halves.length === 2 ? given > 7 : given !== 8) return undefined;
  const groups = [...head, ...new Array<number>(8 - given).fill(0), ...tail];
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
}

/**
 * parseAddress reads an IPv4 address (a dotted quad) or an IPv6 address (any RFC 4291 spelling,
 * any case, with an IPv4 tail or not); an IPv4-mapped IPv6 address is its IPv4 address. Throws an
 * `InvalidRateLimit` `ConvexError` naming `field` for anything else, a zone id (`fe80::1%eth0`,
 * meaningful only on one host) included.
 */
export function parseAddress(text: string, field: string): Address {
  if (typeof text !== "string") throw invalid(field, text, "must be an IPv4 or IPv6 address");
  if (text.includes("%")) throw invalid(field, text, "has a zone id (after %), which names a link on one host, not an address; pass the address alone");
  if (!text.includes(":")) {
    const v4 = parseV4(text);
    if (v4 === undefined) throw invalid(field, text, "is not an IPv4 address (four decimal octets 0-255, no leading zeros) or an IPv6 address");
    return { value: MAPPED | BigInt(v4), v4: true };
  }
  const value = parseV6(text);
  if (value === undefined) throw invalid(field, text, "is not an IPv6 address (eight groups of up to 4 hex digits, at most one ::, an optional IPv4 tail)");
  return { value, v4: isMapped(value) };
}

/** The dotted quad of a mapped IPv4 address's low 32 bits. */
function formatV4(value: bigint): string {
  const n = Number(value & 0xffffffffn);
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/**
 * formatAddress writes an address in its one canonical form: IPv4 as a dotted quad; IPv6 as RFC
 * 5952 says (lowercase, no leading zeros, the longest run of two or more zero groups as `::`, the
 * first of equal runs).
 */
export function formatAddress(address: Address): string {
  if (address.v4) return formatV4(address.value);
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((address.value >> BigInt(16 * i)) & 0xffffn));
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(":");
  return `${hex.slice(0, best.at).join(":")}::${hex.slice(best.at + best.length).join(":")}`;
}

/** The mask of a prefix length in the 128-bit space: its first `prefix` bits set. */
function maskOf(prefix: number): bigint {
  return prefix === 0 ? 0n : (ALL >> BigInt(128 - prefix)) << BigInt(128 - prefix);
}

/** The last address of a network. */
export function networkEnd(network: Network): bigint {
  return network.start | (ALL ^ maskOf(network.prefix));
}

/** Whether `network` holds `address`. */
export function networkContains(network: Network, address: bigint): boolean {
  return (address & maskOf(network.prefix)) === network.start;
}

/** The default IPv6 prefix `requestKey` groups addresses by: /64, one site's subnet, what one user's devices rotate within. */
export const DEFAULT_IPV6_PREFIX = 64;

/** Checks an IPv6 grouping prefix: a whole number from 1 to 128. */
export function validateIpv6Prefix(prefix: number, field: string): void {
  if (!(Number.isInteger(prefix) && prefix >= 1 && prefix <= 128)) throw invalid(field, prefix, "must be a whole number of bits from 1 to 128");
}

/**
 * addressKey returns the key of an address: an IPv4 address as its dotted quad; an IPv6 address as
 * the network of its first `ipv6Prefix` bits (default {@link DEFAULT_IPV6_PREFIX}), written
 * `network/prefix` in canonical form, so every address of one /64 (and every spelling of each)
 * is one key, e.g. `2001:db8:1:2::/64`.
 */
export function addressKey(address: Address, ipv6Prefix = DEFAULT_IPV6_PREFIX): string {
  if (address.v4) return formatV4(address.value);
  const start = address.value & maskOf(ipv6Prefix);
  return `${formatAddress({ value: start, v4: false })}/${ipv6Prefix}`;
}

/**
 * parseNetwork reads a CIDR network, `address/prefix` (IPv4 prefixes 0-32, IPv6 0-128), or a bare
 * address (one host: /32 or /128). Its host bits must be zero (`203.0.113.0/24`, not
 * `203.0.113.7/24`, which is refused naming the network meant). Throws an `InvalidRateLimit`
 * `ConvexError` naming `field`.
 */
export function parseNetwork(text: string, field: string): Network {
  if (typeof text !== "string") throw invalid(field, text, "must be a CIDR network, e.g. 203.0.113.0/24 or 2001:db8::/32");
  const slash = text.indexOf("/");
  const addressText = slash < 0 ? text : text.slice(0, slash);
  let address: Address;
  try {
    address = parseAddress(addressText, field);
  } catch {
    if (addressText.includes("%")) throw invalid(field, text, "has a zone id (after %), which names a link on one host; a network has none");
    throw invalid(field, text, "is not a CIDR network (an IPv4 or IPv6 address, then / and a prefix length), e.g. 203.0.113.0/24 or 2001:db8::/32");
  }
  // An address written as IPv6 (even IPv4-mapped) takes an IPv6 prefix.
  const writtenV4 = !addressText.includes(":");
  const max = writtenV4 ? 32 : 128;
  let prefix = max;
  if (slash >= 0) {
    const prefixText = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText)) throw invalid(field, text, `has no prefix length after / (a whole number from 0 to ${max})`);
    prefix = Number(prefixText);
    if (prefix > max) throw invalid(field, text, `has prefix /${prefix}, out of range: an ${writtenV4 ? "IPv4" : "IPv6"} prefix is 0 to ${max}`);
  }
  const network = { start: address.value, prefix: writtenV4 ? 96 + prefix : prefix };
  const start = address.value & maskOf(network.prefix);
  if (start !== address.value) {
    throw invalid(field, text, `has host bits set: the network is ${formatNetwork({ start, prefix: network.prefix })}`);
  }
  return network;
}

/**
 * formatNetwork writes a network in canonical form: one inside `::ffff:0:0/96` (IPv4) as IPv4
 * CIDR (`203.0.113.0/24`), any other as IPv6 CIDR in RFC 5952 form (`2001:db8::/32`).
 */
export function formatNetwork(network: Network): string {
  if (network.prefix >= 96 && isMapped(network.start)) return `${formatV4(network.start)}/${network.prefix - 96}`;
  return `${formatAddress({ value: network.start, v4: false })}/${network.prefix}`;
}

/** canonicalNetwork returns a CIDR network's canonical text (see {@link parseNetwork}, {@link formatNetwork}). */
export function canonicalNetwork(text: string, field: string): string {
  return formatNetwork(parseNetwork(text, field));
}

/**
 * hexOf writes a 128-bit address as 32 lowercase hex digits: ordered as strings exactly as the
 * addresses are as numbers, so an index over them answers range queries.
 */
export function hexOf(value: bigint): string {
  return value.toString(16).padStart(32, "0");
}

/**
 * networkIntervals flattens a limit's network entries (canonical CIDR texts) into the fewest
 * non-overlapping intervals, in address order, each carrying the entry that wins for every address
 * in it: the longest prefix holding it (CIDR networks are nested or disjoint, so this is a
 * tree). An address in no interval is in no entry. A request then finds its entry in one indexed
 * read: the last interval starting at or before the address, if it ends at or after it.
 */
export function networkIntervals(entries: readonly string[]): NetworkInterval[] {
  const nets = [...new Set(entries)]
    .map((text) => ({ text, net: parseNetwork(text, "network") }))
    .map(({ text, net }) => ({ text, start: net.start, end: networkEnd(net) }))
    // Outer networks before the ones nested in them.
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.end > b.end ? -1 : a.end < b.end ? 1 : 0));
  const out: NetworkInterval[] = [];
  const emit = (from: bigint, to: bigint, network: string) => {
    if (from <= to) out.push({ start: hexOf(from), end: hexOf(to), network });
  };
  const stack: typeof nets = [];
  let cursor = 0n;
  // Closes every open network that ends before `until`, emitting what of it is not nested deeper.
  const closeBefore = (until: bigint) => {
    while (stack.length > 0 && stack[stack.length - 1]!.end < until) {
      const top = stack.pop()!;
      emit(cursor, top.end, top.text);
      cursor = top.end + 1n;
    }
  };
  for (const net of nets) {
    closeBefore(net.start);
    const top = stack[stack.length - 1];
    if (top !== undefined) emit(cursor, net.start - 1n, top.text);
    cursor = net.start;
    stack.push(net);
  }
  closeBefore(ALL + 1n);
  return out;
}
