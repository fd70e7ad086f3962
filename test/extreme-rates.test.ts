// retryAfter to the ms at extreme rates (property tests over the whole request flow and the applier, in memory): rates far below one token per period and periods up to 1e15 ms, waits to 1e16 ms, every kind, sharded, reserving, asynchronous; a retry at now + retryAfter succeeds and 1 ms earlier is refused, or, where that instant would pass Number.MAX_SAFE_INTEGER ms, an error naming the count.
import { fc, test } from "@fast-check/vitest";
import { ConvexError } from "convex/values";
import { describe, expect } from "vitest";
import { MemoryStore } from "../tools/memory-store.js";
import { runs, TIMEOUT } from "../tools/fast-check.js";
import { validateCount } from "../src/shared/validation/validate.js";
import { calculateRateLimit, decideRateLimit } from "../src/shared/kinds/predict.js";
import type { RateLimitArgs, RateLimitConfig, RateLimitResult } from "../src/shared/shapes/validators.js";

/** Whether validation lets `count` through under `config`. */
function servable(count: number, config: RateLimitConfig, reserve: boolean): boolean {
  try {
    validateCount(count, config, reserve);
    return true;
  } catch {
    return false;
  }
}

const kinds = ["token bucket", "fixed window", "approximate sliding window", "exact sliding window"] as const;

/**
 * A config whose wait for `count` tokens is about 10^`logWait` ms: `rate` is `count` tokens per
 * that many ms, over a period of 10^`logPeriod` ms (so often far below one token per period).
 */
const extreme = fc
  .record({
    kind: fc.constantFrom(...kinds),
    logWait: fc.double({ min: 6, max: 16, noNaN: true }),
    logPeriod: fc.double({ min: 0, max: 15, noNaN: true }),
    count: fc.oneof(fc.integer({ min: 1, max: 5 }), fc.double({ min: 0.01, max: 5, noNaN: true })),
    capacityTimes: fc.double({ min: 0.2, max: 3, noNaN: true }),
    shards: fc.integer({ min: 1, max: 4 }),
    reserve: fc.boolean(),
    async: fc.boolean(),
  })
  .map(({ kind, logWait, logPeriod, count, capacityTimes, shards, reserve, async }) => {
    const period = Math.max(1, 10 ** logPeriod);
    // Every kind at every rate: the exact window's log is bounded whatever the rate (no cap since issue 39).
    const rate = (Math.max(1, count) * period) / 10 ** logWait;
    const sliding = kind.endsWith("sliding window");
    const capacity = sliding ? rate : Math.max(rate * capacityTimes, count);
    // A sliding window holds at most its rate: a count above it could never succeed.
    const taken = sliding ? Math.min(count, rate) : count;
    // As many shards as whole tokens of rate and capacity allow (validation asks that).
    const n = Math.floor(rate) >= shards && Math.floor(capacity) >= shards ? shards : 1;
    const config = {
      kind: sliding ? "sliding window" : kind,
      rate,
      period,
      ...(sliding ? {} : { capacity }),
      ...(kind === "exact sliding window" ? { exact: true } : kind === "approximate sliding window" ? { exact: false } : {}),
      ...(reserve && !sliding ? { maxReserved: 2 * taken } : {}),
      shards: n,
      ...(async ? { applyUpdates: "asynchronously" as const } : {}),
    } as RateLimitConfig;
    return { config, count: taken, reserve: reserve && !sliding };
  });

describe("retryAfter at extreme rates", () => {
  test.prop([extreme, fc.integer({ min: 0, max: 2e12 }), fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true })], runs(300, 5000))(
    "takes until refused (or reserved): whole ms ≥ 1; at now + retryAfter the request (a peek, for a reservation) succeeds, 1 ms earlier it is refused; past Number.MAX_SAFE_INTEGER ms, an error naming the count",
    ({ config, count, reserve }, now, draw) => {
      // Only counts the config can serve (a sharded limit's weakest pair, say): the rest are refused before any wait.
      fc.pre(servable(count, config, reserve));
      const store = new MemoryStore();
      const args: RateLimitArgs = { name: "extreme", config, count, ...(reserve ? { reserve: true } : {}) };
      let result: RateLimitResult | undefined;
      // Taken one at a time, the applier folding each in, until refused or reserved ahead.
      try {
        for (let i = 0; i < 20; i++) {
          result = store.limit(args, now, () => draw);
          store.apply(now);
          if (!result.ok || result.retryAfter !== undefined) break;
        }
      } catch (error) {
        // A wait past Number.MAX_SAFE_INTEGER ms can't be exact: an error naming the count, never a result.
        expect(error).toBeInstanceOf(ConvexError);
        expect(error instanceof ConvexError ? error.data : undefined).toMatchObject({ kind: "InvalidRateLimit", field: "count", value: String(count) });
        expect(String((error as ConvexError<{ message: string }>).data.message)).toMatch(/runs past Number.MAX_SAFE_INTEGER ms/);
        return;
      }
      if (result === undefined || (result.ok && result.retryAfter === undefined)) return;
      const retryAfter = result.retryAfter!;
      expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
      // A reservation's retryAfter is when its debt is repaid: a peek (count 0) passes from then.
      const again: RateLimitArgs = result.ok ? { name: "extreme", config, count: 0 } : args;
      const at = now + retryAfter;
      expect(at).toBeLessThanOrEqual(Number.MAX_SAFE_INTEGER);
      expect(store.check(again, at, () => draw)).toMatchObject({ ok: true });
      if (retryAfter > 1) expect(store.check(again, at - 1, () => draw)).toMatchObject({ ok: false });
    },
    TIMEOUT,
  );
});

describe("the case found: a sharded reservation recorded asynchronously", () => {
  test("its debts, folded in by the applier, are repaid at the retryAfter it was given, to the ms", () => {
    // 7.5 tokens in 1e15 ms over two shards; the reservation splits the debt between them, and
    // the applier's fold had left shard 1 a 13-digit decimal 1e-14 tokens from the
    // value decided, so the retryAfter given came 12 ms before the debt was repaid.
    const config: RateLimitConfig = {
      kind: "token bucket",
      rate: 7.496907461891427,
      period: 999999999999983.6,
      capacity: 5.7446141812430085,
      maxReserved: 2,
      shards: 2,
      applyUpdates: "asynchronously",
    };
    const now = 348682193865;
    const store = new MemoryStore();
    const args: RateLimitArgs = { name: "extreme", config, count: 1, reserve: true };
    let result: RateLimitResult = { ok: true };
    for (let i = 0; i < 6 && result.retryAfter === undefined; i++) {
      result = store.limit(args, now, () => 0);
      store.apply(now);
    }
    expect(result.ok).toBe(true);
    const retryAfter = result.retryAfter!;
    expect(retryAfter).toBeGreaterThan(3e13);
    const peek: RateLimitArgs = { name: "extreme", config, count: 0 };
    expect(store.check(peek, now + retryAfter, () => 0)).toEqual({ ok: true });
    expect(store.check(peek, now + retryAfter - 1, () => 0)).toMatchObject({ ok: false, retryAfter: 1 });
  });
});

describe("a wait past Number.MAX_SAFE_INTEGER ms", () => {
  // One token per 1e16 ms window: from an empty window at 1000, the next window starts at 1e16.
  const config: RateLimitConfig = { kind: "fixed window", rate: 1, period: 1e16, start: 0 };
  const empty = { value: 0, ts: 0 };
  test("decideRateLimit, the server's verdict, refuses it as an error naming the count", () => {
    let error: unknown;
    try {
      decideRateLimit(empty, config, { now: 1000, count: 1 });
    } catch (e) {
      error = e;
    }
    expect(error instanceof ConvexError ? error.data : error).toMatchObject({ kind: "InvalidRateLimit", field: "count", value: "1" });
  });

  test("calculateRateLimit, a calculation for display, reports the wait to the float", () => {
    expect(calculateRateLimit(empty, config, 1000, 1)).toMatchObject({ value: -1, retryAfter: 1e16 - 1000 });
  });

  test("within it, both give the same exact wait", () => {
    const near: RateLimitConfig = { ...config, period: 1e15 };
    expect(decideRateLimit(empty, near, { now: 1000, count: 1 })).toMatchObject({ ok: false, retryAfter: 1e15 - 1000 });
    expect(calculateRateLimit(empty, near, 1000, 1)).toMatchObject({ retryAfter: 1e15 - 1000 });
  });
});
