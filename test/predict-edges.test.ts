// The public conveniences' edges (src/shared/kinds/predict.ts) at explicit instants: a take that leaves exactly nothing, a reservation's debt and when it is repaid, and decideRateLimit's last whole ms.
import { describe, expect, test } from "vitest";
import { calculateRateLimit, decideRateLimit } from "../src/shared/kinds/predict.js";

const MAX = Number.MAX_SAFE_INTEGER;

describe("calculateRateLimit: the value left and when it is whole again", () => {
  test("a take of exactly what is there leaves 0, with no wait", () => {
    expect(calculateRateLimit(null, { kind: "token bucket", rate: 3, period: 1000 }, 0, 3)).toEqual({
      value: 0,
      ts: 0,
      retryAfter: undefined,
      windowStart: undefined,
    });
  });

  test("with reserve, a count above the capacity goes into debt, repaid at the rate (the wait to the ms)", () => {
    // 2 owed at 3 per second: 666.67 ms, so 667.
    expect(calculateRateLimit(null, { kind: "token bucket", rate: 3, period: 1000 }, 0, 5, { reserve: true })).toEqual({
      value: -2,
      ts: 0,
      retryAfter: 667,
      windowStart: undefined,
    });
  });

  test("with reserve, a fixed window's debt is repaid at the next boundary", () => {
    // At 250 in the window from 0: 2 owed, the boundary at 1000 brings 3.
    expect(calculateRateLimit(null, { kind: "fixed window", rate: 3, period: 1000, start: 0 }, 250, 5, { reserve: true })).toEqual({
      value: -2,
      ts: 0,
      retryAfter: 750,
      windowStart: 0,
    });
  });

  test("without reserve, a count above the capacity can never succeed", () => {
    expect(() => calculateRateLimit(null, { kind: "token bucket", rate: 3, period: 1000 }, 0, 5)).toThrow(/count = 5: can never succeed/);
  });
});

describe("decideRateLimit: a wait is told up to Number.MAX_SAFE_INTEGER ms, as the server tells it", () => {
  const config = { kind: "token bucket" as const, rate: 1, period: 1000 };
  test("a refusal whose retry lands exactly on Number.MAX_SAFE_INTEGER", () => {
    const now = MAX - 1000;
    expect(decideRateLimit({ value: 0, ts: now }, config, { now })).toEqual({ ok: false, retryAfter: 1000, value: 0, ts: now });
  });
  test("one ms later, its retry would land past it: an InvalidRateLimit error naming the count", () => {
    const now = MAX - 999;
    expect(() => decideRateLimit({ value: 0, ts: now }, config, { now })).toThrow(
      /count = 1: can never succeed in time that can be told: at rate 1 per 1000 ms its wait \(1000 ms\) runs past Number.MAX_SAFE_INTEGER ms/,
    );
  });
});
