// The Monitor's chart model: the exact corners of the token curve (bucket lines, window steps,
// sliding-window slopes, drops at requests), path drawing and axis ticks, checked on explicit
// instants, and, for sliding windows, against calculateRateLimit at every instant of random runs.
import { fc, test as fcTest } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { calculateRateLimit, decideRateLimit, type RateLimitConfig } from "convex-rate-limiter";
import { curve, isStepped, nextBoundary, pathOf, pointAt, refillTime, ticks, valueAt, type RowState, type Segment } from "./model.js";

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

  describe("a sliding window (5 per 10 s)", () => {
    const sliding: RateLimitConfig = { kind: "sliding window", exact: false, rate: 5, period: 10_000, start: 0 };

    it("rises at what the window before took, changes slope at the boundary, and is full at the next", () => {
      // At 12 s: 0 left; the window [0, 10 s) took 5, sliding out at 0.5 a second until 20 s (4
      // back); then the window [10 s, 20 s) took 1 (5 - 4), sliding out until full at 30 s.
      const segments: Segment[] = [{ from: 12_000, state: { value: 0, ts: 12_000, prev: 5 } }];
      expect(curve(sliding, segments, 12_000, 35_000, false)).toEqual([
        { t: 12_000, v: 0 },
        { t: 20_000, v: 4 },
        { t: 30_000, v: 5 },
        { t: 35_000, v: 5 },
      ]);
    });

    it("is level until the boundary when the window before took nothing", () => {
      const segments: Segment[] = [{ from: 2000, state: { value: 0, ts: 2000, prev: 0 } }];
      expect(curve(sliding, segments, 0, 25_000)).toEqual([
        { t: 0, v: 5 },
        { t: 2000, v: 5 }, // just before the burst
        { t: 2000, v: 0 },
        { t: 10_000, v: 0 },
        { t: 20_000, v: 5 },
        { t: 25_000, v: 5 },
      ]);
    });

    it("puts the boundaries at the phase start gives (the one getValue reports)", () => {
      const phased: RateLimitConfig = { ...sliding, start: Date.UTC(2025, 0, 1) + 3000 }; // phase 3 s
      const segments: Segment[] = [{ from: 4000, state: { value: 0, ts: 4000, prev: 0 } }];
      expect(curve(phased, segments, 4000, 30_000, false)).toEqual([
        { t: 4000, v: 0 },
        { t: 13_000, v: 0 },
        { t: 23_000, v: 5 },
        { t: 30_000, v: 5 },
      ]);
    });

    it("has a corner where a rise meets capacity before the boundary", () => {
      // 3 left and 5 sliding out (an estimate, as a sharded live chart makes): full at 16 s.
      const segments: Segment[] = [{ from: 12_000, state: { value: 3, ts: 12_000, prev: 5 } }];
      expect(curve(sliding, segments, 12_000, 25_000, false)).toEqual([
        { t: 12_000, v: 3 },
        { t: 16_000, v: 5 },
        { t: 20_000, v: 5 },
        { t: 25_000, v: 5 },
      ]);
    });

    it("is level until the row's own ts when the clock is behind the server's", () => {
      const segments: Segment[] = [{ from: 11_000, state: { value: 0, ts: 12_000, prev: 5 } }];
      expect(curve(sliding, segments, 11_000, 21_000, false)).toEqual([
        { t: 11_000, v: 0 },
        { t: 12_000, v: 0 },
        { t: 20_000, v: 4 },
        { t: 21_000, v: 4.1 },
      ]);
    });

    it("refills exactly when the algebra says it is full", () => {
      const segments: Segment[] = [{ from: 12_000, state: { value: 0, ts: 12_000, prev: 5 } }];
      expect(refillTime(sliding, segments, 12_000)).toBe(18_000);
    });
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

describe("nextBoundary", () => {
  it.each([
    [0, 0, 1000, 1000], // a boundary belongs to the window it opens: the next is a period on
    [999, 0, 1000, 1000],
    [1000, 250, 1000, 1250],
    [-1, 0, 1000, 0], // before 0
    [5, -750, 1000, 250], // a negative start is a phase in [0, period)
  ])("after %d, windows of %d + k x %d: %d", (t, start, period, expected) => {
    expect(nextBoundary(t, start, period)).toBe(expected);
  });
});

describe("a sliding window's curve against calculateRateLimit", () => {
  /** Linear between the curve's points, after any drop at exactly `t`. */
  const read = (points: readonly { t: number; v: number }[], t: number) => pointAt(points, t, false);

  fcTest.prop({
    rate: fc.integer({ min: 1, max: 12 }),
    period: fc.integer({ min: 100, max: 5000 }),
    start: fc.integer({ min: -10_000, max: 10_000 }),
    // Requests: a gap (ms) before each, and its count.
    requests: fc.array(fc.record({ gap: fc.integer({ min: 0, max: 4000 }), count: fc.integer({ min: 1, max: 4 }) }), {
      minLength: 1,
      maxLength: 12,
    }),
    probes: fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 30 }),
  })("the straight lines between corners give the algebra's value at every instant", ({ rate, period, start, requests, probes }) => {
    const config: RateLimitConfig = { kind: "sliding window", exact: false, rate, period, start };
    // The states the server stores after each admitted request, as the live chart receives them.
    const segments: Segment[] = [];
    let state: RowState | null = null;
    let t = 0;
    for (const { gap, count } of requests) {
      t += gap;
      if (count > rate) continue;
      const d = decideRateLimit(state, config, { now: t, count });
      if (!d.ok) continue;
      state = { value: d.value, ts: d.ts, ...(d.prev === undefined ? {} : { prev: d.prev }) };
      segments.push({ from: t, state });
    }
    const end = t + 3 * period;
    const points = curve(config, segments, 0, end);
    for (const probe of probes) {
      const at = Math.min(end, probe);
      const expected = valueAt(config, segments, at);
      expect(read(points, at)).toBeCloseTo(expected, 9);
      // valueAt is the algebra itself, on the state in force
      const last = segments.filter((s) => s.from <= at).at(-1)?.state ?? null;
      expect(expected).toBe(calculateRateLimit(last, config, at, 0).value);
    }
  });

  fcTest.prop({
    rate: fc.integer({ min: 1, max: 12 }),
    period: fc.integer({ min: 100, max: 5000 }),
    requests: fc.array(fc.record({ gap: fc.integer({ min: 0, max: 4000 }), count: fc.integer({ min: 1, max: 4 }) }), {
      minLength: 1,
      maxLength: 12,
    }),
    probes: fc.array(fc.integer({ min: 0, max: 20_000 }), { minLength: 1, maxLength: 30 }),
  })("an exact window's steps give the algebra's value at every instant", ({ rate, period, requests, probes }) => {
    const config: RateLimitConfig = { kind: "sliding window", rate, period };
    expect(isStepped(config)).toBe(true);
    const segments: Segment[] = [];
    let state: RowState | null = null;
    let t = 0;
    for (const { gap, count } of requests) {
      t += gap;
      if (count > rate) continue;
      const d = decideRateLimit(state, config, { now: t, count });
      if (!d.ok) continue;
      state = { value: d.value, ts: d.ts, ...(d.log === undefined ? {} : { log: d.log }) };
      segments.push({ from: t, state });
    }
    const end = t + 2 * period;
    const points = curve(config, segments, 0, end);
    for (const probe of probes) {
      const at = Math.min(end, probe);
      expect(pointAt(points, at, true)).toBe(valueAt(config, segments, at));
    }
  });
});
