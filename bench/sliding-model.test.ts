// The sliding-window accuracy model of `npm run bench -- --only sliding` (bench/sliding-model.ts), on hand-made requests with explicit instants and on seeded traces: the worst-window checkers, the exact sliding log, the score against it, the rounding wrapper, and the bounds the library's sliding window keeps on the bench's shapes.
import { describe, expect, test } from "vitest";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { maxInWindow, type Taken } from "../tools/bounds.js";
import { seededRandom } from "../tools/random.js";
import { MAX_LOG_BYTES, MAX_LOG_ENTRIES } from "../src/shared/kinds/window-log.js";
import {
  adversarial,
  boundedLogDecider,
  bursty,
  exactLog,
  maxInAligned,
  maxTakenInWindow,
  rowDecider,
  score,
  seamBursts,
  steady,
  weightedDecider,
  type Decider,
} from "./sliding-model.js";

const at = (...times: number[]): Taken[] => times.map((t) => ({ at: t, count: 1 }));
const run = (decide: Decider, requests: readonly Taken[]) => requests.map((r) => decide(r.at, r.count));

describe("maxTakenInWindow", () => {
  test("weighs by count, over every window [t, t + width), not only aligned ones", () => {
    const events = [
      { at: 0, count: 2 },
      { at: 500, count: 3 },
      { at: 999, count: 1 },
      { at: 1000, count: 4 }, // 0 is out of [1, 1001): 3 + 1 + 4 = 8 beats [0, 1000)'s 6
      { at: 1500, count: 1 }, // 500 is out: 1 + 4 + 1 = 6
    ];
    expect(maxTakenInWindow(events, 1000)).toBe(8);
    expect(maxTakenInWindow(events, 1)).toBe(4); // one instant at a time
    expect(maxTakenInWindow([], 1000)).toBe(0);
  });

  test("with unit counts it agrees with maxInWindow", () => {
    const times = steady(0, 100, 1000, 20, 1.5, seededRandom(7)).map((e) => e.at);
    expect(maxTakenInWindow(at(...times), 1000)).toBe(maxInWindow(times, 1000));
  });
});

test("maxInAligned counts each window [start + k × period, start + (k + 1) × period) apart", () => {
  const events = at(5, 104, 105, 106, 204); // windows from 5: [5, 105) has 2, [105, 205) has 3
  expect(maxInAligned(events, 100, 5)).toBe(3);
  expect(maxInAligned(events, 100, 0)).toBe(3); // [100, 200) has 104, 105, 106
  expect(maxInAligned([], 100, 0)).toBe(0);
});

describe("exactLog", () => {
  test("admits rate tokens in any (t − width, t], and again as each leaves", () => {
    const decide = exactLog(2, 1000);
    expect(run(decide, at(0, 10, 20, 999, 1000, 1009, 1010))).toEqual([
      true, // 0: empty
      true, // 10: 1 in the window
      false, // 20: 2 in (−980, 20]
      false, // 999: still 2
      true, // 1000: 0 has left (1000 − 1000 is not in (0, 1000])
      false, // 1009: 10 and 1000
      true, // 1010: 10 has left
    ]);
  });

  test("weighs by count: a request too big for what is left is refused, a smaller one admitted", () => {
    const decide = exactLog(5, 100);
    expect([decide(0, 3), decide(1, 3), decide(2, 2), decide(100, 3)]).toEqual([true, false, true, true]);
  });
});

describe("score", () => {
  const rate = 10;
  const width = 1000;
  const requests = bursty(0, rate, width, 50, seededRandom(3));

  test("the exact log is never wrong, never over rate in a window, and admits as many as it says", () => {
    const s = score(requests, exactLog(rate, width), rate, width);
    expect(s).toMatchObject({ requests: requests.length, wronglyAdmitted: 0, wronglyRefused: 0 });
    expect(s.worst).toBe(rate);
    expect(s.taken).toHaveLength(s.admitted);
    expect(maxTakenInWindow(s.taken, width)).toBe(s.worst);
  });

  test("admitting everything: each admission that brings the window above rate is wrong", () => {
    // 12 at one instant then 3 a window later: the 11th and 12th are over; the later ones are alone.
    const s = score(at(...Array.from({ length: 12 }, () => 0), 1000, 1000, 1000), () => true, rate, width);
    expect(s).toMatchObject({ admitted: 15, wronglyAdmitted: 2, wronglyRefused: 0, worst: 12 });
  });

  test("refusing everything: each request that would have fitted is wrongly refused", () => {
    const s = score(at(0, 1, 2), () => false, 2, width);
    expect(s).toMatchObject({ admitted: 0, wronglyAdmitted: 0, wronglyRefused: 3, worst: 0 });
  });
});

describe("weightedDecider", () => {
  const config = { kind: "sliding window", exact: false, rate: 10, period: 1000, start: 0 } satisfies RateLimitConfig;

  test("the previous window's weighted count, rounded each way, at explicit instants", () => {
    // 10 taken in the last ms of window 0, so window 1 starts with P = 10, weighted 10 × (1 − f).
    const burst = at(...Array.from({ length: 10 }, () => 999));
    const cases = [
      // At 1050, P × (1 − f) = 9.5: exact leaves 0.5 < 1 and refuses; only rounding down admits.
      { label: "exact", weigh: (w: number) => w, at1050: false },
      { label: "rounded up", weigh: (w: number) => Math.ceil(w), at1050: false },
      { label: "to nearest", weigh: (w: number) => Math.round(w), at1050: false },
      { label: "rounded down", weigh: (w: number) => Math.floor(w), at1050: true },
    ];
    for (const c of cases) {
      const decide = weightedDecider(config, c.weigh);
      expect(run(decide, burst).every(Boolean), c.label).toBe(true);
      expect(decide(1050, 1), c.label).toBe(c.at1050);
    }
    // At 1100 the weight is exactly 9, so every rounding leaves one token.
    const exact = weightedDecider(config, (w) => w);
    run(exact, burst);
    expect([exact(1100, 1), exact(1100, 1)]).toEqual([true, false]);
  });

  test("unrounded or rounded up, it decides exactly as the library does (whole counts)", () => {
    const random = seededRandom(11);
    const shapes = [
      steady(0, 10, 1000, 100, 2, random),
      bursty(0, 10, 1000, 100, random),
      adversarial(0, 10, 1000, 5, 3),
    ];
    for (const requests of shapes) {
      const library = run(rowDecider(config), requests);
      expect(run(weightedDecider(config, (w) => w), requests)).toEqual(library);
      expect(run(weightedDecider(config, Math.ceil), requests)).toEqual(library);
    }
  });

  test("counting the previous window in full never admits more than rate in any window", () => {
    const requests = adversarial(0, 10, 1000, 5, 3);
    expect(score(requests, weightedDecider(config, (_, prev) => prev), 10, 1000).worst).toBe(10);
  });
});

describe("the library's exact sliding window against the reference log", () => {
  test("unsharded, it decides every request as the exact log does, on every shape (with the row's log fed back)", () => {
    const config = { kind: "sliding window", rate: 10, period: 1000 } satisfies RateLimitConfig;
    const random = seededRandom(5);
    const shapes = [
      steady(0, 10, 1000, 100, 0.8, random),
      steady(0, 10, 1000, 100, 2, random),
      bursty(0, 10, 1000, 100, random),
      seamBursts(0, 10, 1000, 10, 3, 0.5, random),
      adversarial(0, 10, 1000, 5, 3),
    ];
    for (const requests of shapes) {
      expect(run(rowDecider(config), requests)).toEqual(run(exactLog(10, 1000), requests));
    }
  });
});

describe("boundedLogDecider: the frontier's decision (section 6e)", () => {
  const random = seededRandom(9);
  const shapes = [
    steady(0, 100, 1000, 20, 2, random),
    bursty(0, 100, 1000, 20, random),
    seamBursts(0, 100, 1000, 5, 3, 0.5, random),
    adversarial(0, 100, 1000, 3, 3),
  ];

  test("with the library's bounds it decides as the library does, past 32 takes a window too", () => {
    const config = { kind: "sliding window", rate: 100, period: 1000 } satisfies RateLimitConfig;
    for (const requests of shapes) {
      expect(run(boundedLogDecider(100, 1000, MAX_LOG_ENTRIES, MAX_LOG_BYTES, []), requests)).toEqual(run(rowDecider(config), requests));
    }
  });

  test("unbounded it is the reference log; bounded tighter it admits fewer, never over the rate", () => {
    for (const requests of shapes) {
      const reference = score(requests, exactLog(100, 1000), 100, 1000);
      expect(run(boundedLogDecider(100, 1000, Infinity, Infinity, []), requests)).toEqual(run(exactLog(100, 1000), requests));
      const tight = score(requests, boundedLogDecider(100, 1000, 4, Infinity, []), 100, 1000);
      expect(tight.wronglyAdmitted).toBe(0);
      expect(tight.worst).toBeLessThanOrEqual(100);
      expect(tight.admitted).toBeLessThanOrEqual(reference.admitted);
    }
  });
});

describe("the library's sliding window on the bench's shapes", () => {
  const rate = 20;
  const period = 1000;
  const config = { kind: "sliding window", exact: false, rate, period, start: 0 } satisfies RateLimitConfig;
  const random = seededRandom(5);
  const shapes = {
    steady: steady(0, rate, period, 100, 2, random),
    bursty: bursty(0, rate, period, 100, random),
    seam: seamBursts(0, rate, period, 10, 3, 0.5, random),
    adversarial: adversarial(0, rate, period, 10, 3),
  };

  test.each(Object.entries(shapes))("%s: under 2N in any window of the period, at most N in an aligned one", (_, requests) => {
    const s = score(requests, rowDecider(config), rate, period);
    expect(s.worst).toBeLessThan(2 * rate);
    expect(maxInAligned(s.taken, period, 0)).toBeLessThanOrEqual(rate);
  });

  test("the adversarial shape reaches the bound: 2N − 1 in one window", () => {
    expect(score(shapes.adversarial, rowDecider(config), rate, period).worst).toBe(2 * rate - 1);
  });

  test("the seam trace puts 2N on each side of every third boundary", () => {
    const bursts = seamBursts(0, rate, period, 2, 3, 0, random); // no background
    const near = (seam: number) => bursts.filter((e) => Math.abs(e.at - seam) <= period / 100);
    expect(bursts).toHaveLength(8 * rate);
    for (const seam of [2 * period, 5 * period]) {
      expect(near(seam).filter((e) => e.at < seam)).toHaveLength(2 * rate);
      expect(near(seam).filter((e) => e.at >= seam)).toHaveLength(2 * rate);
    }
  });
});
