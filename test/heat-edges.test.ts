// The sizing rule's edges that heat.test.ts leaves open (pure, explicit values): requests of several tokens, a heat exactly at the rule's limit, a stated capacity in the recommendation, minutes of reservations only, and the mutationMs error's message.
import { describe, expect, test } from "vitest";
import { ConvexError } from "convex/values";
import { heatOf, heatOfMetrics, planFor, validateMutationMs, type HeatSample } from "../src/shared/metrics/heat.js";
import { SECOND } from "../src/shared/kinds/algebra.js";

const T0 = Date.UTC(2025, 0, 1);

describe("planFor with requests of several tokens", () => {
  test("a request of 4 tokens needs 8 tokens a shard: 1,111 tokens fit 138 shards, short of 250, so asynchronous", () => {
    // 1,000 QPS at 50 ms: 250 shards. ⌊1,111.1 / (2 × 4)⌋ = 138 shards fit, for mutations of 138 × 0.2 / 1,000 s = 27 ms.
    expect(planFor({ qps: 1000, rate: 1000 / 0.9, count: 4, mutationMs: 50 })).toEqual({
      mode: "asynchronously",
      shards: 1,
      writesPerSecond: 1000,
      exactShards: 250,
      exactMutationMs: 27,
    });
  });
});

describe("heat at the rule's edge", () => {
  test("8 writes a second per shard at 25 ms is at the rule's limit, not over it: not hot", () => {
    // 480 admissions in the busiest minute on one shard: 8 a second, the most 25 ms mutations allow.
    expect(heatOfMetrics([{ admitted: 480, reserved: 0 }], { rate: 100, period: SECOND }, 25)).toEqual({
      writesPerShard: 8,
      samples: 1,
      mutationMs: 25,
      maxWritesPerShard: 8,
      hot: false,
    });
  });

  test("a minute of reservations only is a busy minute: each reservation writes", () => {
    expect(heatOfMetrics([{ admitted: 0, reserved: 120 }], { rate: 100, period: SECOND }, 25)).toEqual({
      writesPerShard: 2,
      samples: 1,
      mutationMs: 25,
      maxWritesPerShard: 8,
      hot: false,
    });
  });

  test("the recommendation keeps 2 tokens a shard of the stated capacity, not of the rate", () => {
    // One row written 1 ms ago: 1,000 writes a second need 125 shards at 25 ms. A capacity of
    // 1,000 fits 500 shards of 2 tokens; the rate's 100 tokens would fit only 50.
    const row: HeatSample = { state: { value: 1, ts: T0 - 1 }, p: { kind: "token bucket", capacity: 1000, rate: 100, period: SECOND } };
    expect(heatOf([row], { rate: 100, period: SECOND, capacity: 1000 }, T0, 25)?.recommend).toEqual({ applyUpdates: "transactionally", shards: 125 });
  });
});

describe("validateMutationMs", () => {
  test.each([
    // The value as the error shows it: a string.
    [0, "0", "mutationMs = 0: must be a finite number of ms > 0"],
    [-5, "-5", "mutationMs = -5: must be a finite number of ms > 0"],
  ])("mutationMs %d is refused with a message saying what it must be", (mutationMs, value, message) => {
    let error: unknown;
    try {
      validateMutationMs(mutationMs);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConvexError);
    expect((error as ConvexError<{ message: string }>).data).toEqual({ kind: "InvalidRateLimit", field: "mutationMs", value, message });
  });

  test("absent or a finite number of ms above 0 is accepted", () => {
    expect(() => validateMutationMs(undefined)).not.toThrow();
    expect(() => validateMutationMs(0.5)).not.toThrow();
  });
});
