// Overrides, blocks and lockouts through the published register() helper and the typed client
// (the app is test/app/overrides.ts): every call that takes a tier, check, credit, dry runs,
// metrics, HTTP headers, the hook's query, listing, the keyless limit, reset, and the applier of
// an asynchronous limit; fake timers drive the clock.
import { anyApi, type ApiFromModules, type FunctionArgs } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { HOUR, MINUTE, rateLimitHeaders, type RateLimitReturnsWithDetails } from "../src/client/index.js";
import type * as overrides from "./app/overrides.js";
import { rateLimiter } from "./app/overrides.js";
import { components, convexErrorData, makeTest } from "./setup.js";

const api = anyApi as unknown as ApiFromModules<{ overrides: typeof overrides }>;
const T0 = Date.UTC(2030, 0, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
});
afterEach(() => {
  vi.useRealTimers();
});

const pro = { config: { kind: "token bucket", rate: 100, period: HOUR } } as const;

type Test = ReturnType<typeof makeTest>;

/**
 * Runs the app's `take` `n` times in one transaction, so all of them see the same instant:
 * convex-test's clock moves with commits (the third top-level call at a frozen instant runs 1 ms
 * later), and these tests mean several requests at one instant. Returns each result.
 */
async function takeAtOnce(t: Test, n: number, args: FunctionArgs<typeof api.overrides.take>) {
  return t.run(async (ctx) => {
    const results = [];
    for (let i = 0; i < n; i++) results.push(await ctx.runMutation(api.overrides.take, args));
    return results;
  });
}

describe("overrides through the client", () => {
  test("a tier's override applies to requests naming the tier; a key's own beats it", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: pro });
    for (let i = 0; i < 10; i++) expect(await t.mutation(api.overrides.take, { name: "llm", key: "free-user" })).toEqual({ ok: true });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "free-user" })).toMatchObject({ ok: false });
    for (let i = 0; i < 100; i++) expect(await t.mutation(api.overrides.take, { name: "llm", key: "pro-user", tier: "pro" })).toEqual({ ok: true });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "pro-user", tier: "pro" })).toMatchObject({ ok: false, retryAfter: 36_000 });
    const v = await t.query(api.overrides.value, { name: "llm", key: "pro-user", tier: "pro" });
    expect(v).toMatchObject({ by: "tier", config: { rate: 100 } });
    // A key's own override beats its tier's.
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "vip" }, override: { config: { kind: "token bucket", rate: 1000, period: HOUR } } });
    expect(await t.query(api.overrides.value, { name: "llm", key: "vip", tier: "pro" })).toMatchObject({ by: "key", value: 1000 });
  });

  test("a block refuses until its instant, and retrying then succeeds", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "bad" }, override: { blockedUntil: T0 + 5000 }, note: "abuse" });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "bad" })).toEqual({ ok: false, retryAfter: 5000 });
    expect(await t.query(api.overrides.value, { name: "llm", key: "bad" })).toMatchObject({ blockedUntil: T0 + 5000, blockedBy: "key" });
    vi.setSystemTime(T0 + 5000);
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "bad" })).toEqual({ ok: true });
    expect(await t.query(api.overrides.get, { name: "llm", target: { key: "bad" } })).toEqual({ target: { key: "bad" }, override: { blockedUntil: T0 + 5000 }, note: "abuse", updatedAt: T0 });
  });

  test("a lockout: the take that empties the key locks it for the lockout", async () => {
    const t = makeTest();
    expect(await takeAtOnce(t, 3, { name: "signIn", key: "a@b" })).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    expect(await t.mutation(api.overrides.take, { name: "signIn", key: "a@b" })).toEqual({ ok: false, retryAfter: HOUR });
    vi.setSystemTime(T0 + 2 * MINUTE);
    expect(await t.mutation(api.overrides.take, { name: "signIn", key: "a@b" })).toEqual({ ok: false, retryAfter: HOUR - 2 * MINUTE });
    expect(await t.query(api.overrides.value, { name: "signIn", key: "a@b" })).toMatchObject({ blockedUntil: T0 + HOUR, blockedBy: "lockout" });
    vi.setSystemTime(T0 + HOUR);
    expect(await t.mutation(api.overrides.take, { name: "signIn", key: "a@b" })).toEqual({ ok: true });
  });

  test("setting and removing an override never grants tokens", async () => {
    const t = makeTest();
    for (let i = 0; i < 10; i++) await t.mutation(api.overrides.take, { name: "llm", key: "u" });
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "u" }, override: pro });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "u" })).toMatchObject({ ok: false });
    expect(await t.mutation(api.overrides.remove, { name: "llm", target: { key: "u" } })).toBe(true);
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "u" })).toMatchObject({ ok: false });
    expect(await t.query(api.overrides.get, { name: "llm", target: { key: "u" } })).toBeNull();
  });

  test("list pages through a limit's overrides; reset and clean-up keep a key's own", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: pro });
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "a" }, override: pro });
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "b" }, override: { blockedUntil: T0 + HOUR } });
    const first = await t.query(api.overrides.list, { name: "llm", paginationOpts: { numItems: 2, cursor: null } });
    expect(first.page.map((r) => r.target)).toEqual([{ key: "a" }, { key: "b" }]);
    const second = await t.query(api.overrides.list, { name: "llm", paginationOpts: { numItems: 2, cursor: first.continueCursor } });
    expect(second.page.map((r) => r.target)).toEqual([{ tier: "pro" }]);
    await t.mutation(api.overrides.take, { name: "llm", key: "a" });
    await t.mutation(api.overrides.reset, { name: "llm", key: "a" });
    expect(await t.query(api.overrides.value, { name: "llm", key: "a" })).toMatchObject({ by: "key", value: 100 });
    await t.mutation(api.overrides.cleanup, {});
    expect(await t.query(api.overrides.value, { name: "llm", key: "a" })).toMatchObject({ by: "key", value: 100 });
  });

  test("bad input names the field and writes nothing", async () => {
    const t = makeTest();
    const error = await convexErrorData(t.mutation(api.overrides.set, { name: "llm", target: { key: "a" }, override: { config: { kind: "token bucket", rate: -1, period: HOUR } } }));
    expect(error).toMatchObject({ kind: "InvalidRateLimit", field: "override.config.rate" });
    const shards = await convexErrorData(t.mutation(api.overrides.set, { name: "llm", target: { key: "a" }, override: { config: { kind: "token bucket", rate: 1, period: HOUR, shards: 2 } } }));
    expect(shards).toMatchObject({ field: "override.config.shards" });
    // A misspelled field, which Convex's validator would refuse naming nothing, is named by the client.
    const typo = await convexErrorData(t.mutation(api.overrides.set, { name: "llm", target: { key: "a" }, override: { config: { kind: "token bucket", rate: 10, period: HOUR, capasity: 5 } } }));
    expect(typo).toMatchObject({ kind: "InvalidRateLimit", field: "override.config.capasity" });
    expect((typo as { message: string }).message).toMatch(/did you mean capacity\?/);
    // Both a config and a block, or a target with both a key and a tier.
    const both = await convexErrorData(t.mutation(api.overrides.set, { name: "llm", target: { key: "a" }, override: { config: { kind: "token bucket", rate: 10, period: HOUR }, blockedUntil: T0 + 1 } }));
    expect(both).toMatchObject({ kind: "InvalidRateLimit", field: "override" });
    const target = await convexErrorData(t.mutation(api.overrides.set, { name: "llm", target: { key: "a", tier: "pro" }, override: { blockedUntil: T0 + 1 } }));
    expect(target).toMatchObject({ kind: "InvalidRateLimit", field: "target" });
    expect(await t.query(api.overrides.get, { name: "llm", target: { key: "a" } })).toBeNull();
  });

  test("sharded and asynchronous limits follow a key's override", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llmSharded", target: { key: "s" }, override: { config: { kind: "token bucket", rate: 400, period: HOUR } } });
    let admitted = 0;
    for (let i = 0; i < 120; i++) if ((await t.mutation(api.overrides.take, { name: "llmSharded", key: "s" })).ok) admitted++;
    expect(admitted).toBe(120);
    await t.mutation(api.overrides.set, { name: "llmAsync", target: { tier: "pro" }, override: pro });
    admitted = 0;
    for (let i = 0; i < 30; i++) if ((await t.mutation(api.overrides.take, { name: "llmAsync", key: "p", tier: "pro" })).ok) admitted++;
    expect(admitted).toBe(30);
  });
});

describe("every call under overrides", () => {
  test("limitAll and checkAll: each request's tier decides its limit; a tier's block refuses the whole call", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: pro });
    // Under the pro tier's 100 an hour, two takes of 10 pass; under the named 10, the second doesn't.
    const both = (key: string, tier?: string) => [{ name: "llm" as const, key, count: 10, ...(tier ? { tier } : {}) }, { name: "signIn" as const, key }];
    expect(await t.mutation(api.overrides.takeAll, { requests: both("p", "pro") })).toEqual({ ok: true, results: [{ ok: true }, { ok: true }] });
    expect(await t.mutation(api.overrides.takeAll, { requests: both("p", "pro") })).toEqual({ ok: true, results: [{ ok: true }, { ok: true }] });
    expect(await t.mutation(api.overrides.takeAll, { requests: both("f") })).toEqual({ ok: true, results: [{ ok: true }, { ok: true }] });
    expect(await t.mutation(api.overrides.takeAll, { requests: both("f") })).toMatchObject({ ok: false, results: [{ ok: false }, { ok: true }] });
    // checkAll: 50 at once fits the tier's capacity; without the tier it can never succeed.
    expect(await t.query(api.overrides.checkAll, { requests: [{ name: "llm", key: "q", tier: "pro", count: 50 }] })).toEqual({ ok: true, results: [{ ok: true }] });
    expect(await convexErrorData(t.query(api.overrides.checkAll, { requests: [{ name: "llm", key: "q", count: 50 }] }))).toMatchObject({ kind: "InvalidRateLimit", field: "count" });
    // A blocked tier refuses the call, and nothing is taken from the other limit. At T0 + 30 s
    // (explicit: convex-test's clock moves with commits, and four were at T0).
    vi.setSystemTime(T0 + 30_000);
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "banned" }, override: { blockedUntil: T0 + 90_000 } });
    const refused = await t.mutation(api.overrides.takeAll, { requests: [{ name: "llm", key: "b", tier: "banned" }, { name: "signIn", key: "b" }] });
    expect(refused).toEqual({ ok: false, retryAfter: 60_000, results: [{ ok: false, retryAfter: 60_000 }, { ok: true }] });
    expect(await t.query(api.overrides.value, { name: "signIn", key: "b" })).toMatchObject({ value: 3 });
  });

  test("check decides as limit would, taking nothing: a key's config, a block, a lockout", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "big" }, override: pro });
    for (let i = 0; i < 3; i++) expect(await t.query(api.overrides.check, { name: "llm", key: "big", count: 10 })).toEqual({ ok: true });
    expect(await t.query(api.overrides.value, { name: "llm", key: "big" })).toMatchObject({ by: "key", value: 100 });
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "bad" }, override: { blockedUntil: T0 + 1500 } });
    // Checked at T0 + 500 ms (explicit: convex-test's clock moves with commits, two were at T0).
    vi.setSystemTime(T0 + 500);
    expect(await t.query(api.overrides.check, { name: "llm", key: "bad" })).toEqual({ ok: false, retryAfter: 1000 });
    vi.setSystemTime(T0 + 1500 - 1);
    expect(await t.query(api.overrides.check, { name: "llm", key: "bad" })).toEqual({ ok: false, retryAfter: 1 });
    vi.setSystemTime(T0 + 1500);
    expect(await t.query(api.overrides.check, { name: "llm", key: "bad" })).toEqual({ ok: true });
    // A key's override with a lockout: the check sees the lock the take wrote. The two takes at
    // T0 + 1500 ms, in one transaction.
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "lock" }, override: { config: { kind: "token bucket", rate: 2, period: MINUTE, lockout: MINUTE } } });
    expect(await takeAtOnce(t, 2, { name: "llm", key: "lock" })).toEqual([{ ok: true }, { ok: true }]);
    // 20 s later a token came back 10 s ago, but the lock runs 40 s more.
    vi.setSystemTime(T0 + 1500 + 20_000);
    expect(await t.query(api.overrides.check, { name: "llm", key: "lock" })).toEqual({ ok: false, retryAfter: 40_000 });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "lock" })).toEqual({ ok: false, retryAfter: 40_000 });
    vi.setSystemTime(T0 + 1500 + MINUTE);
    expect(await t.query(api.overrides.check, { name: "llm", key: "lock", count: 2 })).toEqual({ ok: true });
  });

  test("credit under a key's override: never above the override's capacity, whichever side of the named one", async () => {
    const t = makeTest();
    // The override and three takes at T0 in one transaction, the credit a second at T0: nothing
    // refills between them (convex-test's clock moves with commits).
    await t.run(async (ctx) => {
      await ctx.runMutation(api.overrides.set, { name: "llm", target: { key: "big" }, override: { config: { kind: "token bucket", rate: 30, period: HOUR } } });
      for (let i = 0; i < 3; i++) expect(await ctx.runMutation(api.overrides.take, { name: "llm", key: "big", count: 10 })).toEqual({ ok: true });
    });
    expect(await t.mutation(api.overrides.credit, { name: "llm", key: "big", count: 50 })).toEqual({ credited: 30 });
    expect(await t.query(api.overrides.value, { name: "llm", key: "big" })).toMatchObject({ value: 30, by: "key" });
    expect(await t.mutation(api.overrides.credit, { name: "llm", key: "big", count: 1 })).toEqual({ credited: 0 });
    // Below the named 10: a capacity of 3 is the ceiling.
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "small" }, override: { config: { kind: "token bucket", rate: 3, period: HOUR } } });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "small" })).toEqual({ ok: true });
    expect(await t.mutation(api.overrides.credit, { name: "llm", key: "small", count: 10 })).toEqual({ credited: 1 });
    expect(await t.query(api.overrides.value, { name: "llm", key: "small" })).toMatchObject({ value: 3 });
    // Through a tier's override too.
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: pro });
    expect(await t.mutation(api.overrides.take, { name: "llm", key: "p", tier: "pro", count: 10 })).toEqual({ ok: true });
    expect(await t.mutation(api.overrides.credit, { name: "llm", key: "p", tier: "pro", count: 20 })).toEqual({ credited: 10 });
  });

  test("a dry run under a block admits, takes nothing and logs the wait it would have made", async () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((...parts: unknown[]) => void lines.push(parts.map(String).join(" ")));
    try {
      const t = makeTest();
      await t.mutation(api.overrides.set, { name: "dry", target: { key: "d" }, override: { blockedUntil: T0 + 5000 } });
      expect(await t.mutation(api.overrides.take, { name: "dry", key: "d" })).toEqual({ ok: true });
      expect(lines.map((l) => JSON.parse(l) as unknown)).toContainEqual({ event: "rateLimit.dryRun", name: "dry", key: "d", count: 1, retryAfter: 5000 });
      expect(await t.query(api.overrides.value, { name: "dry", key: "d" })).toMatchObject({ value: 2, blockedUntil: T0 + 5000 });
    } finally {
      vi.mocked(console.log).mockRestore();
    }
  });

  test("metrics: a blocked refusal is a refused event, counted as blocked; a request under a key's config as overridden", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "metered", target: { key: "bad" }, override: { blockedUntil: T0 + HOUR } });
    await t.mutation(api.overrides.set, { name: "metered", target: { key: "vip" }, override: pro });
    // The takes a second later (explicit: convex-test's clock moves with commits, two were at T0).
    vi.setSystemTime(T0 + 1000);
    expect(await t.mutation(api.overrides.take, { name: "metered", key: "bad", count: 2 })).toEqual({ ok: false, retryAfter: HOUR - 1000 });
    expect(await t.mutation(api.overrides.take, { name: "metered", key: "vip", count: 2 })).toEqual({ ok: true });
    expect(await t.mutation(api.overrides.take, { name: "metered", key: "plain" })).toEqual({ ok: true });
    const { total } = await t.query(api.overrides.metrics, { name: "metered", from: T0, to: T0 + MINUTE });
    expect(total).toMatchObject({ admitted: 2, admittedTokens: 3, refused: 1, refusedTokens: 2, blocked: 1, overridden: 1 });
  });

  test("HTTP headers report the capacity in force under an override", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "vip" }, override: pro });
    const result = (await t.mutation(api.overrides.take, { name: "llm", key: "vip", details: true })) as RateLimitReturnsWithDetails;
    // 100 an hour: 99 left, full again in 36 s.
    expect(rateLimitHeaders("llm", result, rateLimiter)).toEqual({ "RateLimit-Policy": '"llm";q=100;w=3600', RateLimit: '"llm";r=99;t=36' });
    // The same limit for a key without one: the named 10.
    const plain = (await t.mutation(api.overrides.take, { name: "llm", key: "plain", details: true })) as RateLimitReturnsWithDetails;
    expect(rateLimitHeaders("llm", plain, rateLimiter)).toEqual({ "RateLimit-Policy": '"llm";q=10;w=3600', RateLimit: '"llm";r=9;t=360' });
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "bad" }, override: { blockedUntil: T0 + 1500 } });
    const blocked = (await t.mutation(api.overrides.take, { name: "llm", key: "bad", details: true })) as RateLimitReturnsWithDetails;
    expect(rateLimitHeaders("llm", blocked, rateLimiter)).toMatchObject({ "RateLimit-Policy": '"llm";q=10;w=3600', "Retry-After": "2" });
  });

  test("hookAPI with a tier function reports the config in force for the key's tier, and a block", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: pro });
    expect(await t.query(api.overrides.tieredHook, { key: "pro:ann" })).toMatchObject({ by: "tier", config: { rate: 100 }, value: 100, total: { capacity: 100 } });
    const free = await t.query(api.overrides.tieredHook, { key: "free:bob" });
    expect(free).toMatchObject({ config: { rate: 10 }, total: { capacity: 10 } });
    expect(free).not.toHaveProperty("by");
    expect(free).not.toHaveProperty("blockedUntil");
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: { blockedUntil: T0 + HOUR } });
    expect(await t.query(api.overrides.tieredHook, { key: "pro:ann" })).toMatchObject({ blockedUntil: T0 + HOUR, config: { rate: 10 } });
    // A key's own override beats its tier's block.
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "pro:ann" }, override: pro });
    const own = await t.query(api.overrides.tieredHook, { key: "pro:ann" });
    expect(own).toMatchObject({ by: "key", config: { rate: 100 } });
    expect(own).not.toHaveProperty("blockedUntil");
  });
});

describe("setting, listing and removing", () => {
  test("removing a tier's override: true, then false; requests naming the tier fall back to the named config", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: pro, note: "plan" });
    expect(await t.query(api.overrides.get, { name: "llm", target: { tier: "pro" } })).toEqual({ target: { tier: "pro" }, override: pro, note: "plan", updatedAt: T0 });
    expect(await t.mutation(api.overrides.remove, { name: "llm", target: { tier: "pro" } })).toBe(true);
    expect(await t.mutation(api.overrides.remove, { name: "llm", target: { tier: "pro" } })).toBe(false);
    expect(await t.query(api.overrides.get, { name: "llm", target: { tier: "pro" } })).toBeNull();
    const value = await t.query(api.overrides.value, { name: "llm", key: "p", tier: "pro" });
    expect(value).toMatchObject({ value: 10, config: { rate: 10 } });
    expect(value).not.toHaveProperty("by");
  });

  test("list with scope: only keys' (the keyless limit first), or only tiers'; setting again replaces", async () => {
    const t = makeTest();
    // Each set at its own millisecond, T0 to T0 + 3 ms (explicit: convex-test's clock moves with
    // commits, so a third at one frozen instant would be 1 ms later anyway).
    const firstSets = [
      { target: { tier: "team" }, override: pro },
      { target: { key: "b" }, override: pro },
      { target: { tier: "pro" }, override: pro },
      { target: {}, override: { blockedUntil: T0 + HOUR } },
    ];
    for (const [i, args] of firstSets.entries()) {
      vi.setSystemTime(T0 + i);
      await t.mutation(api.overrides.set, { name: "llm", ...args });
    }
    vi.setSystemTime(T0 + 10);
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "a" }, override: pro });
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "b" }, override: { blockedUntil: T0 + HOUR }, note: "again" });
    // Another limit's overrides are its own.
    await t.mutation(api.overrides.set, { name: "signIn", target: { key: "a" }, override: pro });
    const page = { numItems: 10, cursor: null };
    const keys = await t.query(api.overrides.list, { name: "llm", scope: "key", paginationOpts: page });
    expect(keys.page).toEqual([
      { target: {}, override: { blockedUntil: T0 + HOUR }, updatedAt: T0 + 3 },
      { target: { key: "a" }, override: pro, updatedAt: T0 + 10 },
      { target: { key: "b" }, override: { blockedUntil: T0 + HOUR }, note: "again", updatedAt: T0 + 10 },
    ]);
    expect(keys.isDone).toBe(true);
    const tiers = await t.query(api.overrides.list, { name: "llm", scope: "tier", paginationOpts: page });
    expect(tiers.page.map((r) => r.target)).toEqual([{ tier: "pro" }, { tier: "team" }]);
    expect((await t.query(api.overrides.list, { name: "llm", paginationOpts: page })).page).toHaveLength(5);
  });

  test("the keyless limit: its override with target {}", async () => {
    const t = makeTest();
    // The override and five takes at T0 in one transaction, so the read after it is at T0 too
    // (convex-test's clock moves with commits).
    await t.run(async (ctx) => {
      await ctx.runMutation(api.overrides.set, { name: "llm", target: {}, override: pro });
      for (let i = 0; i < 5; i++) expect(await ctx.runMutation(api.overrides.take, { name: "llm", count: 10 })).toEqual({ ok: true });
    });
    expect(await t.query(api.overrides.value, { name: "llm" })).toMatchObject({ by: "key", value: 50 });
    // A key of the same limit isn't the keyless limit.
    const keyed = await t.query(api.overrides.value, { name: "llm", key: "k" });
    expect(keyed).toMatchObject({ value: 10 });
    expect(keyed).not.toHaveProperty("by");
    expect(await t.query(api.overrides.get, { name: "llm", target: {} })).toMatchObject({ target: {}, override: pro });
    expect(await t.mutation(api.overrides.remove, { name: "llm", target: {} })).toBe(true);
    // Removed: the keyless limit's 50 carried over to the named config's 10.
    expect(await t.query(api.overrides.value, { name: "llm" })).toMatchObject({ value: 10 });
    expect(await t.query(api.overrides.value, { name: "llm" })).not.toHaveProperty("by");
  });

  test("resetting a key with its own override without the client (no config) is an error naming config, and writes nothing", async () => {
    const t = makeTest();
    // The override and a take at T0 in one transaction, so the refused reset (rolled back: no
    // commit) and the read after it are at T0 too (convex-test's clock moves with commits).
    await t.run(async (ctx) => {
      await ctx.runMutation(api.overrides.set, { name: "llm", target: { key: "a" }, override: pro });
      await ctx.runMutation(api.overrides.take, { name: "llm", key: "a", count: 10 });
    });
    const reset = (key: string) => t.run((ctx) => ctx.runMutation(components.rateLimiter.lib.resetRateLimit, { name: "llm", key }));
    expect(await convexErrorData(reset("a"))).toMatchObject({ kind: "InvalidRateLimit", field: "config" });
    expect(await t.query(api.overrides.value, { name: "llm", key: "a" })).toMatchObject({ by: "key", value: 90 });
    // A key without its own override needs none.
    await t.mutation(api.overrides.take, { name: "llm", key: "b", count: 10 });
    await reset("b");
    expect(await t.query(api.overrides.value, { name: "llm", key: "b" })).toMatchObject({ value: 10 });
    // Through the client (which passes the config) the key is full under its override, and keeps it.
    await t.mutation(api.overrides.reset, { name: "llm", key: "a" });
    expect(await t.query(api.overrides.value, { name: "llm", key: "a" })).toMatchObject({ by: "key", value: 100 });
  });

  test("an asynchronous limit: the applier keeps a key's override on the rows it writes", async () => {
    const t = makeTest();
    // Takes recorded, then applied: the key has rows, without an override.
    for (let i = 0; i < 3; i++) expect(await t.mutation(api.overrides.take, { name: "llmAsync", key: "a" })).toEqual({ ok: true });
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    await t.mutation(api.overrides.set, { name: "llmAsync", target: { key: "a" }, override: pro });
    // Takes under the key's override (the 7 left carried over, refilling at its rate), recorded for
    // the applier, which rewrites the rows.
    for (let i = 0; i < 3; i++) expect(await t.mutation(api.overrides.take, { name: "llmAsync", key: "a" })).toEqual({ ok: true });
    await t.finishAllScheduledFunctions(vi.runAllTimers);
    // The key's override is known only from its rows (no tier named): they still carry it.
    const value = await t.query(api.overrides.value, { name: "llmAsync", key: "a" });
    expect(value).toMatchObject({ by: "key", config: { rate: 100 } });
    // All 6 taken counted: at most 10 - 6 plus what refilled at 100 an hour since T0, up to the
    // instant the query saw (convex-test's clock runs ahead of Date.now after commits).
    const elapsed = value.ts - T0;
    expect(value.value).toBeLessThanOrEqual(4 + (100 * elapsed) / HOUR + 1e-9);
    expect(await t.query(api.overrides.get, { name: "llmAsync", target: { key: "a" } })).toMatchObject({ override: pro });
  });
});

describe("clearAll keeps a key's override and its rows together", () => {
  // Found by review: rows created before `before` went, carrying the key's override, while its
  // document (set later) stayed listed but no longer applied.
  test("rows older than `before` take the key's override with them; an override removed leaves no row carrying it", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.take, { name: "llm", key: "k" });
    vi.setSystemTime(T0 + 10_000);
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "k" }, override: pro });
    vi.setSystemTime(T0 + 20_000);
    await t.run((ctx) => ctx.runMutation(components.rateLimiter.lib.clearAll, { before: T0 + 5_000 }));
    expect(await t.query(api.overrides.get, { name: "llm", target: { key: "k" } })).toBeNull();
    const after = await t.query(api.overrides.value, { name: "llm", key: "k" });
    expect(after).not.toHaveProperty("by");
    expect(after).toMatchObject({ value: 10 });

    // The other way round: the override's document older than `before`, the key's rows newer.
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "m" }, override: pro });
    vi.setSystemTime(T0 + 30_000);
    await t.mutation(api.overrides.reset, { name: "llm", key: "m" });
    await t.run((ctx) => ctx.runMutation(components.rateLimiter.lib.clearAll, { before: T0 + 25_000 }));
    expect(await t.query(api.overrides.get, { name: "llm", target: { key: "m" } })).toBeNull();
    expect(await t.query(api.overrides.value, { name: "llm", key: "m" })).not.toHaveProperty("by");
  });
});

describe("the clean-up and tiers", () => {
  // Found by review: the clean-up judged every key under the named config, so a key written under
  // a tier's override was never idle and kept its rows forever.
  test("a tier user's key, full again under the tier's config, is deleted; a free user's too; a key's own override stays", async () => {
    const t = makeTest();
    await t.mutation(api.overrides.set, { name: "llm", target: { tier: "pro" }, override: pro });
    await t.mutation(api.overrides.set, { name: "llm", target: { key: "own" }, override: pro });
    await t.mutation(api.overrides.take, { name: "llm", key: "p", tier: "pro" });
    await t.mutation(api.overrides.take, { name: "llm", key: "f" });
    await t.mutation(api.overrides.take, { name: "llm", key: "own" });
    vi.setSystemTime(T0 + 10 * HOUR);
    const result = await t.mutation(api.overrides.cleanup, {});
    expect(result).toMatchObject({ keysDeleted: 2 });
    // The pro user comes back full under the tier, as the kept row would have been.
    expect(await t.query(api.overrides.value, { name: "llm", key: "p", tier: "pro" })).toMatchObject({ by: "tier", value: 100 });
    expect(await t.query(api.overrides.value, { name: "llm", key: "own" })).toMatchObject({ by: "key", value: 100 });
  });
});
