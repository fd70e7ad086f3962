// The demo's pure checks (bounds.ts), table-driven: the calculateRateLimit replay, disagreements, job timing, the ceiling, and a concurrency limit's leases held at once and lease-model decisions. (worstExcess is tested in test/tools/bounds.test.ts.)
import { describe, expect, test } from "vitest";
import { MINUTE, SECOND, type RateLimitConfig } from "convex-rate-limiter";
import { limitOf, type Taken } from "../../tools/bounds.js";
import { ceiling, disagreements, heldAtOnce, leaseDisagreements, replay, timing } from "./bounds.js";

const ones = (...ats: number[]): Taken[] => ats.map((at) => ({ at, count: 1 }));

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

  test("a sliding window carries the window before from request to request", () => {
    // 2 per second, windows at whole seconds. Both taken at 0; at 1.5 s half the first second
    // has slid out: 1 is back and taken; the next is back when the rest has, at 2 s (without the
    // window before carried, the row would wait for 2 s to start sliding out, until 2.5 s).
    const sliding: RateLimitConfig = { kind: "sliding window", exact: false, rate: 2, period: SECOND, start: 0 };
    expect(replay(ones(0, 0, 1500, 1500), sliding)).toEqual([
      { at: 0, count: 1, ok: true },
      { at: 0, count: 1, ok: true },
      { at: 1500, count: 1, ok: true },
      { at: 1500, count: 1, ok: false, retryAfter: 500 },
    ]);
  });

  test("a fixed window takes its phase from start: refusals wait for the next boundary", () => {
    const fixed: RateLimitConfig = { kind: "fixed window", rate: 2, period: MINUTE, start: 15 * SECOND };
    const out = replay(ones(20_000, 20_000, 30_000), fixed);
    expect(out[2]).toEqual({ at: 30_000, count: 1, ok: false, retryAfter: 45_000 }); // next window at 1m15s
  });

  test("a config that changes during the run: the row is carried over from its last update, not refilled to the new capacity", () => {
    // From 10 s, ten times the rate and the capacity (an override set then).
    const raised: RateLimitConfig = { kind: "token bucket", rate: 100, period: MINUTE, capacity: 30 };
    const out = replay(ones(0, 0, 0, 0, ...Array<number>(17).fill(10 * SECOND)), (t) => (t < 10 * SECOND ? config : raised));
    // Before: three of four, the fourth waiting for the old rate's token (6 s).
    expect(out.slice(0, 4)).toEqual([...ones(0, 0, 0).map((d) => ({ ...d, ok: true })), { at: 0, count: 1, ok: false, retryAfter: 6000 }]);
    // After: the empty row refilled from its last update (0 s) at the new rate, 10 s x 100 a
    // minute = 16.7 tokens, not the new capacity of 30; the 17th waits for the rest of a token.
    expect(out.slice(4).filter((d) => d.ok)).toHaveLength(16);
    expect(out.at(-1)).toEqual({ at: 10 * SECOND, count: 1, ok: false, retryAfter: 200 });
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

describe("heldAtOnce", () => {
  test.each([
    ["none", [], 0],
    ["apart", [{ from: 0, to: 10 }, { from: 10, to: 20 }], 1], // an end frees its slot before a start at the same instant
    ["overlapping", [{ from: 0, to: 10 }, { from: 5, to: 20 }, { from: 9, to: 12 }], 3],
    ["a lease released at once holds nothing", [{ from: 5, to: 5 }, { from: 0, to: 10 }], 1],
  ])("%s", (_why, leases, most) => {
    expect(heldAtOnce(leases)).toBe(most);
  });
});

describe("leaseDisagreements", () => {
  test.each([
    ["a free slot, admitted", { at: 0, held: 1, earliest: 50, ok: true }, []],
    ["full, refused until the earliest expiry", { at: 10, held: 2, earliest: 50, ok: false, retryAfter: 40 }, []],
    ["full but admitted", { at: 10, held: 2, earliest: 50, ok: true }, ["at 10 with 2 held: admitted, expected refused for 40 ms"]],
    ["a free slot refused", { at: 0, held: 0, ok: false, retryAfter: 5 }, ["at 0 with 0 held: refused for 5 ms, expected admitted"]],
    ["the wrong wait", { at: 10, held: 2, earliest: 50, ok: false, retryAfter: 41 }, ["at 10 with 2 held: refused for 41 ms, expected refused for 40 ms"]],
  ])("%s", (_why, decision, expected) => {
    expect(leaseDisagreements([decision], 2)).toEqual(expected);
  });
});
