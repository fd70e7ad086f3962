// The shared bound checks (tools/bounds.ts): worstExcess and maxInWindow against naive all-pairs models, in table rows and fast-check properties; owing, the config-change rule for a row that owes, at explicit instants.
import { fc, test as prop } from "@fast-check/vitest";
import { describe, expect, test } from "vitest";
import { limitOf, maxInWindow, owing, windowIndex, worstExcess, type Limit, type Taken } from "../../tools/bounds.js";

const MINUTE = 60_000;
const SECOND = 1_000;
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

/** The naive model: the instants in [t, t + width) counted from each instant t. */
function naiveMaxInWindow(times: readonly number[], width: number): number {
  return Math.max(0, ...times.map((t) => times.filter((u) => u >= t && u < t + width).length));
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
    ["order doesn't matter: the 6 s refill still counts", ones(6000, 0, 0, 0), bucket, 0, 0],
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

describe("limitOf", () => {
  test.each([
    ["capacity defaults to rate", limitOf({ kind: "token bucket", rate: 10, period: MINUTE }), 10],
    ["an explicit capacity is kept, even 0", limitOf({ kind: "token bucket", rate: 10, period: MINUTE, capacity: 0 }), 0],
  ] as const)("%s", (_what, limit, capacity) => {
    expect(limit.capacity).toBe(capacity);
  });

  test("the phase is kept for fixed windows", () => {
    expect(limitOf({ kind: "fixed window", rate: 1, period: MINUTE }, 15_000)).toEqual({
      kind: "fixed window",
      rate: 1,
      period: MINUTE,
      capacity: 1,
      phase: 15_000,
    });
  });
});

describe("maxInWindow", () => {
  test.each([
    // [what, sorted times, width, expected]
    ["no instants", [], 1000, 0],
    ["one instant", [5], 1000, 1],
    ["the window is half-open: t + width is outside it", [0, 1000], 1000, 1],
    ["one ms less and both are inside", [0, 999], 1000, 2],
    ["instants at the same ms all count", [7, 7, 7], 1, 3],
    ["the busiest window wins, wherever it is", [0, 2000, 2100, 2200, 5000], 1000, 3],
  ] as const)("%s", (_what, times, width, expected) => {
    expect(maxInWindow(times, width)).toBe(expected);
  });

  prop.prop([fc.array(fc.integer({ min: 0, max: 10_000 }), { maxLength: 60 }), fc.integer({ min: 1, max: 3000 })], {
    numRuns: 200,
  })("agrees with counting from each instant", (times, width) => {
    const sorted = [...times].sort((a, b) => a - b);
    expect(maxInWindow(sorted, width)).toBe(naiveMaxInWindow(sorted, width));
  });
});

describe("owing", () => {
  const fw = { kind: "fixed window" as const, rate: 10, period: SECOND, capacity: 10 };
  test("a token bucket's debt is held in the new rate's tokens from its own ts: repaid when its own terms repay it", () => {
    // 5 owed at 1 a second is repaid at 5 s; at 2 a ms, the same instant is 10,000 new tokens away.
    const row = { kind: "token bucket", value: -5, ts: 0, rate: 1, period: SECOND };
    expect(owing(row, { kind: "token bucket", rate: 2, period: 1 }, 0, 2, 2)).toEqual({ value: -10_000, ends: 0 });
  });

  test("a fixed window's debt repaid at a window start of the same period: that window holds what is left, at most the new rate", () => {
    // 5 owed at 10 a window is repaid at 1 s with 5 left; a new rate of 2 holds at most 2 there.
    const row = { ...fw, value: -5, ts: 0 };
    expect(owing(row, { ...fw, rate: 2 }, 0, 2, 10)).toEqual({ value: 0, ends: SECOND });
    expect(owing(row, fw, 0, 10, 10)).toEqual({ value: -5, ends: SECOND });
    // Another phase: nothing held until the end of the window that repays it.
    expect(owing(row, fw, 500, 10, 10)).toEqual({ value: 0, ends: 2 * SECOND });
  });

  test("a debt ages deep is counted in one step, not one window at a time", () => {
    const row = { ...fw, rate: 1, value: -1e15, ts: 0 };
    expect(owing(row, fw, 0, 10, 10)).toEqual({ value: Math.min(0, 10, 10, 10) - 10, ends: 1e18 });
  });

  test("into the other kind: nothing held until its own terms repay it (a fixed window's: the end of the window that does)", () => {
    expect(owing({ ...fw, value: -1, ts: 0 }, { ...fw, kind: "token bucket" }, 0, 10, 10)).toEqual({ value: 0, ends: 2 * SECOND });
    expect(owing({ kind: "token bucket", value: -5, ts: 0, rate: 1, period: SECOND }, fw, 0, 10, 10)).toEqual({ value: 0, ends: 5 * SECOND });
  });

  test("undefined for a row that doesn't owe, a sliding window, or a rate of 0", () => {
    expect(owing({ ...fw, value: 1, ts: 0 }, fw, 0, 10, 10)).toBeUndefined();
    expect(owing({ ...fw, value: -1, ts: 0 }, { ...fw, kind: "sliding window" }, 0, 10, 10)).toBeUndefined();
    expect(owing({ ...fw, value: -1, ts: 0 }, fw, 0, 0, 10)).toBeUndefined();
  });
});
