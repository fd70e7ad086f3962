// Addresses and networks, pure (src/shared/overrides/address.ts): tables of spellings, keys and networks at
// every prefix edge, bad input, and fast-check properties against a naive model (containment as
// bit comparison; the interval list against a scan of every entry).
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import {
  addressKey,
  canonicalNetwork,
  formatAddress,
  hexOf,
  networkContains,
  networkIntervals,
  parseAddress,
  parseNetwork,
  type Address,
} from "../src/shared/overrides/address.js";
import { runs } from "../tools/fast-check.js";
import type { InvalidRateLimitError } from "../src/shared/shapes/validators.js";
import { errorData } from "./error-data.js";

const invalidData = (call: () => unknown) => errorData(call) as InvalidRateLimitError | undefined;

const key = (text: string, prefix?: number) => addressKey(parseAddress(text, "ip"), prefix);
const contains = (network: string, address: string) => networkContains(parseNetwork(network, "network"), parseAddress(address, "ip").value);

describe("normalization", () => {
  test.each([
    // [spelling, canonical key, why]
    ["203.0.113.7", "203.0.113.7", "IPv4 as is"],
    ["::ffff:203.0.113.7", "203.0.113.7", "IPv4-mapped IPv6 is the IPv4 address"],
    ["::FFFF:cb00:7107", "203.0.113.7", "mapped, in hex groups and upper case"],
    ["0:0:0:0:0:ffff:203.0.113.7", "203.0.113.7", "mapped, expanded"],
    ["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64", "grouped by its /64"],
    ["2001:0DB8:0001:0002:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64", "expanded, leading zeros, upper case: one key"],
    ["2001:db8:1:2::", "2001:db8:1:2::/64", "compressed"],
    ["::1", "::/64", "loopback"],
    ["::", "::/64", "the unspecified address"],
    ["2001:db8::1.2.3.4", "2001:db8::/64", "an IPv4 tail that is not mapped stays IPv6"],
  ])("%s is %s (%s)", (spelling, expected) => {
    expect(key(spelling)).toBe(expected);
  });

  test.each([
    // [address, prefix, key]
    ["2001:db8:1:2:3:4:5:6", 128, "2001:db8:1:2:3:4:5:6/128"],
    ["2001:db8:1:2:3:4:5:6", 48, "2001:db8:1::/48"],
    ["2001:db8:1:2:3:4:5:6", 56, "2001:db8:1::/56"],
    ["2001:db8:1:2ff:3:4:5:6", 56, "2001:db8:1:200::/56"],
    ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 1, "8000::/1"],
    // The prefix groups IPv6 only.
    ["203.0.113.7", 1, "203.0.113.7"],
  ])("%s grouped by /%d is %s", (address, prefix, expected) => {
    expect(key(address, prefix)).toBe(expected);
  });

  test.each([
    // RFC 5952 section 4: the one canonical text.
    ["2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1", "the first of equal zero runs is compressed"],
    ["2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1", "a single zero group is not compressed"],
    ["2001:0:0:1:0:0:0:1", "2001:0:0:1::1", "the longest zero run is compressed"],
    ["1::", "1::", "trailing zeros"],
    ["1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0", "a :: standing for one group"],
  ])("%s is written %s (%s)", (spelling, expected) => {
    expect(formatAddress(parseAddress(spelling, "ip"))).toBe(expected);
  });

  test.each([
    ["203.0.113", "three octets"],
    ["203.0.113.256", "an octet over 255"],
    ["203.0.113.07", "a leading zero (octal to some parsers)"],
    ["203.0.113.7 ", "trailing space"],
    ["1:2:3:4:5:6:7:8:9", "nine groups"],
    ["1:2:3:4:5:6:7", "seven groups without ::"],
    ["1::2::3", "two ::"],
    ["12345::", "a five-digit group"],
    ["1.2.3.4::", "an IPv4 part before ::"],
    ["[::1]", "brackets"],
    ["", "empty"],
    ["fe80::1%eth0", "a zone id"],
  ])("%j is bad input (%s)", (text) => {
    expect(invalidData(() => parseAddress(text, "request.ip"))).toMatchObject({ kind: "InvalidRateLimit", field: "request.ip", value: JSON.stringify(text) });
  });

  test("a zone id's error says what it is", () => {
    expect(invalidData(() => parseAddress("fe80::1%eth0", "ip"))?.message).toMatch(/zone id/);
  });
});

describe("networks", () => {
  test.each([
    // [network, inside, outside] at each edge prefix.
    ["0.0.0.0/0", ["0.0.0.0", "255.255.255.255", "::ffff:1.2.3.4"], ["::1", "2001:db8::1"]],
    ["10.0.0.0/8", ["10.0.0.0", "10.255.255.255"], ["9.255.255.255", "11.0.0.0"]],
    ["203.0.113.6/31", ["203.0.113.6", "203.0.113.7"], ["203.0.113.5", "203.0.113.8"]],
    ["203.0.113.7/32", ["203.0.113.7", "::ffff:203.0.113.7"], ["203.0.113.6", "203.0.113.8"]],
    ["::/0", ["::", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "1.2.3.4"], []],
    ["2001:db8:1:2::/64", ["2001:db8:1:2::", "2001:db8:1:2:ffff:ffff:ffff:ffff"], ["2001:db8:1:1:ffff:ffff:ffff:ffff", "2001:db8:1:3::"]],
    ["2001:db8::/127", ["2001:db8::", "2001:db8::1"], ["2001:db8::2", "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff"]],
    ["2001:db8::1/128", ["2001:db8::1", "2001:DB8:0:0:0:0:0:1"], ["2001:db8::", "2001:db8::2"]],
  ])("%s holds exactly what it should", (network, inside, outside) => {
    for (const a of inside) expect(contains(network, a), a).toBe(true);
    for (const a of outside) expect(contains(network, a), a).toBe(false);
  });

  test.each([
    ["203.0.113.7", "203.0.113.7/32", "a bare address is one host"],
    ["2001:DB8::/32", "2001:db8::/32", "canonical IPv6"],
    ["::ffff:203.0.113.0/120", "203.0.113.0/24", "an IPv4-mapped network is the IPv4 one"],
    ["::ffff:0:0/96", "0.0.0.0/0", "every IPv4 address"],
    ["::/0", "::/0", "everything"],
  ])("%s is written %s (%s)", (text, expected) => {
    expect(canonicalNetwork(text, "target.network")).toBe(expected);
  });

  test.each([
    ["203.0.113.0/33", /out of range/, "an IPv4 prefix over 32"],
    ["2001:db8::/129", /out of range/, "an IPv6 prefix over 128"],
    ["203.0.113.0/-1", /prefix length/, "a negative prefix"],
    ["203.0.113.0/", /prefix length/, "no prefix after /"],
    ["203.0.113.0/024", /prefix length/, "a prefix with a leading zero"],
    ["203.0.113.7/24", /203\.0\.113\.0\/24/, "host bits set: names the network meant"],
    ["203.0.113/24", /not a CIDR network/, "a malformed address"],
    ["fe80::%eth0/64", /zone id/, "a zone id"],
    ["", /not a CIDR network/, "empty"],
  ])("%j is bad input (%s)", (text, message) => {
    const data = invalidData(() => parseNetwork(text, "target.network"));
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field: "target.network", value: JSON.stringify(text) });
    expect(data?.message).toMatch(message);
  });
});

// Properties: every spelling of an address is one key; containment is a comparison of the first
// `prefix` bits; the interval list answers every address as a scan of every entry would.
const bits128 = fc.bigInt({ min: 0n, max: (1n << 128n) - 1n });
const v6Arb: fc.Arbitrary<Address> = bits128.filter((b) => b >> 32n !== 0xffffn).map((value) => ({ value, v4: false }));
const v4Arb: fc.Arbitrary<Address> = fc.integer({ min: 0, max: 2 ** 32 - 1 }).map((n) => ({ value: (0xffffn << 32n) | BigInt(n), v4: true }));

/** Every group of an IPv6 address, as 8 numbers. */
function groups(value: bigint): number[] {
  return Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(16 * (7 - i))) & 0xffffn));
}

/** A random RFC 4291 spelling of an IPv6 address: each group padded or not, in random case, any zero run (or none) compressed. */
const spellingOf = (value: bigint) =>
  fc.record({ pad: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), upper: fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), cut: fc.nat() }).map(({ pad, upper, cut }) => {
    const g = groups(value).map((x, i) => {
      const hex = pad[i] ? x.toString(16).padStart(4, "0") : x.toString(16);
      return upper[i] ? hex.toUpperCase() : hex;
    });
    // Runs of zero groups at least one long that could be compressed, and none.
    const runs: [number, number][] = [];
    for (let i = 0; i < 8; i++) for (let j = i + 1; j <= 8; j++) if (groups(value).slice(i, j).every((x) => x === 0)) runs.push([i, j]);
    const pick = cut % (runs.length + 1);
    if (pick === runs.length) return g.join(":");
    const [i, j] = runs[pick]!;
    return `${g.slice(0, i).join(":")}::${g.slice(j).join(":")}`;
  });

describe("properties", () => {
  test.prop([v6Arb.chain((a) => fc.tuple(fc.constant(a), spellingOf(a.value)))], runs(500, 20_000))(
    "every spelling of an IPv6 address is one address and one key",
    ([address, spelling]) => {
      const parsed = parseAddress(spelling, "ip");
      expect(parsed).toEqual(address);
      expect(formatAddress(parsed)).toBe(formatAddress(address));
      expect(addressKey(parsed)).toBe(addressKey(address));
    },
  );

  test.prop([v4Arb, fc.boolean()], runs(300, 10_000))("an IPv4 address and its IPv4-mapped spellings are one key", (address, hex) => {
    const dotted = formatAddress(address);
    const low = Number(address.value & 0xffffffffn);
    const mapped = hex ? `::ffff:${(low >>> 16).toString(16)}:${(low & 0xffff).toString(16)}` : `::FFFF:${dotted}`;
    expect(key(dotted)).toBe(dotted);
    expect(key(mapped)).toBe(dotted);
  });

  test.prop([v6Arb, fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }), fc.integer({ min: 1, max: 128 })], runs(300, 10_000))(
    "two addresses share a key exactly when they share the first `prefix` bits",
    (a, low, prefix) => {
      const b = { value: (a.value >> 64n << 64n) | low, v4: false };
      if (b.value >> 32n === 0xffffn) return;
      // In one /64, always one key at /64; at any prefix, one key exactly when the prefixes match.
      expect(addressKey(a)).toBe(addressKey(b));
      const shift = BigInt(128 - prefix);
      expect(addressKey(a, prefix) === addressKey(b, prefix)).toBe(a.value >> shift === b.value >> shift);
    },
  );

  test.prop([bits128, fc.integer({ min: 0, max: 128 }), bits128], runs(500, 20_000))(
    "a network holds an address exactly when their first `prefix` bits are equal",
    (base, prefix, address) => {
      const shift = BigInt(128 - prefix);
      const start = prefix === 0 ? 0n : (base >> shift) << shift;
      const network = { start, prefix };
      expect(networkContains(network, address)).toBe(prefix === 0 || address >> shift === base >> shift);
      // Its own first and last addresses are in it.
      expect(networkContains(network, start)).toBe(true);
    },
  );

  // Networks near one another (a small space of /112 and longer inside one /96), so they nest and
  // touch often, and addresses probing their edges.
  const nearNetwork = fc.record({ low: fc.integer({ min: 0, max: 0xffff }), prefix: fc.integer({ min: 112, max: 128 }) }).map(({ low, prefix }) => {
    const shift = BigInt(128 - prefix);
    const start = ((0x20010db8n << 96n) | BigInt(low)) >> shift << shift;
    return { start, prefix };
  });

  test.prop([fc.array(nearNetwork, { maxLength: 12 }), fc.array(fc.integer({ min: 0, max: 0x1ffff }), { minLength: 1, maxLength: 30 })], runs(300, 10_000))(
    "the interval list finds, for each address, the longest prefix holding it, and nothing outside every entry",
    (nets, probes) => {
      const entries = nets.map((n) => canonicalNetwork(`${formatAddress({ value: n.start, v4: false })}/${n.prefix}`, "network"));
      const intervals = networkIntervals(entries);
      // Sorted, non-overlapping.
      for (let i = 1; i < intervals.length; i++) expect(intervals[i - 1]!.end < intervals[i]!.start).toBe(true);
      for (const probe of probes) {
        const address = (0x20010db8n << 96n) | BigInt(probe);
        const hex = hexOf(address);
        // The lookup the store makes: the last interval starting at or before the address, if it reaches it.
        const last = intervals.filter((x) => x.start <= hex).at(-1);
        const found = last !== undefined && last.end >= hex ? last.network : undefined;
        const holding = nets.filter((n) => networkContains(n, address)).sort((x, y) => y.prefix - x.prefix)[0];
        const expected = holding && canonicalNetwork(`${formatAddress({ value: holding.start, v4: false })}/${holding.prefix}`, "network");
        expect(found).toBe(expected);
      }
    },
  );
});
