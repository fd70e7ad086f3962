// limitAll and checkAll through the client on convex-test with fake timers: all or nothing,
// retryAfter when all succeed together, duplicates merged, throws naming every refusal, shards,
// reservations and asynchronous limits; plus the pure merge/combine tables.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, SECOND, type RateLimitConfig } from "../src/client/index.js";
import { combineResults, mergeRequests } from "../src/shared/flow/flow.js";
import { seededRandom } from "../tools/random.js";
import { components, convexErrorData, makeTest } from "./setup.js";

const T0 = Date.UTC(2025, 5, 1);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  vi.spyOn(Math, "random").mockImplementation(seededRandom(11));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const rl = new RateLimiter(components.rateLimiter, {
  // one a second per user, bursts of 2
  perUser: { kind: "token bucket", rate: 60, period: MINUTE, capacity: 2 },
  // 3 a minute per team
  perTeam: { kind: "fixed window", rate: 3, period: MINUTE, start: 0 },
  // 100 a minute overall, over 4 shards
  global: { kind: "token bucket", rate: 100, period: MINUTE, shards: 4 },
  hot: { kind: "token bucket", rate: 10, period: MINUTE, applyUpdates: "asynchronously" },
});

const send = (user: string, team: string) =>
  [
    { name: "perUser", key: user },
    { name: "perTeam", key: team },
    { name: "global" },
  ] as const;

describe("limitAll", () => {
  test("takes from every limit or none: a refusal by one leaves the others untouched", async () => {
    const t = makeTest();
    for (let i = 0; i < 3; i++) {
      expect((await t.run((ctx) => rl.limitAll(ctx, send(`u${i}`, "team")))).ok).toBe(true);
    }
    // The team is out (3 a minute); the user's own limit must not have been spent.
    const refused = await t.run((ctx) => rl.limitAll(ctx, send("fresh", "team")));
    expect(refused.ok).toBe(false);
    expect(refused.results.map((r) => r.ok)).toEqual([true, false, true]);
    const user = await t.run((ctx) => rl.getValue(ctx, "perUser", { key: "fresh" }));
    expect(user.value).toBe(2);
  });

  test("retryAfter is when all could succeed together, not the first refusal's", async () => {
    const t = makeTest();
    await t.run((ctx) => rl.limitAll(ctx, [{ name: "perUser", key: "u", count: 2 }, { name: "perTeam", key: "x", count: 3 }]));
    // At 10 s: the user has a token again in... already (2 s), the team only at the next minute.
    vi.setSystemTime(T0 + 10 * SECOND);
    const r = await t.run((ctx) => rl.checkAll(ctx, [{ name: "perUser", key: "u", count: 2 }, { name: "perTeam", key: "x" }]));
    expect(r.ok).toBe(false);
    expect(r.retryAfter).toBe(50 * SECOND); // the team's window opens at T0 + 60 s
    vi.setSystemTime(T0 + 60 * SECOND);
    expect((await t.run((ctx) => rl.limitAll(ctx, [{ name: "perUser", key: "u", count: 2 }, { name: "perTeam", key: "x" }]))).ok).toBe(true);
  });

  test("the same name and key twice is one request with the counts summed", async () => {
    const t = makeTest();
    const twice = [
      { name: "perUser", key: "u" },
      { name: "perUser", key: "u" },
    ] as const;
    expect((await t.run((ctx) => rl.limitAll(ctx, twice))).results).toEqual([{ ok: true }, { ok: true }]);
    // Both tokens are gone: a third is refused.
    expect((await t.run((ctx) => rl.limit(ctx, "perUser", { key: "u" }))).ok).toBe(false);
    // Three together exceed the capacity of 2: a request that can never succeed, named `count`.
    const three = [...twice, { name: "perUser", key: "u" }] as const;
    expect(await convexErrorData(t.run((ctx) => rl.checkAll(ctx, three)))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "count",
      value: "3",
    });
  });

  test("throws: RateLimited names every limit that refused", async () => {
    const t = makeTest();
    await t.run((ctx) => rl.limitAll(ctx, [{ name: "perUser", key: "u", count: 2 }, { name: "perTeam", key: "x", count: 3 }]));
    expect(await convexErrorData(t.run((ctx) => rl.limitAll(ctx, send("u", "x"), { throws: true })))).toMatchObject({
      kind: "RateLimited",
      name: "perUser",
      names: ["perUser", "perTeam"],
      retryAfter: MINUTE,
    });
  });

  test("reserve: ok with the latest wait, and the work may run when every reservation is repaid", async () => {
    const t = makeTest();
    const budget: RateLimitConfig = { kind: "token bucket", rate: 60, period: MINUTE, capacity: 2, maxReserved: 10 };
    const r = await t.run((ctx) =>
      rl.limitAll(ctx, [{ name: "a", config: budget, count: 4 }, { name: "b", config: budget, count: 5 }], { reserve: true }),
    );
    expect(r).toEqual({ ok: true, retryAfter: 3 * SECOND, results: [{ ok: true, retryAfter: 2 * SECOND }, { ok: true, retryAfter: 3 * SECOND }] });
  });

  test("an asynchronous limit in the mix records its take; check counts it", async () => {
    const t = makeTest();
    for (let i = 0; i < 10; i++) expect((await t.run((ctx) => rl.limitAll(ctx, [{ name: "hot" }]))).ok).toBe(true);
    expect((await t.run((ctx) => rl.check(ctx, "hot"))).ok).toBe(false);
  });
});

describe("mergeRequests and combineResults (pure)", () => {
  const config: RateLimitConfig = { kind: "token bucket", rate: 1, period: SECOND };
  test("merges the same name and key, keeping first-seen order", () => {
    const { merged, of } = mergeRequests({
      requests: [
        { name: "a", config, count: 2 },
        { name: "b", key: "k", config },
        { name: "a", config },
      ],
    });
    expect(merged.map((m) => [m.name, m.key, m.count])).toEqual([
      ["a", undefined, 3],
      ["b", "k", 1],
    ]);
    expect(of).toEqual([0, 1, 0]);
  });

  test("the same name under different keys, or none, stays apart", () => {
    const { merged, of } = mergeRequests({
      requests: [{ name: "a", key: "k1", config }, { name: "a", key: "k2", config }, { name: "a", config }, { name: "a", key: "k1", config }],
    });
    expect(merged.map((m) => [m.key, m.count])).toEqual([["k1", 2], ["k2", 1], [undefined, 1]]);
    expect(of).toEqual([0, 1, 2, 0]);
  });

  test("each merged request is the whole request: key, count, config, and the call's reserve and details", () => {
    const { merged } = mergeRequests({
      requests: [{ name: "a", key: "k", config, count: 0 }, { name: "b", config }],
      reserve: true,
      details: false,
    });
    expect(merged).toEqual([
      { name: "a", key: "k", count: 0, config, reserve: true, details: false },
      { name: "b", count: 1, config, reserve: true, details: false },
    ]);
    // Options the call leaves out stay out (each request's own flow applies their defaults).
    expect(mergeRequests({ requests: [{ name: "a", config }] }).merged).toEqual([{ name: "a", count: 1, config }]);
  });

  test("two configs for one name and key are an InvalidRateLimit naming requests", () => {
    expect(() => mergeRequests({ requests: [{ name: "a", config }, { name: "a", config: { ...config, rate: 2 } }] })).toThrow(
      /"field":"requests","value":"\\"a\\"".*the same limit and key twice with different configs/,
    );
  });

  test.each([
    // [why, results, expected ok, expected retryAfter]
    ["all ok", [{ ok: true }, { ok: true }], true, undefined],
    ["one refusal without a reservation beside it", [{ ok: true }, { ok: false, retryAfter: 7 }], false, 7],
    ["two refusals: the later wait", [{ ok: false, retryAfter: 5 }, { ok: true }, { ok: false, retryAfter: 9 }], false, 9],
    ["reservations: the later repayment", [{ ok: true, retryAfter: 4 }, { ok: true, retryAfter: 2 }], true, 4],
    ["a refusal beside a reservation: the refusal's wait", [{ ok: true, retryAfter: 40 }, { ok: false, retryAfter: 3 }], false, 3],
  ] as [string, ({ ok: true; retryAfter?: number } | { ok: false; retryAfter: number })[], boolean, number | undefined][])(
    "%s",
    (_why, results, ok, retryAfter) => {
      const { result: out } = combineResults(results, results.map((_, i) => i));
      expect(out.ok).toBe(ok);
      expect(out.retryAfter).toBe(retryAfter);
      // Upstream's shape: no `retryAfter` field at all when there is nothing to wait for.
      expect("retryAfter" in out).toBe(retryAfter !== undefined);
    },
  );
});

describe("limitAll validates each request before merging", () => {
  test("a negative count is an error, even when another request for the same key makes the sum positive", () => {
    const config: RateLimitConfig = { kind: "token bucket", rate: 10, period: SECOND };
    expect(() => mergeRequests({ requests: [{ name: "a", config, count: -5 }, { name: "a", config, count: 6 }] })).toThrow(
      /"field":"count".*must be a finite number ≥ 0/,
    );
  });

  test("the same config written in another field order is the same limit", () => {
    const a: RateLimitConfig = { kind: "token bucket", rate: 10, period: SECOND };
    const b = { period: SECOND, rate: 10, kind: "token bucket" } as RateLimitConfig;
    expect(mergeRequests({ requests: [{ name: "x", config: a }, { name: "x", config: b }] }).merged[0]!.count).toBe(2);
  });
});
