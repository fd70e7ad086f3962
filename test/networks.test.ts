// Limits by who is calling, through the published register() helper and the typed client (the app
// is test/app/networks.ts), with request metadata set by `t.withRequestMetadata`: keys from the
// address and user agent, per-address limits and an automatic ban, allow and deny lists by
// network and how they resolve, what each costs in reads, and the bad-input matrix. The fake clock
// moves one millisecond before every call, so each call's instant is known on convex-test's
// moving clock.
import { anyApi, type ApiFromModules } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, MINUTE } from "../src/client/index.js";
import type * as networks from "./app/networks.js";
import { withSyscalls } from "./convex-global.js";
import { convexErrorData, makeTest } from "./setup.js";
import { quietCrashes } from "../example/convex/test.setup.js";

const api = anyApi as unknown as ApiFromModules<{ networks: typeof networks }>;
const T0 = Date.UTC(2030, 0, 1);
let now = T0;

/** Moves the clock to a new millisecond, so the next call's instant is exactly `now` (see the file's first comment). */
function tick(ms = 1): number {
  now += ms;
  vi.setSystemTime(now);
  return now;
}

beforeEach(() => {
  vi.useFakeTimers();
  now = T0;
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

type T = ReturnType<typeof makeTest>;
const from = (t: T, ip: string | null, userAgent: string | null = "Mozilla/5.0 (test)") => t.withRequestMetadata({ ip, userAgent });
const keyOf = (t: T, ip: string | null, options: object, userAgent?: string | null) => (tick(), from(t, ip, userAgent).mutation(api.networks.keyOf, { options }));
const signIn = (t: T, ip: string | null) => (tick(), from(t, ip).mutation(api.networks.signIn, {}));
const set = (t: T, target: object, override: object, name: "signIn" | "api" | "plain" = "signIn") => (tick(), t.mutation(api.networks.set, { name, target, override }));
const listAll = async (t: T, name: "signIn" | "api" | "plain" = "signIn") => (tick(), (await t.query(api.networks.list, { name, paginationOpts: { numItems: 100, cursor: null } })).page);

describe("requestKey", () => {
  test("an IPv4 address is its key, and an IPv4-mapped IPv6 address the same", async () => {
    const t = makeTest();
    expect(await keyOf(t, "203.0.113.7", { by: "ip" })).toBe("203.0.113.7");
    expect(await keyOf(t, "::ffff:203.0.113.7", { by: "ip" })).toBe("203.0.113.7");
    expect(await keyOf(t, "::FFFF:CB00:7107", { by: "ip" })).toBe("203.0.113.7");
  });

  test("IPv6 addresses of one /64, however written, are one key; another /64 is another", async () => {
    const t = makeTest();
    for (const ip of ["2001:db8:1:2::1", "2001:0DB8:0001:0002:aaaa:0:0:9", "2001:db8:1:2:ffff:ffff:ffff:ffff"]) {
      expect(await keyOf(t, ip, { by: "ip" })).toBe("2001:db8:1:2::/64");
    }
    expect(await keyOf(t, "2001:db8:1:3::1", { by: "ip" })).toBe("2001:db8:1:3::/64");
    // A prefix chosen by the app.
    expect(await keyOf(t, "2001:db8:1:3::1", { by: "ip", ipv6Prefix: 48 })).toBe("2001:db8:1::/48");
    expect(await keyOf(t, "2001:db8:1:3::1", { by: "ip", ipv6Prefix: 128 })).toBe("2001:db8:1:3::1/128");
  });

  test("by user agent, and by both; in an action too", async () => {
    const t = makeTest();
    expect(await keyOf(t, "203.0.113.7", { by: "userAgent" }, "curl/8.0")).toBe("curl/8.0");
    expect(await keyOf(t, "203.0.113.7", { by: "ip+userAgent" }, "curl/8.0")).toBe("203.0.113.7 curl/8.0");
    // A long user agent keeps its first 512 characters.
    expect(await keyOf(t, "203.0.113.7", { by: "userAgent" }, "x".repeat(2000))).toBe("x".repeat(512));
    // Never half of a character outside the BMP: the cut falls before it.
    expect(await keyOf(t, "203.0.113.7", { by: "userAgent" }, `${"x".repeat(511)}😀😀`)).toBe("x".repeat(511));
    tick();
    expect(await from(t, "2001:db8::5", "curl/8.0").action(api.networks.keyInAction, { options: { by: "ip+userAgent" } })).toBe("2001:db8::/64 curl/8.0");
  });

  test("a request without an address is an error naming request.ip, unless a fallback is given", async () => {
    const t = makeTest();
    expect(await convexErrorData(keyOf(t, null, { by: "ip" }))).toMatchObject({ kind: "InvalidRateLimit", field: "request.ip", value: "null" });
    expect(await convexErrorData(keyOf(t, null, { by: "ip+userAgent" }))).toMatchObject({ field: "request.ip" });
    expect(await keyOf(t, null, { by: "ip", fallback: "server" })).toBe("server");
    // No metadata at all, as a server-to-server call sees it.
    tick();
    expect(await convexErrorData(t.mutation(api.networks.keyOf, { options: { by: "ip" } }))).toMatchObject({ field: "request.ip" });
  });

  test("a scheduled run has no address: it fails naming request.ip, or uses its fallback", async () => {
    const t = makeTest();
    tick();
    await from(t, "203.0.113.7").mutation(api.networks.signInLater, {});
    // Four runs with a fallback: they share its key, so the fourth is refused (and fails, throwing).
    for (let i = 0; i < 4; i++) {
      tick();
      await from(t, "203.0.113.7").mutation(api.networks.signInLater, { fallback: "scheduled" });
    }
    // The two failures are on purpose: counted, not printed (convex-test reports each with a stack).
    const noAddress = JSON.stringify({ kind: "InvalidRateLimit", field: "request.ip", value: "null", message: "request.ip = null: the request has no address (scheduled functions, crons and server-to-server calls have none); pass `fallback`, the key for such requests" });
    const refused = JSON.stringify({ kind: "RateLimited", name: "signIn", retryAfter: HOUR });
    const fn = "networks:signInScheduled";
    const { result: inner, crashes } = await quietCrashes(fn, noAddress, () => quietCrashes(fn, refused, () => t.finishAllScheduledFunctions(vi.runAllTimers)));
    expect([crashes, inner.crashes]).toEqual([1, 1]);
    tick();
    expect(await t.query(api.networks.scheduled, {})).toEqual([{ kind: "failed" }, { kind: "success" }, { kind: "success" }, { kind: "success" }, { kind: "failed" }]);
    tick();
    // The address's key took nothing: it has no row, so it is full.
    expect(await t.query(api.networks.value, { name: "signIn", key: "203.0.113.7" })).toMatchObject({ value: 3 });
  });

  test("hashed: a fixed-length keyed hash of the key, never the address; one /64 is one hash", async () => {
    const t = makeTest();
    const hash = { secret: "a-secret-of-the-app-0123456789" };
    const a = await keyOf(t, "2001:db8:1:2::1", { by: "ip", hash });
    expect(a).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(await keyOf(t, "2001:db8:1:2::ffff", { by: "ip", hash })).toBe(a);
    expect(await keyOf(t, "2001:db8:1:3::1", { by: "ip", hash })).not.toBe(a);
    expect(await keyOf(t, "2001:db8:1:2::1", { by: "ip", hash: { secret: "another-secret-of-the-app-0123" } })).not.toBe(a);
    // HMAC-SHA-256 of the plain key, as Web Crypto computes it.
    const raw = await crypto.subtle.importKey("raw", new TextEncoder().encode(hash.secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const mac = new Uint8Array(await crypto.subtle.sign("HMAC", raw, new TextEncoder().encode("2001:db8:1:2::/64"))).slice(0, 16);
    expect(a).toBe(btoa(String.fromCharCode(...mac)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
    // A fallback is the app's own key, never hashed.
    expect(await keyOf(t, null, { by: "ip", hash, fallback: "server" })).toBe("server");
  });
});

describe("limits per address", () => {
  test("each address has its own bucket; the addresses of one /64 share one", async () => {
    const t = makeTest();
    for (const ip of ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:abcd::3"]) expect(await signIn(t, ip)).toMatchObject({ ok: true, key: "2001:db8:1:2::/64" });
    expect(await signIn(t, "2001:db8:1:2::4")).toMatchObject({ ok: false });
    // Another /64, and an IPv4 address, are untouched.
    expect(await signIn(t, "2001:db8:1:3::1")).toMatchObject({ ok: true });
    expect(await signIn(t, "203.0.113.7")).toMatchObject({ ok: true, key: "203.0.113.7" });
  });

  test("an automatic ban: the failure that empties an address's key locks the address out for the lockout", async () => {
    const t = makeTest();
    for (let i = 0; i < 3; i++) expect(await signIn(t, "198.51.100.23")).toEqual({ key: "198.51.100.23", ok: true });
    const lockedAt = now;
    // Locked for an hour from the third failure, however many tokens refill meanwhile.
    tick(5 * MINUTE);
    expect(await signIn(t, "198.51.100.23")).toEqual({ key: "198.51.100.23", ok: false, retryAfter: lockedAt + HOUR - now });
    tick();
    expect(await t.query(api.networks.value, { name: "signIn", key: "198.51.100.23" })).toMatchObject({ blockedUntil: lockedAt + HOUR, blockedBy: "lockout" });
    // Another address is free.
    expect(await signIn(t, "198.51.100.24")).toMatchObject({ ok: true });
    now = lockedAt + HOUR - 1;
    tick();
    expect(await signIn(t, "198.51.100.23")).toMatchObject({ ok: true });
  });
});

describe("allow and deny lists by network", () => {
  test("a network's block refuses every address in it until its instant; others pass", async () => {
    const t = makeTest();
    await set(t, { network: "203.0.113.0/24" }, { blockedUntil: T0 + HOUR });
    expect(await signIn(t, "203.0.113.9")).toEqual({ key: "203.0.113.9", ok: false, retryAfter: T0 + HOUR - now });
    expect(await signIn(t, "::ffff:203.0.113.200")).toMatchObject({ ok: false });
    expect(await signIn(t, "203.0.114.1")).toMatchObject({ ok: true });
    tick();
    expect(await t.query(api.networks.value, { name: "signIn", key: "203.0.113.9", ip: "203.0.113.9" })).toMatchObject({
      blockedUntil: T0 + HOUR,
      blockedBy: "network",
      network: "203.0.113.0/24",
    });
    // From a mutation, getValue reads the request's own address.
    tick();
    expect(await from(t, "203.0.113.9").mutation(api.networks.valueHere, { name: "signIn", key: "anything" })).toMatchObject({ blockedBy: "network" });
    now = T0 + HOUR - 1;
    expect(await signIn(t, "203.0.113.9")).toMatchObject({ ok: true });
  });

  test("the longest prefix wins: an allowed /25 inside a blocked /24 is never limited", async () => {
    const t = makeTest();
    await set(t, { network: "203.0.113.0/24" }, { blockedUntil: T0 + HOUR });
    await set(t, { network: "203.0.113.128/25" }, { allow: true });
    await set(t, { network: "203.0.113.192/32" }, { blockedUntil: T0 + HOUR });
    expect(await signIn(t, "203.0.113.127")).toMatchObject({ ok: false });
    // Allowed: far past the limit's 3 a minute, and no lockout.
    for (let i = 0; i < 10; i++) expect(await signIn(t, "203.0.113.128")).toEqual({ key: "203.0.113.128", ok: true });
    expect(await signIn(t, "203.0.113.255")).toMatchObject({ ok: true });
    // A host blocked inside the allowed /25.
    expect(await signIn(t, "203.0.113.192")).toMatchObject({ ok: false });
    expect(await signIn(t, "203.0.113.193")).toMatchObject({ ok: true });
    tick();
    // Nothing was taken from an allowed address's key.
    expect(await t.query(api.networks.value, { name: "signIn", key: "203.0.113.128", ip: "203.0.113.128" })).toMatchObject({
      value: 3,
      by: "network",
      network: "203.0.113.128/25",
      allowed: true,
    });
  });

  test("IPv6 networks, written any way, hold the addresses they should", async () => {
    const t = makeTest();
    await set(t, { network: "2001:DB8:0:0::/32" }, { blockedUntil: T0 + HOUR });
    tick();
    expect((await listAll(t)).map((r) => r.target)).toEqual([{ network: "2001:db8::/32" }]);
    expect(await signIn(t, "2001:db8:ffff::1")).toMatchObject({ ok: false });
    expect(await signIn(t, "2001:db9::1")).toMatchObject({ ok: true });
    // The same network written another way replaces the entry.
    await set(t, { network: "2001:0db8::/32" }, { allow: true });
    expect(await listAll(t)).toHaveLength(1);
    expect(await signIn(t, "2001:db8:ffff::1")).toMatchObject({ ok: true });
  });

  test("removing an entry: the next longest prefix decides again", async () => {
    const t = makeTest();
    await set(t, { network: "10.0.0.0/8" }, { blockedUntil: T0 + HOUR });
    await set(t, { network: "10.1.0.0/16" }, { allow: true });
    expect(await signIn(t, "10.1.2.3")).toMatchObject({ ok: true });
    tick();
    expect(await t.mutation(api.networks.remove, { name: "signIn", target: { network: "10.1.0.0/16" } })).toBe(true);
    expect(await signIn(t, "10.1.2.3")).toMatchObject({ ok: false });
    tick();
    expect(await t.mutation(api.networks.remove, { name: "signIn", target: { network: "10.1.0.0/16" } })).toBe(false);
    tick();
    expect(await t.mutation(api.networks.remove, { name: "signIn", target: { network: "10.0.0.0/8" } })).toBe(true);
    expect(await signIn(t, "10.1.2.3")).toMatchObject({ ok: true });
    expect(await listAll(t)).toEqual([]);
  });

  test("a network's config puts its terms in force; a key's own override beats the network's", async () => {
    const t = makeTest();
    await set(t, { network: "192.0.2.0/24" }, { config: { kind: "token bucket", rate: 1, period: MINUTE } });
    expect(await signIn(t, "192.0.2.1")).toMatchObject({ ok: true });
    expect(await signIn(t, "192.0.2.1")).toMatchObject({ ok: false });
    tick();
    expect(await t.query(api.networks.value, { name: "signIn", key: "192.0.2.2", ip: "192.0.2.2" })).toMatchObject({ by: "network", network: "192.0.2.0/24", config: { rate: 1 } });
    // A key's own block beats its network's allow.
    await set(t, { network: "198.51.100.0/24" }, { allow: true });
    await set(t, { key: "198.51.100.66" }, { blockedUntil: T0 + HOUR });
    expect(await signIn(t, "198.51.100.66")).toMatchObject({ ok: false });
    expect(await signIn(t, "198.51.100.67")).toMatchObject({ ok: true });
  });

  test("an explicit ip is matched instead of the request's own; a query without one matches no entry", async () => {
    const t = makeTest();
    await set(t, { network: "203.0.113.0/24" }, { blockedUntil: T0 + HOUR });
    tick();
    expect(await from(t, "198.51.100.1").mutation(api.networks.take, { name: "signIn", key: "k", ip: "203.0.113.1" })).toMatchObject({ ok: false });
    tick();
    expect(await t.query(api.networks.check, { name: "signIn", key: "k" })).toEqual({ ok: true });
    tick();
    expect(await t.query(api.networks.check, { name: "signIn", key: "k", ip: "203.0.113.1" })).toMatchObject({ ok: false });
    // limitAll passes the address to every limit with networks.
    tick();
    expect(await from(t, "203.0.113.1").mutation(api.networks.takeAll, { key: "k" })).toMatchObject({ ok: false });
    tick();
    expect(await from(t, "198.51.100.1").mutation(api.networks.takeAll, { key: "k" })).toMatchObject({ ok: true });
  });

  test("an allowed network's requests count as admitted in metrics, by the network", async () => {
    const t = makeTest();
    await set(t, { network: "192.0.2.0/24" }, { allow: true }, "api");
    for (let i = 0; i < 5; i++) {
      tick();
      expect(await from(t, "192.0.2.10").mutation(api.networks.take, { name: "api", key: "k" })).toEqual({ ok: true });
    }
    tick(2000);
    await t.mutation(api.networks.fold, {});
    tick();
    const result = await t.query(api.networks.metrics, { name: "api", from: T0, to: now });
    expect(result.total).toMatchObject({ admitted: 5, refused: 0, overridden: 5 });
  });

  test("the clean-up deletes an idle key whose rows a network's config wrote", async () => {
    const t = makeTest();
    await set(t, { network: "192.0.2.0/24" }, { config: { kind: "token bucket", rate: 1, period: MINUTE } });
    expect(await signIn(t, "192.0.2.1")).toMatchObject({ ok: true });
    // Full again a minute on: idle under the network's config, its rows say nothing.
    tick(MINUTE);
    expect(await t.mutation(api.networks.cleanup, {})).toMatchObject({ keysDeleted: 1, rowsDeleted: 1 });
  });

  test("clearAll removes the entries and their intervals", async () => {
    const t = makeTest();
    await set(t, { network: "203.0.113.0/24" }, { blockedUntil: T0 + HOUR });
    tick();
    await t.mutation(api.networks.clearAll, {});
    expect(await signIn(t, "203.0.113.9")).toMatchObject({ ok: true });
    expect(await listAll(t)).toEqual([]);
  });
});

describe("cost: reads of network entries", () => {
  /** Runs `call`, counting its index queries of the network intervals. */
  async function networkReads(call: () => Promise<unknown>): Promise<number> {
    let reads = 0;
    await withSyscalls({ syscall: (op, json, next) => (op === "1.0/queryStream" && json.includes("rateLimitNetworks") && reads++, next(op, json)) }, call);
    return reads;
  }

  test("none for a limit without networks, or a request without an address; one per request with one, whatever the list's size", async () => {
    const t = makeTest();
    expect(await networkReads(() => (tick(), from(t, "203.0.113.9").mutation(api.networks.take, { name: "plain", key: "k" })))).toBe(0);
    expect(await networkReads(() => (tick(), t.mutation(api.networks.take, { name: "signIn", key: "k" })))).toBe(0);
    expect(await networkReads(() => signIn(t, "203.0.113.9"))).toBe(1);
    for (let i = 0; i < 50; i++) await set(t, { network: `10.${i}.0.0/16` }, { blockedUntil: T0 + HOUR });
    await set(t, { network: "10.0.0.0/8" }, { allow: true });
    expect(await networkReads(() => signIn(t, "10.20.1.1"))).toBe(1);
    expect(await networkReads(() => signIn(t, "10.200.1.1"))).toBe(1);
    expect(await signIn(t, "10.20.1.1")).toMatchObject({ ok: false });
    expect(await signIn(t, "10.200.1.1")).toMatchObject({ ok: true });
  });
});

describe("bad input: an InvalidRateLimit error naming the field, and nothing written", () => {
  test.each([
    [{ network: "203.0.113/24" }, { blockedUntil: T0 + HOUR }, "target.network", "a malformed CIDR"],
    [{ network: "203.0.113.0/33" }, { blockedUntil: T0 + HOUR }, "target.network", "an IPv4 prefix out of range"],
    [{ network: "2001:db8::/129" }, { blockedUntil: T0 + HOUR }, "target.network", "an IPv6 prefix out of range"],
    [{ network: "fe80::%eth0/64" }, { blockedUntil: T0 + HOUR }, "target.network", "an IPv6 zone id"],
    [{ network: "203.0.113.7/24" }, { blockedUntil: T0 + HOUR }, "target.network", "host bits set"],
    [{ key: "k" }, { allow: true }, "override.allow", "an allow for a key"],
    [{ tier: "pro" }, { allow: true }, "override.allow", "an allow for a tier"],
    // Shapes Convex's own validator refuses at the component: checked by the client only.
    [{ network: "203.0.113.0/24" }, { allow: false }, "override.allow", "an allow that isn't true"],
    [{ network: "203.0.113.0/24" }, { blockedUntil: T0 + HOUR, allow: true }, "override", "two forms at once"],
  ])("%j %j: %s (%s)", async (target, override, field, why) => {
    const t = makeTest();
    expect(await convexErrorData(set(t, target, override))).toMatchObject({ kind: "InvalidRateLimit", field });
    if (!["an allow that isn't true", "two forms at once"].includes(why)) {
      // The component checks again when called past the client.
      tick();
      const config = { kind: "token bucket", rate: 3, period: MINUTE, lockout: HOUR, networks: true };
      expect(await convexErrorData(t.mutation(api.networks.setRaw, { name: "signIn", target, override, config }))).toMatchObject({ kind: "InvalidRateLimit", field });
    }
    expect(await listAll(t)).toEqual([]);
  });

  test("a network entry on a limit without networks names config.networks", async () => {
    const t = makeTest();
    const data = await convexErrorData(set(t, { network: "203.0.113.0/24" }, { blockedUntil: T0 + HOUR }, "plain"));
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field: "config.networks" });
    expect((data as { message: string }).message).toMatch(/networks: true/);
    expect(await listAll(t, "plain")).toEqual([]);
  });

  test.each([
    ["fe80::1%eth0", "an IPv6 zone id"],
    ["203.0.113.256", "an octet out of range"],
    ["not an address", "not an address"],
  ])("a request from %j is an error naming request.ip (%s)", async (ip) => {
    const t = makeTest();
    expect(await convexErrorData(keyOf(t, ip, { by: "ip" }))).toMatchObject({ kind: "InvalidRateLimit", field: "request.ip", value: JSON.stringify(ip) });
    // The same address given to a limit with networks names `ip`, and takes nothing.
    tick();
    expect(await convexErrorData(from(t, null).mutation(api.networks.take, { name: "signIn", key: "k", ip }))).toMatchObject({ kind: "InvalidRateLimit", field: "ip" });
    tick();
    expect(await t.query(api.networks.value, { name: "signIn", key: "k" })).toMatchObject({ value: 3 });
  });

  test.each([
    ["", "an empty user agent"],
    [null, "no user agent"],
  ] as const)("by userAgent, %j is an error naming request.userAgent (%s)", async (userAgent: string | null, _why: string) => {
    const t = makeTest();
    expect(await convexErrorData(keyOf(t, "203.0.113.7", { by: "userAgent" }, userAgent))).toMatchObject({ kind: "InvalidRateLimit", field: "request.userAgent" });
    expect(await convexErrorData(keyOf(t, "203.0.113.7", { by: "ip+userAgent" }, userAgent))).toMatchObject({ field: "request.userAgent" });
  });

  test.each([
    [{ by: "address" }, "by"],
    [{}, "by"],
    [{ by: "ip", ipv6Prefix: 0 }, "ipv6Prefix"],
    [{ by: "ip", ipv6Prefix: 129 }, "ipv6Prefix"],
    [{ by: "ip", ipv6Prefix: 64.5 }, "ipv6Prefix"],
    [{ by: "ip", fallback: "" }, "fallback"],
    [{ by: "ip", fallback: "x".repeat(1025) }, "fallback"],
    [{ by: "ip", hash: { secret: "short" } }, "hash.secret"],
    [{ by: "ip", hash: {} }, "hash.secret"],
  ])("requestKey options %j name %s", async (options, field) => {
    const t = makeTest();
    const data = await convexErrorData(keyOf(t, "203.0.113.7", options));
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field });
    // A secret is never echoed in an error.
    expect(JSON.stringify(data)).not.toContain("short");
  });
});
