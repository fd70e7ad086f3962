// The demo's pure checks (bounds.ts): the worst-interval excess against a naive all-pairs model (table rows and fast-check properties), the calculateRateLimit replay, disagreements, job timing and the ceiling.
import { fc, test as prop } from "@fast-check/vitest";
import { describe, expect, test } from "vitest";
import { MINUTE, SECOND, type RateLimitConfig } from "convex-rate-limiter";
import { ceiling, disagreements, limitOf, replay, timing, windowIndex, worstExcess, type Limit, type Taken } from "./bounds.js";

const bucket: Limit = { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3, phase: 0 };
const window: Limit = { kind: "fixed window", rate: 100, period: MINUTE, capacity: 100, phase: 15 * SECOND };

/** The naive model: every interval between two events, summed directly. */
function naiveExcess(events: readonly Taken[], limit: Limit, slackMs = 0): number {
  const sorted = [...events].sort((a, b) => a.at - b.at);
  let worst = -Infinity;
  for (let i = 0; i < sorted.length; i++) {
    let sum = 0;
    for (let j = i; j < sorted.length; j++) {
      sum += sorted[j]!.count;
      const a = sorted[i]!.at;
      const b = sorted[j]!.at;
      const refills =
        limit.kind === "token bucket" ? (b - a + slackMs) / limit.period : windowIndex(b, limit) - windowIndex(a, limit);
      worst = Math.max(worst, sum - limit.capacity - limit.rate * refills);
    }
  }
  return worst;
}

const ones = (...ats: number[]): Taken[] => ats.map((at) => ({ at, count: 1 }));

describe("worstExcess", () => {
  test.each([
    // [what, events, limit, slack, expected]
    ["no events: nothing to exceed", [], bucket, 0, -Infinity],
    ["one event uses 1 of capacity 3", ones(0), bucket, 0, -2],
    ["a burst of exactly the capacity reaches the bound", ones(0, 0, 0), bucket, 0, 0],
    ["a fourth at the same instant is one over", ones(0, 0, 0, 0), bucket, 0, 1],
    ["the fourth 6 s later: one token refilled, at the bound", ones(0, 0, 0, 6000), bucket, 0, 0],
    ["the fourth 3 s later: half a token over", ones(0, 0, 0, 3000), bucket, 0, 0.5],
    ["slack of 3 s covers that half token", ones(0, 0, 0, 3000), bucket, 3000, 0],
    ["weighted: 2 + 2 at once is one over capacity 3", [{ at: 0, count: 2 }, { at: 0, count: 2 }], bucket, 0, 1],
    // Window boundaries at :15 of each minute; 100 before and 100 after one boundary is allowed.
    ["100 on each side of a boundary", [...ones(...Array(100).fill(14_000)), ...ones(...Array(100).fill(16_000))], window, 0, 0],
    ["101 inside one window is one over", ones(...Array(101).fill(20_000)), window, 0, 1],
    ["slack is ignored by fixed windows", ones(...Array(101).fill(20_000)), window, 60_000, 1],
  ] as const)("%s", (_what, events, limit, slack, expected) => {
    expect(worstExcess(events, limit, slack)).toBeCloseTo(expected, 9);
  });

  prop.prop(
    [
      fc.array(fc.record({ at: fc.integer({ min: 0, max: 5 * MINUTE }), count: fc.integer({ min: 1, max: 5 }) }), { maxLength: 40 }),
      fc.constantFrom<Limit>(bucket, window, { ...window, phase: 0 }),
      fc.integer({ min: 0, max: 5000 }),
    ],
    { numRuns: 200 },
  )("agrees with the all-pairs model", (events, limit, slack) => {
    const fast = worstExcess(events, limit, slack);
    const naive = naiveExcess(events, limit, slack);
    if (events.length === 0) expect(fast).toBe(-Infinity);
    else expect(fast).toBeCloseTo(naive, 6);
  });
});

describe("replay", () => {
  const config: RateLimitConfig = { kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 };

  test("a burst of four: three ok, the fourth refused until a token is back", () => {
    expect(replay(ones(0, 0, 0, 0), config)).toEqual([
      { at: 0, count: 1, ok: true },
      { at: 0, count: 1, ok: true },
      { at: 0, count: 1, ok: true },
      { at: 0, count: 1, ok: false, retryAfter: 6000 }, // one token every 6 s
    ]);
  });

  test("a refusal leaves the row as it was, so a retry at retryAfter succeeds", () => {
    const [, , , refused, retry] = replay(ones(0, 0, 0, 1000, 6000), config);
    expect(refused).toMatchObject({ ok: false, retryAfter: 5000 });
    expect(retry).toMatchObject({ ok: true });
  });

  test("reserve: ok while the debt stays within maxReserved, with the wait until it's repaid", () => {
    const budget: RateLimitConfig = { kind: "token bucket", rate: 60, period: MINUTE, maxReserved: 30 };
    const out = replay(
      [
        { at: 0, count: 60 }, // the whole capacity: runs now
        { at: 0, count: 30 }, // 30 of debt: repaid in 30 s
        { at: 0, count: 1 }, // would leave 31 of debt: refused
      ],
      budget,
      { reserve: true },
    );
    expect(out).toEqual([
      { at: 0, count: 60, ok: true },
      { at: 0, count: 30, ok: true, retryAfter: 30_000 },
      { at: 0, count: 1, ok: false },
    ]);
  });

  test("a fixed window takes its phase from start: refusals wait for the next boundary", () => {
    const fixed: RateLimitConfig = { kind: "fixed window", rate: 2, period: MINUTE, start: 15 * SECOND };
    const out = replay(ones(20_000, 20_000, 30_000), fixed);
    expect(out[2]).toEqual({ at: 30_000, count: 1, ok: false, retryAfter: 45_000 }); // next window at 1m15s
  });
});

describe("disagreements", () => {
  const a = { at: 0, count: 1 };
  test.each([
    ["identical decisions", [{ ...a, ok: true }], [{ ...a, ok: true }], 0],
    ["ok differs", [{ ...a, ok: true }], [{ ...a, ok: false, retryAfter: 5 }], 1],
    ["retryAfter differs", [{ ...a, ok: false, retryAfter: 4 }], [{ ...a, ok: false, retryAfter: 5 }], 1],
    ["a retryAfter on one side only is not compared", [{ ...a, ok: false, retryAfter: 4 }], [{ ...a, ok: false }], 0],
    ["different lengths are reported", [{ ...a, ok: true }], [], 1],
  ] as const)("%s", (_what, actual, expected, n) => {
    expect(disagreements(actual, expected)).toHaveLength(n);
  });

  test("lists at most `limit` differences", () => {
    const actual = Array.from({ length: 10 }, () => ({ at: 0, count: 1, ok: true }));
    const expected = actual.map((d) => ({ ...d, ok: false }));
    expect(disagreements(actual, expected, 3)).toHaveLength(3);
  });
});

describe("timing", () => {
  test("sorts jobs into on time, early, late and missing", () => {
    const jobs = [
      { tokens: 1, requestedAt: 0, notBefore: 100, ranAt: 100 }, // on time, exactly
      { tokens: 1, requestedAt: 0, notBefore: 100, ranAt: 1100 }, // at the edge of the jitter
      { tokens: 1, requestedAt: 0, notBefore: 100, ranAt: 99 }, // 1 ms early
      { tokens: 1, requestedAt: 0, notBefore: 100, ranAt: 1101 }, // 1 ms beyond the jitter
      { tokens: 1, requestedAt: 0, notBefore: 100 }, // never ran
    ];
    expect(timing(jobs, 1000)).toEqual({ jobs: 5, missing: 1, early: 1, late: 1, worstDelay: 1001 });
  });
});

describe("ceiling and limitOf", () => {
  test.each([
    ["a bucket for one period: capacity + rate", limitOf({ kind: "token bucket", rate: 10, period: MINUTE, capacity: 3 }), 0, MINUTE, 13],
    ["capacity defaults to rate", limitOf({ kind: "token bucket", rate: 10, period: MINUTE }), 0, 0, 10],
    // Windows open at :15; from :20 to 2:20 two boundaries are crossed (1:15, 2:15).
    ["a window counts boundaries crossed", limitOf({ kind: "fixed window", rate: 100, period: MINUTE }, 15_000), 20_000, 140_000, 300],
    ["no boundary inside one window", limitOf({ kind: "fixed window", rate: 100, period: MINUTE }, 15_000), 20_000, 70_000, 100],
  ] as const)("%s", (_what, limit, start, end, expected) => {
    expect(ceiling(limit, start, end)).toBe(expected);
  });
});
