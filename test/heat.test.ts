// The "too hot" report (src/shared/metrics/heat.ts): the sizing rule, the write-rate estimate from rows written at known instants (pure, then through getValue on convex-test at explicit instants), its shapes, its validation, and that it adds no write.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { heatOf, heatOfMetrics, maxWritesPerShard, planFor, shardsFor, type HeatSample } from "../src/shared/metrics/heat.js";
import { MINUTE, SECOND } from "../src/shared/kinds/algebra.js";
import { RateLimiter, type RateLimitConfig } from "../src/client/index.js";
import { components, convexErrorData, makeTest } from "./setup.js";
import { anyApi, type ApiFromModules } from "convex/server";
import type * as hooks from "./app/hooks.js";

const app = anyApi as unknown as ApiFromModules<{ hooks: typeof hooks }>;

const T0 = Date.UTC(2025, 0, 1);

describe("the sizing rule", () => {
  test.each([
    // [writes/s, mutation ms, shards]: a shard takes at most one write per five mutation times
    [200, 25, 25], // 8 writes/s per shard × 25 ms = 1/5
    [1000, 25, 125],
    [200, 10, 10],
    [200, 50, 50],
    [1000, 50, 250],
    [8, 25, 1], // 8 × 25 ms = 1/5: one shard is enough
    [9, 25, 2], // a little over: two
    [0, 25, 1],
  ])("%d writes a second at %d ms need %d shards", (writes, ms, shards) => {
    expect(shardsFor(writes, ms)).toBe(shards);
  });

  test("the most writes a shard may take: 20 a second at 10 ms, 8 at 25, 4 at 50, 2 at 100", () => {
    expect([10, 25, 50, 100].map(maxWritesPerShard)).toEqual([20, 8, 4, 2]);
  });

  test("transactional while each shard keeps 2 tokens; asynchronous beyond, with the mutation time an exact limit fits", () => {
    // 1,000 QPS at 50 ms: 250 shards of a 1,111-token bucket hold 4.4 each.
    expect(planFor({ qps: 1000, rate: 1000 / 0.9, mutationMs: 50 })).toEqual({ mode: "transactionally", shards: 250, writesPerSecond: 1000 });
    // At 100 ms, 500 shards of 1,111 tokens hold 2.2 each: still transactional.
    expect(planFor({ qps: 1000, rate: 1000 / 0.9, mutationMs: 100 })).toMatchObject({ mode: "transactionally", shards: 500 });
    // A limit of 333 a second at a peak of 1,000 QPS, at 50 ms: 250 shards would hold 1.3 tokens.
    // 166 shards fit (2 tokens each), enough for mutations of 166 × 0.2 / 1,000 s = 33 ms.
    expect(planFor({ qps: 1000, rate: 1000 / 3, mutationMs: 50 })).toEqual({
      mode: "asynchronously",
      shards: 1,
      writesPerSecond: 1000,
      exactShards: 250,
      exactMutationMs: 33,
    });
  });
});

/** A token bucket's row last written `age` ms before T0 (100 a second over `shards`: 100 / shards each). */
const bucketRow = (age: number | null, shards = 1): HeatSample => ({
  state: age === null ? null : { value: 1, ts: T0 - age },
  p: { kind: "token bucket", capacity: 100 / shards, rate: 100 / shards, period: SECOND },
});

describe("heatOf: writes per shard from the rows' stamps, at explicit instants", () => {
  const config = { rate: 100, period: SECOND, shards: 4 };

  test("four shards last written 100, 200, 300 and 400 ms ago: 4 writes in 1 s of ages, 4 a second each", () => {
    const rows = [100, 200, 300, 400].map((age) => bucketRow(age, 4));
    expect(heatOf(rows, config, T0, 25)).toEqual({ writesPerShard: 4, samples: 4, mutationMs: 25, maxWritesPerShard: 8, hot: false });
  });

  test("the same rows are too hot for 100 ms mutations: 16 writes a second need ⌈16 × 0.1 / 0.2⌉ = 8 shards", () => {
    const rows = [100, 200, 300, 400].map((age) => bucketRow(age, 4));
    expect(heatOf(rows, config, T0, 100)).toEqual({
      writesPerShard: 4,
      samples: 4,
      mutationMs: 100,
      maxWritesPerShard: 2,
      hot: true,
      recommend: { applyUpdates: "transactionally", shards: 8 },
    });
  });

  test("rows never written are no sample; with none, no estimate", () => {
    expect(heatOf([bucketRow(100, 4), bucketRow(null, 4)], config, T0, 50)).toMatchObject({ writesPerShard: 10, samples: 1, hot: true });
    expect(heatOf([bucketRow(null, 4)], config, T0, 25)).toBeNull();
  });

  test("a row written this very ms counts as written a ms ago, not infinitely hot", () => {
    expect(heatOf([bucketRow(0)], { rate: 100, period: SECOND }, T0, 25)).toMatchObject({ writesPerShard: 1000, hot: true });
  });

  test("too hot for any shards that keep 2 tokens: asynchronous, unsharded", () => {
    // 1,000 writes a second on one shard of 100 tokens at 25 ms: 125 shards would hold under 1 token.
    const heat = heatOf([bucketRow(1)], { rate: 100, period: SECOND }, T0, 25);
    expect(heat?.recommend).toEqual({ applyUpdates: "asynchronously", shards: 1 });
  });

  test("a fixed window counts what its window took, capacity − value, since the window began", () => {
    const p = { kind: "fixed window", capacity: 100, rate: 100, period: SECOND };
    // 30 taken in the 300 ms since the window's start: 100 a second.
    expect(heatOf([{ state: { value: 70, ts: T0 - 300 }, p }], { rate: 100, period: SECOND }, T0, 25)).toMatchObject({
      writesPerShard: 100,
      samples: 1,
      hot: true,
    });
    // A window that may start less than full (capacity over rate) can't say what it took.
    expect(heatOf([{ state: { value: 70, ts: T0 - 300 }, p: { ...p, capacity: 200 } }], { rate: 100, period: SECOND, capacity: 200 }, T0, 25)).toBeNull();
  });
});

describe("heatOfMetrics: the busiest minute's writes", () => {
  const config = { rate: 100, period: SECOND, shards: 2 };
  test("240 admitted and 60 reserved in the busiest minute, over 2 shards: 2.5 writes a second each", () => {
    const buckets = [
      { admitted: 60, reserved: 0 },
      { admitted: 240, reserved: 60 },
      { admitted: 0, reserved: 0 },
    ];
    expect(heatOfMetrics(buckets, config, 25)).toEqual({ writesPerShard: 2.5, samples: 2, mutationMs: 25, maxWritesPerShard: 8, hot: false });
    // At 100 ms a shard may take 2 a second: 5 a second need ⌈5 × 0.1 / 0.2⌉ = 3 shards.
    expect(heatOfMetrics(buckets, config, 100)).toMatchObject({ hot: true, recommend: { applyUpdates: "transactionally", shards: 3 } });
  });
  test("no minute with a write: no estimate (refusals write nothing)", () => {
    expect(heatOfMetrics([], config, 25)).toBeNull();
    expect(heatOfMetrics([{ admitted: 0, reserved: 0 }], config, 25)).toBeNull();
  });
});

describe("getValue's heat, on rows written at known rates", () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  const bucket: RateLimitConfig = { kind: "token bucket", rate: 100, period: SECOND };
  const limitAt = (t: ReturnType<typeof makeTest>, at: number, config: RateLimitConfig) => {
    vi.setSystemTime(at);
    return t.mutation(components.rateLimiter.lib.rateLimit, { name: "hot", config });
  };
  const valueAt = (t: ReturnType<typeof makeTest>, at: number, args: Record<string, unknown>) => {
    vi.setSystemTime(at);
    return t.query(components.rateLimiter.lib.getValue, { name: "hot", config: bucket, ...args } as never);
  };

  test("one shard written every 20 ms (50 a second), read 20 ms after its last write: hot at 25 ms, fine at 4", async () => {
    const t = makeTest();
    for (let i = 0; i <= 10; i++) expect((await limitAt(t, T0 + 20 * i, bucket)).ok).toBe(true);
    const at = T0 + 220;
    const hot = await valueAt(t, at, { details: true });
    expect(hot.ts).toBe(at);
    expect(hot.heat).toEqual({
      writesPerShard: 50,
      samples: 1,
      mutationMs: 25,
      maxWritesPerShard: 8,
      hot: true,
      // 50 writes a second × 25 ms / 0.2 = 6.25: 7 shards of 14 or 15 tokens each.
      recommend: { applyUpdates: "transactionally", shards: 7 },
    });
    expect((await valueAt(t, at + 1, { details: true, mutationMs: 4 })).heat).toEqual({
      writesPerShard: 1000 / 21,
      samples: 1,
      mutationMs: 4,
      maxWritesPerShard: 50,
      hot: false,
    });
  });

  test("four shards, each written once at a known instant, all read: 4 writes over 140 ms of ages", async () => {
    const t = makeTest();
    const config: RateLimitConfig = { ...bucket, rate: 400, shards: 4 };
    // The request's shard is its first draw: shard i for draws in [i/4, (i+1)/4).
    const draws = vi.spyOn(Math, "random");
    for (let shard = 0; shard < 4; shard++) {
      draws.mockReturnValue((shard + 0.5) / 4);
      expect((await limitAt(t, T0 + 10 * shard, config)).ok).toBe(true);
    }
    draws.mockRestore();
    const value = await valueAt(t, T0 + 50, { config, details: true, sampleShards: 4 });
    // Ages 50, 40, 30 and 20 ms.
    // 114 writes a second over the limit × 25 ms / 0.2: 15 shards.
    expect(value.heat).toEqual({ writesPerShard: 4000 / 140, samples: 4, mutationMs: 25, maxWritesPerShard: 8, hot: true, recommend: { applyUpdates: "transactionally", shards: 15 } });
  });

  test("the default result is unchanged: no heat (nor total) without details; none for an asynchronous limit or a key never written", async () => {
    const t = makeTest();
    await limitAt(t, T0, bucket);
    const plain = await valueAt(t, T0 + 10, {});
    expect(Object.keys(plain).sort()).toEqual(["config", "shard", "ts", "value"]);
    expect(await valueAt(t, T0 + 11, { details: true, key: "never" })).not.toHaveProperty("heat");
    const async: RateLimitConfig = { ...bucket, applyUpdates: "asynchronously" };
    await limitAt(t, T0 + 12, async);
    expect(await valueAt(t, T0 + 13, { config: async, details: true })).not.toHaveProperty("heat");
  });

  test("hookAPI's public query leaves the heat out: it is for the server's operators", async () => {
    const t = makeTest();
    const send = { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 } as const;
    await t.mutation(components.rateLimiter.lib.rateLimit, { name: "send", config: send });
    vi.setSystemTime(T0 + 10);
    const direct = await t.query(components.rateLimiter.lib.getValue, { name: "send", config: send, details: true });
    expect(direct.heat).toBeDefined();
    const viaHook = await t.query(app.hooks.globalLimit, {});
    expect(viaHook).not.toHaveProperty("heat");
    expect(viaHook).toEqual((({ heat: _heat, ...rest }) => rest)(direct));
  });

  test.each([0, -1, Number.NaN, Number.POSITIVE_INFINITY])("mutationMs %d is refused, naming the field", async (mutationMs) => {
    const t = makeTest();
    expect(await convexErrorData(valueAt(t, T0, { details: true, mutationMs }))).toMatchObject({ kind: "InvalidRateLimit", field: "mutationMs" });
  });

  test("metrics with mutationMs: 60 admissions in one minute and 120 in the next, 2 a second at the busiest", async () => {
    const t = makeTest();
    const limits = {
      busy: { kind: "token bucket", rate: 100, period: SECOND, metrics: true },
      later: { kind: "token bucket", rate: 100, period: SECOND, metrics: true, applyUpdates: "asynchronously" },
    } satisfies Record<string, RateLimitConfig>;
    const rl = new RateLimiter(components.rateLimiter, limits);
    for (let i = 0; i < 60; i++) {
      vi.setSystemTime(T0 + i * SECOND);
      expect((await t.run((ctx) => rl.limit(ctx, "busy"))).ok).toBe(true);
    }
    for (let i = 0; i < 120; i++) {
      vi.setSystemTime(T0 + MINUTE + i * 500);
      expect((await t.run((ctx) => rl.limit(ctx, "busy"))).ok).toBe(true);
    }
    const span = { from: T0, to: T0 + 2 * MINUTE };
    expect(await t.run((ctx) => rl.metrics(ctx, "busy", span))).not.toHaveProperty("heat");
    expect((await t.run((ctx) => rl.metrics(ctx, "busy", { ...span, mutationMs: 25 }))).heat).toEqual({
      writesPerShard: 2,
      samples: 2,
      mutationMs: 25,
      maxWritesPerShard: 8,
      hot: false,
    });
    // At 150 ms a shard may take 1.33 a second: 2 a second need ⌈2 × 0.15 / 0.2⌉ = 2 shards.
    expect((await t.run((ctx) => rl.metrics(ctx, "busy", { ...span, mutationMs: 150 }))).heat).toEqual({
      writesPerShard: 2,
      samples: 2,
      mutationMs: 150,
      maxWritesPerShard: 200 / 150,
      hot: true,
      recommend: { applyUpdates: "transactionally", shards: 2 },
    });
    // An asynchronous limit's takes are inserts: no heat.
    await t.run((ctx) => rl.limit(ctx, "later"));
    expect(await t.run((ctx) => rl.metrics(ctx, "later", { ...span, mutationMs: 150 }))).not.toHaveProperty("heat");
    expect(await convexErrorData(t.run((ctx) => rl.metrics(ctx, "busy", { ...span, mutationMs: 0 })))).toMatchObject({ field: "mutationMs" });
  });

  test("the report adds no write: a request writes one row as before, and getValue with heat writes nothing", async () => {
    const t = makeTest();
    await limitAt(t, T0, bucket);
    vi.setSystemTime(T0 + 20);
    const measured = await t.run(async (ctx) => {
      const m0 = await ctx.meta.getTransactionMetrics();
      const value = await ctx.runQuery(components.rateLimiter.lib.getValue, { name: "hot", config: bucket, details: true, mutationMs: 50 });
      const m1 = await ctx.meta.getTransactionMetrics();
      await ctx.runMutation(components.rateLimiter.lib.rateLimit, { name: "hot", config: bucket });
      const m2 = await ctx.meta.getTransactionMetrics();
      return {
        hot: value.heat?.hot,
        report: { docs: m1.documentsWritten.used - m0.documentsWritten.used, bytes: m1.bytesWritten.used - m0.bytesWritten.used },
        request: { docs: m2.documentsWritten.used - m1.documentsWritten.used },
      };
    });
    expect(measured.hot).toBe(true);
    expect(measured.report).toEqual({ docs: 0, bytes: 0 });
    // The row's patch, as a request wrote before the report existed.
    expect(measured.request).toEqual({ docs: 1 });
  });
});
