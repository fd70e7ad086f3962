// The algebra's edges (src/shared/kinds/algebra.ts), as tables of explicit instants: phases, a window
// boundary where float division lands one window late, the refill's snapping to whole tokens, the
// search for a wait at the edge of float precision, the errors that name what can't succeed, and
// the public conveniences' defaults. Each row is one a mutation test found no test for.
import { describe, expect, test } from "vitest";
import { decideRow, delayUntil, evaluate, leastDelay, paramsOf, phaseOf, windowIndex, windowStart, type Params } from "../src/shared/kinds/algebra.js";
import { calculateRateLimit, decideRateLimit } from "../src/shared/kinds/predict.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const TB = "token bucket" as const;

describe("phaseOf: a start's phase in [0, period)", () => {
  test.each([
    [0, 1000, 0],
    [250, 1000, 250],
    [1250, 1000, 250],
    [2000, 1000, 0],
    [-250, 1000, 750],
    [-1000, 1000, 0],
    [-2500, 1000, 500],
  ])("phaseOf(%d, %d) is %d (never the period itself, never -0)", (start, period, phase) => {
    expect(phaseOf(start, period)).toBe(phase);
  });
});

describe("windowIndex: the window containing t, even where float division lands one late", () => {
  // (t - phase) / period rounds up to 9 here, though phase + 9 * period is after t.
  const p = { phase: 3.33, period: 1000 / 3 };
  const t = 3003.3299999999995;
  test("t just before a boundary is in the window before it", () => {
    expect(windowIndex(t, p)).toBe(8);
    expect(windowStart(t, p)).toBeLessThanOrEqual(t);
    expect(p.phase + 9 * p.period).toBeGreaterThan(t);
  });
});

describe("refill: whole tokens stay whole through float rounding", () => {
  // 0.075 tokens stored as 0.07500000000000001 (25 tokens × ms over a period of 1000/3 ms): a ms
  // at 1 per period adds exactly 3 thousandths.
  test("0.075 and a ms's refill make exactly 0.078", () => {
    const p: Params = { kind: TB, rate: 1, period: 1000 / 3, capacity: 1e9, maxReserved: Infinity, phase: 0 };
    expect(evaluate({ value: 0.07500000000000001, ts: 0 }, p, 1).value).toBe(0.078);
  });
});

describe("leastDelay and delayUntil: the least whole wait, or an error naming what can't succeed", () => {
  test("a wait past 2^53 ms, where no whole number lies between two floats: found, not searched forever", () => {
    expect(leastDelay((t) => t >= 2 ** 53 + 2, 0, 2 ** 53)).toBe(2 ** 53 + 2);
  });

  test("a wait that never ends is an InvalidRateLimit error naming the count", () => {
    expect(() => leastDelay(() => false, 0, 1, 5)).toThrow(/count = 5: can never succeed: the wait would not fit in a number of ms/);
  });

  test("a count no full row holds is an error naming the tokens it needs and the capacity", () => {
    const p = paramsOf({ kind: TB, rate: 5, period: 1000 }, 0);
    expect(() => delayUntil(null, p, 0, 10)).toThrow(/count = 10: needs 10 tokens but the capacity is 5/);
  });

  test("with reserve, the tokens it needs are the count less what may be reserved", () => {
    const p = paramsOf({ kind: TB, rate: 5, period: 1000, maxReserved: 2 }, 0);
    expect(() => decideRow(null, p, 0, 10, true)).toThrow(/count = 10: needs 8 tokens but the capacity is 5/);
  });
});

describe("paramsOf: a config's params, with its defaults", () => {
  test("capacity defaults to the rate and maxReserved to unlimited", () => {
    expect(paramsOf({ kind: TB, rate: 10, period: 1000 }, 0)).toEqual({ kind: TB, rate: 10, period: 1000, capacity: 10, maxReserved: Infinity, phase: 0 });
    expect(paramsOf({ kind: TB, rate: 10, period: 1000, capacity: 4, maxReserved: 3 }, 0)).toEqual({
      kind: TB,
      rate: 10,
      period: 1000,
      capacity: 4,
      maxReserved: 3,
      phase: 0,
    });
  });
});

describe("the public conveniences: a window's phase and a peek", () => {
  test("a sliding window without start is aligned to 0, whatever the row's ts", () => {
    const sliding: RateLimitConfig = { kind: "sliding window", exact: false, rate: 10, period: 1000 };
    // 5 taken in [1000, 2000); at 2100 a tenth of the next window has passed: 10 - 5 × 0.9.
    expect(calculateRateLimit({ value: 5, ts: 1500, prev: 0 }, sliding, 2100)).toEqual({ value: 5.5, ts: 2100, prev: 5, retryAfter: undefined, windowStart: undefined });
  });

  test("a fixed window without start and without a row starts full, aligned to 0", () => {
    expect(calculateRateLimit(null, { kind: "fixed window", rate: 10, period: 1000 }, 2100)).toEqual({ value: 10, ts: 2000, retryAfter: undefined, windowStart: 2000 });
  });

  test("decideRateLimit's peek returns the row as of now, unchanged by the peek", () => {
    expect(decideRateLimit({ value: 3, ts: 0 }, { kind: TB, rate: 10, period: 1000 }, { now: 100, count: 0 })).toEqual({ ok: true, retryAfter: undefined, value: 4, ts: 100 });
  });
});
