// limitAll's merging and combining, pure (src/shared/flow/limit-all.ts): requests naming one limit and key merge into one with their counts summed, each field carried only when given; the same key with another config or tier is bad input naming it; and the combined result's retryAfter is the latest of the refusals'.
import { describe, expect, test } from "vitest";
import { combineResults, mergeRequests } from "../src/shared/flow/limit-all.js";
import type { RateLimitConfig, RateLimitResult } from "../src/shared/shapes/validators.js";
import { errorData } from "./error-data.js";

const tb: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000 };
const fw: RateLimitConfig = { kind: "fixed window", rate: 10, period: 1000 };

describe("mergeRequests", () => {
  test("one limit and key named twice: one request, the counts summed (an absent count is 1), both pointing at it", () => {
    const { merged, of } = mergeRequests({
      requests: [
        { name: "a", key: "k", count: 2, config: tb },
        { name: "b", config: fw },
        { name: "a", key: "k", config: tb },
        { name: "a", key: "k", count: 3, config: { period: 1000, rate: 10, kind: "token bucket" } },
      ],
    });
    expect(merged).toStrictEqual([
      { name: "a", key: "k", count: 6, config: tb },
      { name: "b", count: 1, config: fw },
    ]);
    expect(of).toStrictEqual([0, 1, 0, 0]);
  });

  test("an absent count then a given one: 1 + 4", () => {
    expect(mergeRequests({ requests: [{ name: "a", config: tb }, { name: "a", count: 4, config: tb }] }).merged).toStrictEqual([{ name: "a", count: 5, config: tb }]);
  });

  test("the call's reserve, details and ip, and a request's tier, are carried when given", () => {
    const { merged } = mergeRequests({
      requests: [{ name: "a", key: "k", tier: "pro", config: tb }],
      reserve: false,
      details: true,
      ip: "203.0.113.7",
    });
    expect(merged).toStrictEqual([{ name: "a", key: "k", count: 1, tier: "pro", config: tb, reserve: false, details: true, ip: "203.0.113.7" }]);
  });

  test.each([
    // [why, second request, problem]
    ["another config", { name: "a", key: "k", config: { ...tb, rate: 11 } }, "names the same limit and key twice with different configs"],
    ["a config with one more field", { name: "a", key: "k", config: { ...tb, capacity: 10 } }, "names the same limit and key twice with different configs"],
    ["another tier", { name: "a", key: "k", tier: "pro", config: tb }, "names the same limit and key twice with different tiers"],
  ] as const)("the same limit and key with %s: bad input naming the request", (_why, second, problem) => {
    expect(errorData(() => mergeRequests({ requests: [{ name: "a", key: "k", config: tb }, second] }))).toStrictEqual({
      kind: "InvalidRateLimit",
      field: "requests",
      value: '"a"',
      message: `requests = "a": ${problem}`,
    });
  });

  test("a negative count is bad input even where the sum would be positive", () => {
    const data = errorData(() => mergeRequests({ requests: [{ name: "a", count: 3, config: tb }, { name: "a", count: -1, config: tb }] }));
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field: "count", value: "-1" });
  });
});

describe("combineResults", () => {
  const no = (retryAfter: number): RateLimitResult => ({ ok: false, retryAfter });
  test.each([
    // [why, results, of, combined]
    ["refused by two: the later retry, when both pass", [no(300), no(100), { ok: true }], [0, 1, 2], { ok: false, retryAfter: 300, results: [no(300), no(100), { ok: true }] }],
    ["all ok, none waiting: no retryAfter", [{ ok: true }, { ok: true }], [0, 1, 0], { ok: true, results: [{ ok: true }, { ok: true }, { ok: true }] }],
    [
      "all ok, two reserving: the later wait, when both are repaid",
      [{ ok: true, retryAfter: 20 }, { ok: true, retryAfter: 50 }],
      [1, 0],
      { ok: true, retryAfter: 50, results: [{ ok: true, retryAfter: 50 }, { ok: true, retryAfter: 20 }] },
    ],
  ] as [string, RateLimitResult[], number[], unknown][])("%s", (_why, results, of, combined) => {
    expect(combineResults(results, of).result).toStrictEqual(combined);
  });
});
