// Fractional counts that add up: many small requests at one instant take exactly the capacity,
// in both kinds, with validation, the decision, retryAfter and calculateRateLimit agreeing.
import { describe, expect, test } from "vitest";
import { calculateRateLimit, decideRateLimit, SECOND, type RateLimitConfig } from "../src/client/index.js";

const cases: [number, number, number][] = [
  // [requests, count each, capacity]
  [10, 0.7, 7],
  [20, 0.05, 1],
  [100, 0.01, 1],
  [5, 0.6, 3],
  [30, 0.1, 3],
  [3, 0.1, 0.3],
  [7, 0.3, 2.1],
];

describe.each(["token bucket", "fixed window"] as const)("%s", (kind) => {
  test.each(cases)("%i requests of %d on a capacity of %d all pass at one instant, and the next is refused", (n, count, capacity) => {
    const config: RateLimitConfig =
      kind === "token bucket"
        ? { kind, rate: capacity, period: SECOND, capacity }
        : { kind, rate: capacity, period: SECOND, capacity, start: 0 };
    let state: { value: number; ts: number } | null = null;
    for (let i = 0; i < n; i++) {
      const d = decideRateLimit(state, config, { now: 500, count });
      expect(d.ok, `request ${i + 1} of ${n}`).toBe(true);
      state = { value: d.value, ts: d.ts };
    }
    expect(state?.value).toBe(0);
    const next = decideRateLimit(state, config, { now: 500, count });
    expect(next.ok).toBe(false);
    // calculateRateLimit says the same, and the retry at exactly retryAfter succeeds.
    const calc = calculateRateLimit(state, config, 500, count);
    expect(calc.retryAfter).toBe(next.retryAfter);
    expect(decideRateLimit(state, config, { now: 500 + next.retryAfter!, count }).ok).toBe(true);
  });
});
