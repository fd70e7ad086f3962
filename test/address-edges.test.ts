// Addresses and networks at their edges (src/shared/overrides/address.ts), pure: each bad input's whole error (field, value, message), the smallest IPv6 grouping prefix, and the intervals of nested networks that share a first address, end on the outer one's last address, or span the whole space.
import { describe, expect, test } from "vitest";
import { hexOf, networkIntervals, parseAddress, parseNetwork, validateIpv6Prefix } from "../src/shared/overrides/address.js";
import { errorData } from "./error-data.js";

describe("bad input: the whole error a caller sees", () => {
  test.each([
    // [why, call, field, value, problem]
    ["an address that isn't a string (from JavaScript)", () => parseAddress(7 as unknown as string, "request.ip"), "request.ip", "7", "must be an IPv4 or IPv6 address"],
    [
      "an octet over 255",
      () => parseAddress("203.0.113.256", "request.ip"),
      "request.ip",
      '"203.0.113.256"',
      "is not an IPv4 address (four decimal octets 0-255, no leading zeros) or an IPv6 address",
    ],
    [
      "three IPv6 groups, no ::",
      () => parseAddress("1:2:3", "request.ip"),
      "request.ip",
      '"1:2:3"',
      "is not an IPv6 address (eight groups of up to 4 hex digits, at most one ::, an optional IPv4 tail)",
    ],
    // Without the count of halves, eight groups before a first :: would be read alone, the rest ignored.
    [
      "two ::, eight groups before the first",
      () => parseAddress("1:2:3:4:5:6:7:8::9::a", "request.ip"),
      "request.ip",
      '"1:2:3:4:5:6:7:8::9::a"',
      "is not an IPv6 address (eight groups of up to 4 hex digits, at most one ::, an optional IPv4 tail)",
    ],
    [
      "a network that isn't a string (from JavaScript)",
      () => parseNetwork(7 as unknown as string, "target.network"),
      "target.network",
      "7",
      "must be a CIDR network, e.g. 203.0.113.0/24 or 2001:db8::/32",
    ],
    ["an IPv4 prefix over 32", () => parseNetwork("203.0.113.0/33", "target.network"), "target.network", '"203.0.113.0/33"', "has prefix /33, out of range: an IPv4 prefix is 0 to 32"],
    ["an IPv6 prefix over 128", () => parseNetwork("2001:db8::/129", "target.network"), "target.network", '"2001:db8::/129"', "has prefix /129, out of range: an IPv6 prefix is 0 to 128"],
    ["an IPv6 grouping prefix of 0", () => validateIpv6Prefix(0, "ipv6Prefix"), "ipv6Prefix", "0", "must be a whole number of bits from 1 to 128"],
  ] as [string, () => unknown, string, string, string][])("%s", (_why, call, field, value, problem) => {
    expect(errorData(call)).toStrictEqual({ kind: "InvalidRateLimit", field, value, message: `${field} = ${value}: ${problem}` });
  });

  const v6Problem = "is not an IPv6 address (eight groups of up to 4 hex digits, at most one ::, an optional IPv4 tail)";
  test.each([
    // [spelling, why]
    ["::1.2.3.4:5", "an IPv4 part only ends an address"],
    ["::ffff:1.2.3.256", "an IPv4 tail is a valid dotted quad"],
    ["1::zz", "a group after :: is hex"],
    ["1:2:3:4::5:6:7:8", ":: stands for at least one group, so at most seven are written with it"],
  ])("%j is refused: %s", (text) => {
    expect(errorData(() => parseAddress(text, "request.ip"))).toStrictEqual({
      kind: "InvalidRateLimit",
      field: "request.ip",
      value: JSON.stringify(text),
      message: `request.ip = ${JSON.stringify(text)}: ${v6Problem}`,
    });
  });

  test("a network with nothing before its slash is no CIDR network, whatever follows (no zone id)", () => {
    const text = "/24%eth0";
    expect(errorData(() => parseNetwork(text, "target.network"))).toStrictEqual({
      kind: "InvalidRateLimit",
      field: "target.network",
      value: JSON.stringify(text),
      message: `target.network = ${JSON.stringify(text)}: is not a CIDR network (an IPv4 or IPv6 address, then / and a prefix length), e.g. 203.0.113.0/24 or 2001:db8::/32`,
    });
  });

  test("the smallest IPv6 grouping prefix, 1 bit, is accepted", () => {
    expect(validateIpv6Prefix(1, "ipv6Prefix")).toBeUndefined();
  });
});

describe("networkIntervals of nested networks", () => {
  /** An IPv4-mapped address's 32 hex digits. */
  const v4 = (hex: string) => `00000000000000000000ffff${hex}`;
  test.each([
    // [why, entries, intervals]
    [
      "an inner network sharing the outer's first address, listed first: the inner holds its own addresses, the outer the rest, nothing empty between",
      ["10.0.0.0/16", "10.0.0.0/8"],
      [
        { start: v4("0a000000"), end: v4("0a00ffff"), network: "10.0.0.0/16" },
        { start: v4("0a010000"), end: v4("0affffff"), network: "10.0.0.0/8" },
      ],
    ],
    [
      "the same, the outer listed first",
      ["10.0.0.0/8", "10.0.0.0/16"],
      [
        { start: v4("0a000000"), end: v4("0a00ffff"), network: "10.0.0.0/16" },
        { start: v4("0a010000"), end: v4("0affffff"), network: "10.0.0.0/8" },
      ],
    ],
    [
      "a host on the outer network's last address: the outer ends a address before it",
      ["10.0.0.0/8", "10.255.255.255/32"],
      [
        { start: v4("0a000000"), end: v4("0afffffe"), network: "10.0.0.0/8" },
        { start: v4("0affffff"), end: v4("0affffff"), network: "10.255.255.255/32" },
      ],
    ],
    ["the whole space, up to its last address", ["::/0"], [{ start: hexOf(0n), end: "f".repeat(32), network: "::/0" }]],
  ] as [string, string[], { start: string; end: string; network: string }[]][])("%s", (_why, entries, intervals) => {
    expect(networkIntervals(entries)).toStrictEqual(intervals);
  });

  test("hexOf writes 32 digits, zeros first", () => {
    expect(hexOf(0n)).toBe("0".repeat(32));
    expect(hexOf(0xan)).toBe(`${"0".repeat(31)}a`);
  });
});
