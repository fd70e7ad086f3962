// rateLimitHeaders and tooManyRequests as pure functions: tables of results with explicit numbers
// (remaining tokens, ms to reset, retryAfter) and the header values and 429 response they give.
import { describe, expect, test } from "vitest";
import {
  HOUR,
  MINUTE,
  QUOTA_EXCEEDED_PROBLEM_TYPE,
  RateLimiter,
  rateLimitHeaders,
  SECOND,
  tooManyRequests,
  type RateLimitConfig,
  type RateLimitReturnsWithDetails,
  type RefusedWithDetails,
} from "../src/client/index.js";
import { components, convexErrorData } from "./setup.js";

/** 100 a minute: q=100, w=60. */
const perMinute: RateLimitConfig = { kind: "token bucket", rate: 100, period: MINUTE };

/** A result with details; `remaining` tokens and `resetAfter` ms, as the component returns them. */
function allowed(remaining: number, resetAfter: number): RateLimitReturnsWithDetails {
  return { ok: true, details: { shards: [0], remaining, capacity: 100, resetAfter, exact: true } };
}

/** A refused result with details. */
function refused(retryAfter: number, remaining = 0, resetAfter = MINUTE): RefusedWithDetails {
  return { ok: false, retryAfter, details: { shards: [0], remaining, capacity: 100, resetAfter, exact: true } };
}

describe("rateLimitHeaders", () => {
  test("an allowed request: policy and current limit, no Retry-After", () => {
    expect(rateLimitHeaders("api", allowed(50, 30_000), perMinute)).toEqual({
      "RateLimit-Policy": '"api";q=100;w=60',
      RateLimit: '"api";r=50;t=30',
    });
  });

  test("a refused request adds Retry-After", () => {
    expect(rateLimitHeaders("api", refused(1_500, 0, 60_000), perMinute)).toEqual({
      "RateLimit-Policy": '"api";q=100;w=60',
      RateLimit: '"api";r=0;t=60',
      "Retry-After": "2",
    });
  });

  test.each([
    [1, "1"], // any wait at all is at least a second: never tell a client to come back early
    [999, "1"],
    [1_000, "1"], // exactly a second stays a second
    [1_001, "2"], // a millisecond over rounds up
    [59_999, "60"],
    [60_000, "60"],
  ])("retryAfter %i ms gives Retry-After %s", (retryAfter, header) => {
    expect(rateLimitHeaders("api", refused(retryAfter), perMinute)["Retry-After"]).toBe(header);
  });

  test.each([
    [50, "r=50"],
    [2.7, "r=2"], // floored: never promise a token that isn't whole
    [0.999, "r=0"],
    [0, "r=0"],
    [-3.5, "r=0"], // a reservation debt shows as none left, never negative
    [-200_000, "r=0"],
  ])("remaining %d tokens gives %s", (remaining, field) => {
    expect(rateLimitHeaders("api", allowed(remaining, 0), perMinute).RateLimit).toBe(`"api";${field};t=0`);
  });

  test.each([
    [0, "t=0"], // full now
    [1, "t=1"], // rounded up: the limit isn't full before t
    [1_000, "t=1"],
    [1_001, "t=2"],
    [59_400, "t=60"],
    [-5, "t=0"], // never negative
  ])("resetAfter %i ms gives %s", (resetAfter, field) => {
    expect(rateLimitHeaders("api", allowed(0, resetAfter), perMinute).RateLimit).toBe(`"api";r=0;${field}`);
  });

  test.each<[string, RateLimitConfig, string]>([
    ["capacity = rate: the period", perMinute, "q=100;w=60"],
    // 10 a minute in bursts of 3: 3 tokens refill in 18 s, so 3 per 18 s is both burst and rate.
    ["a token bucket's smaller burst", { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 }, "q=3;w=18"],
    ["a token bucket's larger burst", { kind: "token bucket", rate: 10, period: MINUTE, capacity: 25 }, "q=25;w=150"],
    ["a fixed window: the window", { kind: "fixed window", rate: 100, period: HOUR }, "q=100;w=3600"],
    // 250 tokens come 100 a window: refilled after 3 whole windows.
    ["a fixed window that accumulates", { kind: "fixed window", rate: 100, period: HOUR, capacity: 250 }, "q=250;w=10800"],
    // 10 tokens at 100 a second refill in 0.1 s: the draft has no sub-second windows.
    ["a sub-second refill rounds up to 1 s", { kind: "token bucket", rate: 100, period: SECOND, capacity: 10 }, "q=10;w=1"],
    ["a 1.5 s period rounds up", { kind: "token bucket", rate: 3, period: 1_500 }, "q=3;w=2"],
    ["a fractional capacity floors", { kind: "token bucket", rate: 2.5, period: MINUTE }, "q=2;w=60"],
    // Reserve-only: nothing accumulates, and w must be > 0, so it is left out.
    ["capacity 0 has no window", { kind: "token bucket", rate: 10, period: MINUTE, capacity: 0 }, "q=0"],
    ["shards don't change the policy", { ...perMinute, shards: 10 }, "q=100;w=60"],
  ])("policy, %s", (_, config, params) => {
    expect(rateLimitHeaders("api", allowed(0, 0), config)["RateLimit-Policy"]).toBe(`"api";${params}`);
  });

  test("the name is a quoted string, with quotes and backslashes escaped", () => {
    const headers = rateLimitHeaders('say "hi" \\o/', allowed(1, 0), perMinute);
    expect(headers.RateLimit).toBe('"say \\"hi\\" \\\\o/";r=1;t=0');
  });

  test("a name that isn't printable ASCII is an error naming it", async () => {
    expect(await convexErrorData(() => rateLimitHeaders("café", allowed(1, 0), perMinute))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "name",
      value: '"café"',
    });
  });

  test("reads the config from the RateLimiter that names the limit", () => {
    const rateLimiter = new RateLimiter(components.rateLimiter, {
      sendMessage: { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 },
    });
    expect(rateLimitHeaders("sendMessage", allowed(2, 6_000), rateLimiter)).toEqual({
      "RateLimit-Policy": '"sendMessage";q=3;w=18',
      RateLimit: '"sendMessage";r=2;t=6',
    });
  });

  test("a RateLimiter without the limit is an error (reachable only around the types)", async () => {
    const rateLimiter = new RateLimiter(components.rateLimiter, { api: perMinute });
    const untyped = rateLimitHeaders as (name: string, result: unknown, config: unknown) => unknown;
    expect(await convexErrorData(() => untyped("other", allowed(1, 0), rateLimiter))).toMatchObject({
      kind: "InvalidRateLimit",
      field: "name",
    });
  });
});

describe("tooManyRequests", () => {
  test("a 429 with the headers and a problem-details body", async () => {
    const response = tooManyRequests("api", refused(1_500, 0.4, 59_600), perMinute);
    expect(response.status).toBe(429);
    expect(response.statusText).toBe("Too Many Requests");
    expect(Object.fromEntries(response.headers)).toEqual({
      "content-type": "application/problem+json",
      "ratelimit-policy": '"api";q=100;w=60',
      ratelimit: '"api";r=0;t=60',
      "retry-after": "2",
    });
    expect(await response.json()).toEqual({
      type: QUOTA_EXCEEDED_PROBLEM_TYPE,
      title: "Request cannot be satisfied as assigned quota has been exceeded",
      status: 429,
      detail: 'Rate limit "api" exceeded: retry after 2 s.',
      retryAfter: 1_500, // ms, unrounded: the header's seconds are rounded up
      "violated-policies": ["api"],
    });
  });

  test("more headers are added, and replace ours when named alike; the detail can be replaced", async () => {
    const response = tooManyRequests("api", refused(1), perMinute, {
      headers: { "Access-Control-Allow-Origin": "*", "Content-Type": "application/json" },
      detail: "Slow down.",
    });
    expect(response.headers.get("access-control-allow-origin")).toBe("*");
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(response.headers.get("retry-after")).toBe("1");
    expect(await response.json()).toMatchObject({ detail: "Slow down.", retryAfter: 1 });
  });
});
