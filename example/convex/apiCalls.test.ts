// apiCalls.call through convex-test and register(): a hot global token bucket (100 a second)
// split over 10 shards; a burst beyond it, then the refill. Math.random is seeded so runs replay.
// A burst's calls share one instant by running in one transaction (`t.run`): a deployment's clock
// moves on with its commits, so separate calls made "at once" would run a ms apart.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { isRateLimitError, SECOND } from "convex-rate-limiter";
import { api } from "./_generated/api.js";
import { rateLimiter } from "./limits.js";
import { seededRandom as seeded } from "../../tools/random.js";
import { makeTest } from "./test.setup.js";

const START = Date.UTC(2025, 0, 1, 9);
const CAPACITY = 100;
/** Each of the 10 shards holds 10 tokens and gets one back every 100 ms. */
const SHARD_REFILL = SECOND / 10;

type Test = ReturnType<typeof makeTest>;

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(START);
  vi.spyOn(Math, "random").mockImplementation(seeded(1));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

/**
 * Makes `n` calls at the current instant, one after another, each a nested mutation in one
 * transaction (a refused one rolls back alone); returns how many were admitted and the refusals'
 * waits.
 */
async function burst(t: Test, n: number) {
  return t.run(async (ctx) => {
    let admitted = 0;
    const waits: number[] = [];
    for (let i = 0; i < n; i++) {
      try {
        await ctx.runMutation(api.apiCalls.call, {});
        admitted++;
      } catch (error) {
        if (!isRateLimitError(error)) throw error;
        waits.push(error.data.retryAfter);
      }
    }
    return { admitted, waits };
  });
}

/** Tokens left across all ten shards (reads every shard row). */
async function remaining(t: Test): Promise<number | undefined> {
  const { total } = await t.run((ctx) => rateLimiter.getValue(ctx, "apiCalls", { sampleShards: 10, details: true }));
  expect(total?.exact).toBe(true);
  return total?.value;
}

describe("call", () => {
  test("a burst never gets more than the capacity, and strands almost none of it", async () => {
    const t = makeTest();
    const { admitted, waits } = await burst(t, CAPACITY + 20);
    expect(admitted).toBeLessThanOrEqual(CAPACITY);
    // Quality, not a guarantee: a call is refused only when both shards it read are empty, so
    // little is stranded at the end of a burst. One shard's worth at most.
    expect(admitted).toBeGreaterThanOrEqual(CAPACITY - CAPACITY / 10);
    // Every token taken is accounted for in the shards.
    expect(await remaining(t)).toBeCloseTo(CAPACITY - admitted, 9);
    // A refusal says when the shards it read have a token again: within one shard's refill time.
    expect(waits.length).toBe(CAPACITY + 20 - admitted);
    for (const wait of waits) {
      expect(wait).toBeGreaterThanOrEqual(1);
      expect(wait).toBeLessThanOrEqual(SHARD_REFILL);
    }
  });

  test("after a second the whole limit has refilled", async () => {
    const t = makeTest();
    await burst(t, CAPACITY + 20);
    vi.advanceTimersByTime(SECOND);
    expect(await remaining(t)).toBe(CAPACITY);
  });

  test("under its rate, a hot limit refuses nothing", async () => {
    const t = makeTest();
    // 5 calls every 100 ms (half the rate) for 3 s: after the first 100 ms, the shards hold far
    // more than a caller could need.
    for (let tick = 0; tick < 30; tick++) {
      vi.setSystemTime(START + tick * 100);
      expect((await burst(t, 5)).waits).toEqual([]);
    }
  });
});
