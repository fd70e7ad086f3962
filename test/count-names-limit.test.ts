// A request's count that is no number of tokens (negative, NaN, infinite) names the limit in its
// error, as the constructor's config errors do, through the client as an app calls it: limit,
// check and limitAll on convex-test, and the InvalidRateLimit data keeps its shape.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { MINUTE, RateLimiter } from "../src/client/index.js";
import { components, convexErrorData, makeTest } from "./setup.js";

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(Date.UTC(2025, 0, 1));
});
afterEach(() => {
  vi.useRealTimers();
});

const limiter = new RateLimiter(components.rateLimiter, {
  sendMessage: { kind: "token bucket", rate: 10, period: MINUTE },
  llmTokens: { kind: "token bucket", rate: 40_000, period: MINUTE },
});

describe("a count that is no number of tokens names the limit", () => {
  test.each([
    [-1, "-1"],
    [NaN, "NaN"],
    [Infinity, "Infinity"],
  ])("limit and check, count %s", async (count, shown) => {
    const t = makeTest();
    const expected = {
      kind: "InvalidRateLimit",
      field: "count",
      value: shown,
      message: `count = ${shown}: must be a finite number ≥ 0 (limit "sendMessage")`,
    };
    expect(await convexErrorData(t.run((ctx) => limiter.limit(ctx, "sendMessage", { count })))).toEqual(expected);
    expect(await convexErrorData(t.run((ctx) => limiter.check(ctx, "sendMessage", { count })))).toEqual(expected);
  });

  test("limitAll names the request's own limit", async () => {
    const t = makeTest();
    const data = await convexErrorData(
      t.run((ctx) => limiter.limitAll(ctx, [{ name: "sendMessage" }, { name: "llmTokens", count: -5 }])),
    );
    expect(data).toEqual({
      kind: "InvalidRateLimit",
      field: "count",
      value: "-5",
      message: `count = -5: must be a finite number ≥ 0 (limit "llmTokens")`,
    });
  });
});
