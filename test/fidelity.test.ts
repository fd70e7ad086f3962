// Drop-in fidelity of results: app functions whose `returns` are @convex-dev/rate-limiter's own
// validators (test/app/upstreamShapes.ts) run against our component for every kind of result, on
// convex-test through the published register(); `details` is opt-in and changes the shape only then.
import { makeFunctionReference } from "convex/server";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter, type GetValueReturns, type RateLimitConfig, type RateLimitReturns } from "../src/client/index.js";
import { seededRandom } from "../tools/random.js";
import { components, makeTest } from "./setup.js";

const T0 = Date.UTC(2025, 3, 1);
type Request = { config: RateLimitConfig; key?: string; count?: number; reserve?: boolean };
const shapes = {
  limit: makeFunctionReference<"mutation", Request, RateLimitReturns>("upstreamShapes:limit"),
  check: makeFunctionReference<"query", Request, RateLimitReturns>("upstreamShapes:check"),
  getValue: makeFunctionReference<"query", { config: RateLimitConfig; sampleShards?: number }, GetValueReturns>(
    "upstreamShapes:getValue",
  ),
};

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(T0);
  vi.spyOn(Math, "random").mockImplementation(seededRandom(3));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

const configs: [string, RateLimitConfig][] = [
  ["token bucket", { kind: "token bucket", rate: 10, period: MINUTE, maxReserved: 10 }],
  ["fixed window", { kind: "fixed window", rate: 10, period: MINUTE, maxReserved: 10, start: 0 }],
  ["sharded token bucket", { kind: "token bucket", rate: 20, period: MINUTE, shards: 4, maxReserved: 20 }],
  ["asynchronous", { kind: "token bucket", rate: 10, period: MINUTE, applyUpdates: "asynchronously", maxReserved: 10 }],
];

describe.each(configs)("%s: results pass upstream's own validators", (_label, config) => {
  test("ok, reserved, refused, and a refused check", async () => {
    const t = makeTest();
    expect(await t.mutation(shapes.limit, { config })).toEqual({ ok: true });
    // Reserved: ok with a retryAfter.
    const reserved = await t.mutation(shapes.limit, { config, count: 3, reserve: true });
    expect(reserved.ok).toBe(true);
    let last = await t.mutation(shapes.limit, { config });
    for (let i = 0; i < 40 && last.ok; i++) last = await t.mutation(shapes.limit, { config });
    expect(last).toEqual({ ok: false, retryAfter: expect.any(Number) });
    // A check draws its own shards: refused, or ok on a sharded limit whose other shards hold tokens.
    expect([["ok"], ["ok", "retryAfter"]]).toContainEqual(Object.keys(await t.query(shapes.check, { config })));
  });

  test("getValue, one shard and every shard", async () => {
    const t = makeTest();
    await t.mutation(shapes.limit, { config });
    const one = await t.query(shapes.getValue, { config });
    expect(Object.keys(one).sort()).toEqual(["config", "shard", "ts", "value"]);
    expect(one.config.shards).toBe(1); // one row's share, as upstream gives an unsharded limit
    const all = await t.query(shapes.getValue, { config, sampleShards: config.shards ?? 1 });
    expect(Object.keys(all).sort()).toEqual(["config", "shard", "ts", "value"]);
  });
});

describe("details are opt-in", () => {
  const config: RateLimitConfig = { kind: "token bucket", rate: 20, period: MINUTE, shards: 4 };
  const rl = new RateLimiter(components.rateLimiter, { l: config });

  test("limit with details: the shards used, the tokens left and when the limit is full again", async () => {
    const t = makeTest();
    const r = await t.run((ctx) => rl.limit(ctx, "l", { count: 2, details: true }));
    // One shard of 5 was read and left with 3: scaled to the whole limit, 12 of 20 (an estimate,
    // on the safe side); that shard is full again after 2 tokens at 5 a minute.
    expect(r).toEqual({
      ok: true,
      details: { shards: [expect.any(Number)], remaining: 12, capacity: 20, resetAfter: 24_000, exact: false },
    });
    // Without the option, upstream's shape.
    expect(await t.run((ctx) => rl.limit(ctx, "l"))).toEqual({ ok: true });
  });

  test("getValue with details: the whole limit's total", async () => {
    const t = makeTest();
    await t.run((ctx) => rl.limit(ctx, "l", { count: 2 }));
    expect(await t.run((ctx) => rl.getValue(ctx, "l", { sampleShards: 4, details: true }))).toMatchObject({
      total: { value: 18, capacity: 20, exact: true },
    });
  });
});
