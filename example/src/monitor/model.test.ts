// The Monitor's chart model: the exact corners of the token curve (bucket lines, window steps,
// drops at requests), path drawing and axis ticks, checked on explicit instants.
import { describe, expect, it } from "vitest";
import type { RateLimitConfig } from "convex-rate-limiter";
import { curve, pathOf, pointAt, refillTime, ticks, valueAt, type Segment } from "./model.js";

/** 5 tokens per 10 s: 0.5 a second. */
const bucket: RateLimitConfig = { kind: "token bucket", rate: 5, period: 10_000 };
const window: RateLimitConfig = { kind: "fixed window", rate: 2, period: 1000, capacity: 4 };

describe("curve", () => {
  it("is flat at capacity with no requests", () => {
    expect(curve(bucket, [], 0, 5000)).toEqual([
      { t: 0, v: 5 },
      { t: 5000, v: 5 },
    ]);
  });

  it("drops at a request and rises in a straight line to capacity, with a corner where it is full", () => {
    const segments: Segment[] = [{ from: 1000, state: { value: 1, ts: 1000 } }];
    expect(curve(bucket, segments, 0, 12_000)).toEqual([
      { t: 0, v: 5 },
      { t: 1000, v: 5 }, // just before the request
      { t: 1000, v: 1 }, // the drop
      { t: 9000, v: 5 }, // 4 tokens at 0.5/s: full 8 s later
      { t: 12_000, v: 5 },
    ]);
  });

  it("starts after the drop when asked to (the projection from now)", () => {
    const segments: Segment[] = [{ from: 1000, state: { value: 1, ts: 1000 } }];
    expect(curve(bucket, segments, 1000, 3000, false)).toEqual([
      { t: 1000, v: 1 },
      { t: 3000, v: 2 },
    ]);
  });

  it("steps at each window boundary until full", () => {
    const segments: Segment[] = [{ from: 200, state: { value: 0, ts: 0 } }];
    expect(curve(window, segments, 200, 3500)).toEqual([
      { t: 200, v: 4 }, // full before the request at the start
      { t: 200, v: 0 },
      { t: 1000, v: 2 },
      { t: 2000, v: 4 }, // full: no more corners
      { t: 3500, v: 4 },
    ]);
  });

  it("is empty for a reversed range", () => {
    expect(curve(bucket, [], 10, 0)).toEqual([]);
  });
});

describe("valueAt", () => {
  it("counts a request made at exactly t", () => {
    const segments: Segment[] = [{ from: 1000, state: { value: 1, ts: 1000 } }];
    expect(valueAt(bucket, segments, 999)).toBe(5);
    expect(valueAt(bucket, segments, 1000)).toBe(1);
    expect(valueAt(bucket, segments, 3000)).toBe(2);
  });
});

describe("pathOf", () => {
  const scale = { x: (t: number) => t / 100, y: (v: number) => 100 - v * 10 };
  const points = [
    { t: 0, v: 5 },
    { t: 1000, v: 1 },
  ];
  it.each([
    [false, "M0 50L10 90"], // a bucket: straight lines
    [true, "M0 50H10V90"], // a window: hold, then jump
  ])("step=%s draws %s", (step, d) => {
    expect(pathOf(points, scale, step)).toBe(d);
  });
});

describe("ticks", () => {
  it.each([
    [0, 10, 5, [0, 2, 4, 6, 8, 10]], // steps of 2
    [-4.5, 5, 5, [-4, -2, 0, 2, 4]], // crosses zero, which is 0 and not -0
    [0, 1, 4, [0, 0.25, 0.5, 0.75, 1].filter((v) => v % 0.5 === 0)], // 0.25 is not nice: 0.5
    [3, 3, 4, [3]], // an empty range has one tick
  ])("ticks(%s, %s, %s)", (lo, hi, about, expected) => {
    const out = ticks(lo, hi, about);
    expect(out).toEqual(expected);
    expect(out.some((v) => Object.is(v, -0))).toBe(false);
  });
});

describe("pointAt", () => {
  const points = [
    { t: 0, v: 5 },
    { t: 1000, v: 5 },
    { t: 1000, v: 1 }, // a drop
    { t: 3000, v: 2 },
  ];
  it.each([
    [-5, false, 5], // before the first point: the first value
    [500, false, 5],
    [1000, false, 1], // after the drop at exactly t
    [2000, false, 1.5], // linear between points
    [2000, true, 1], // held, for steps
    [9000, false, 2], // after the last: the last
  ])("at %d (step %s) reads %d", (t, step, v) => {
    expect(pointAt(points, t, step)).toBe(v);
  });
  it("is undefined without points", () => {
    expect(pointAt([], 0, false)).toBeUndefined();
  });
});

describe("refillTime", () => {
  it("is the exact wait until full, and 0 when full", () => {
    const segments: Segment[] = [{ from: 1000, state: { value: 1, ts: 1000 } }];
    expect(refillTime(bucket, segments, 1000)).toBe(8000);
    expect(refillTime(bucket, segments, 9000)).toBe(0);
  });
});
