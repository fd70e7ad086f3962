// The independent check of the contention model (bench/contention/check.ts) on short seeded runs: it replays, transactional mode never admits beyond the bound, a spent limit's refusals never fail (they write nothing), and a contended unsharded row fails requests.
import { describe, expect, test } from "vitest";
import { limitOf, worstExcess } from "../../tools/bounds.js";
import type { RateLimitConfig } from "../../src/shared/shapes/validators.js";
import { checkCell, type CheckParams } from "./check.js";

const params: CheckParams = { qps: 200, seconds: 2, serviceMs: 25, maxRetries: 4, backoffMs: 10, stalenessMs: 100, applyEveryMs: 50, seed: 1 };

describe("checkCell", () => {
  test("the same seed replays the same run", () => {
    const config: RateLimitConfig = { kind: "token bucket", rate: 100, period: 1000, shards: 10 };
    expect(checkCell(config, params)).toEqual(checkCell(config, params));
  });

  test.each([
    ["unsharded", { kind: "token bucket", rate: 100, period: 1000 }],
    ["over 10 shards", { kind: "token bucket", rate: 100, period: 1000, shards: 10 }],
  ] as [string, RateLimitConfig][])("transactional, %s, at twice the rate: never over the bound", (_why, config) => {
    const s = checkCell(config, params);
    expect(s.admitted).toBeGreaterThan(0);
    expect(worstExcess(s.admissions.map((at) => ({ at, count: 1 })), limitOf(config))).toBeLessThanOrEqual(1e-9);
    expect(s.admitted + s.refused + s.failed).toBe(s.requests);
  });

  test("a spent limit: every request is refused, none fails (a refusal writes nothing)", () => {
    // One token a day, taken by the first request: the rest read a row nobody writes again.
    const s = checkCell({ kind: "token bucket", rate: 1, period: 86_400_000 }, params);
    expect(s).toMatchObject({ admitted: 1, failed: 0, refused: s.requests - 1 });
  });

  test("one unsharded row at 200 QPS under its rate: admissions race for it and some fail", () => {
    const s = checkCell({ kind: "token bucket", rate: 1000, period: 1000 }, params);
    expect(s.failed).toBeGreaterThan(0);
    expect(s.attempts).toBeGreaterThan(s.requests);
  });

  test("asynchronous, unsharded, at 1.5 × the rate: nothing fails, and the excess is refused", () => {
    const config: RateLimitConfig = { kind: "token bucket", rate: 200 / 1.5, period: 1000, applyUpdates: "asynchronously" };
    const s = checkCell(config, params);
    expect(s.failed).toBe(0);
    expect(s.refused).toBeGreaterThan(0);
  });
});
