// The sliding window: its algebra as a table of explicit instants, the seam burst it refuses where
// a fixed window admits, exact retries, and the client through register() on convex-test.
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { calculateRateLimit, decideRateLimit, MINUTE, RateLimiter, SECOND, type RateLimitConfig } from "../src/client/index.js";
import { evaluate, paramsOf, type State } from "../src/shared/kinds/algebra.js";
import { splitTotal } from "../src/shared/core/split.js";
import { components, makeTest } from "./setup.js";

/** 10 per second, windows aligned to whole seconds. */
const SW: RateLimitConfig = { kind: "sliding window", exact: false, rate: 10, period: SECOND, start: 0 };
const FW: RateLimitConfig = { kind: "fixed window", rate: 10, period: SECOND, start: 0 };
const p = paramsOf(SW, 0);

describe("evaluate: the previous window slides out linearly, then the one just ended", () => {
  // [why, stored state, now, expected state]
  test.each<[string, State | null, number, State]>([
    ["a missing row is full, with nothing behind it", null, 500, { value: 10, ts: 500, prev: 0 }],
    ["within the window that took 10 at 900, nothing comes back", { value: 0, ts: 900, prev: 0 }, 999, { value: 0, ts: 999, prev: 0 }],
    ["at the boundary the 10 become the previous window, all still counted", { value: 0, ts: 900, prev: 0 }, 1000, { value: 0, ts: 1000, prev: 10 }],
    ["a tenth into the next window, a tenth of them has slid out", { value: 0, ts: 900, prev: 0 }, 1100, { value: 1, ts: 1100, prev: 10 }],
    ["half-way: half", { value: 0, ts: 900, prev: 0 }, 1500, { value: 5, ts: 1500, prev: 10 }],
    ["a whole window later the row is full again", { value: 0, ts: 900, prev: 0 }, 2000, { value: 10, ts: 2000, prev: 0 }],
    ["growth continues from a row written mid-window", { value: 0, ts: 1100, prev: 10 }, 1600, { value: 5, ts: 1600, prev: 10 }],
    // At 1100 one was taken, leaving 0 with 10 behind: at 2000 the 10 are gone and the one taken at
    // 1100 is the previous window's count, so 9 are there.
    ["a boundary turns what the ended window took into prev", { value: 0, ts: 1100, prev: 10 }, 2000, { value: 9, ts: 2000, prev: 1 }],
    ["two windows idle: full, nothing behind", { value: 0, ts: 1100, prev: 10 }, 3000, { value: 10, ts: 3000, prev: 0 }],
    // fast-check found it: snapping value × period to a whole number lost a denormal.
    ["with nothing behind it, the value stays exactly as it was", { value: 5e-324, ts: 0, prev: 0 }, 500, { value: 5e-324, ts: 500, prev: 0 }],
    ["a clock behind the row's ts gains and loses nothing", { value: 3, ts: 1500, prev: 10 }, 1200, { value: 3, ts: 1500, prev: 10 }],
    // A debt (carried in from another kind) is repaid at the rate, a window's worth per window.
    ["a debt owed at a boundary: the ended window took its whole rate, the rest stays owed", { value: -5, ts: 900, prev: 0 }, 1500, { value: 0, ts: 1500, prev: 10 }],
    ["a deeper debt, a window and a half later: 10 repaid per window", { value: -25, ts: 900, prev: 0 }, 2500, { value: -10, ts: 2500, prev: 10 }],
    ["repaid by 4000 with 5 to spare: the window that ended took 5, sliding back", { value: -25, ts: 900, prev: 0 }, 4500, { value: 7.5, ts: 4500, prev: 5 }],
    ["long idle: full", { value: -25, ts: 900, prev: 0 }, 5000, { value: 10, ts: 5000, prev: 0 }],
  ])("%s", (_why, state, now, expected) => {
    expect(evaluate(state, p, now)).toEqual(expected);
  });
});

describe("decisions", () => {
  test("the seam burst: a fixed window admits 10 more just after the boundary, the sliding window none", () => {
    for (const [config, admittedAfter] of [[FW, 10], [SW, 0]] as const) {
      let state: State | null = null;
      const take = (now: number) => {
        const d = decideRateLimit(state, config, { now });
        if (d.ok) state = d;
        return d;
      };
      for (let i = 0; i < 10; i++) expect(take(999).ok).toBe(true);
      let after = 0;
      for (let i = 0; i < 20; i++) if (take(1000).ok) after++;
      expect(after).toBe(admittedAfter);
    }
  });

  test("retryAfter is the least whole ms after which the request succeeds, and the retry succeeds", () => {
    let state: State | null = null;
    for (let i = 0; i < 10; i++) state = decideRateLimit(state, SW, { now: 900 });
    const refused = decideRateLimit(state, SW, { now: 900 });
    // One token back at 1100: 10 slid out at 10 per 1000 ms from 1000.
    expect(refused).toMatchObject({ ok: false, retryAfter: 200 });
    expect(decideRateLimit(state, SW, { now: 1099 }).ok).toBe(false);
    expect(decideRateLimit(state, SW, { now: 1100 }).ok).toBe(true);
    // A count of 3 waits for three tenths of the slide.
    expect(decideRateLimit(state, SW, { now: 900, count: 3 })).toMatchObject({ ok: false, retryAfter: 400 });
  });

  test("fractional counts add up: 30 of 0.1 on a rate of 3, at one instant", () => {
    const config: RateLimitConfig = { kind: "sliding window", exact: false, rate: 3, period: MINUTE };
    let state: State | null = null;
    for (let i = 0; i < 30; i++) {
      const d = decideRateLimit(state, config, { now: 0, count: 0.1 });
      expect(d.ok, `take ${i + 1}`).toBe(true);
      state = d;
    }
    expect(decideRateLimit(state, config, { now: 0, count: 0.1 }).ok).toBe(false);
  });

  test("calculateRateLimit carries prev, so its answer can be fed back", () => {
    const first = calculateRateLimit(null, SW, 999, 10);
    expect(first).toEqual({ value: 0, ts: 999, prev: 0, retryAfter: undefined, windowStart: undefined });
    const later = calculateRateLimit(first, SW, 1250, 1);
    expect(later).toMatchObject({ value: 1.5, ts: 1250, prev: 10, retryAfter: undefined });
    expect(calculateRateLimit(later, SW, 1250, 2)).toMatchObject({ value: -0.5, retryAfter: 50 });
  });
});

describe("the component through the client, register()ed on convex-test", () => {
  const T0 = Date.UTC(2025, 5, 1, 9, 30, 0, 0); // a whole minute: windows start on it
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(T0);
  });
  afterEach(() => vi.useRealTimers());

  const rateLimiter = new RateLimiter(components.rateLimiter, {
    perMinute: { kind: "sliding window", exact: false, rate: 6, period: MINUTE, start: 0 },
    sharded: { kind: "sliding window", exact: false, rate: 10, period: MINUTE, shards: 3, start: 0 },
  });

  test("limit, check, getValue and reset, with exact retries across the seam", async () => {
    const t = makeTest();
    const limit = () => t.run((ctx) => rateLimiter.limit(ctx, "perMinute", { key: "u" }));
    const check = () => t.run((ctx) => rateLimiter.check(ctx, "perMinute", { key: "u" }));
    vi.setSystemTime(T0 + 50 * SECOND);
    for (let i = 0; i < 6; i++) expect((await limit()).ok).toBe(true);
    // Just after the boundary all 6 are still in the last minute: one comes back 10 s in.
    vi.setSystemTime(T0 + MINUTE);
    const refused = await check();
    expect(refused).toEqual({ ok: false, retryAfter: 10 * SECOND });
    vi.advanceTimersByTime(10 * SECOND - 1);
    expect((await limit()).ok).toBe(false);
    vi.advanceTimersByTime(1);
    expect((await limit()).ok).toBe(true);
    const value = await t.run((ctx) => rateLimiter.getValue(ctx, "perMinute", { key: "u" }));
    expect(value).toMatchObject({ value: 0, prev: 6, config: { kind: "sliding window", exact: false, rate: 6 } });
    // The hook's arithmetic on getValue's answer says when the next one comes back: 10 s later.
    const predicted = calculateRateLimit(value, value.config, Date.now(), 1);
    expect(predicted.retryAfter).toBe(10 * SECOND);
    await t.run((ctx) => rateLimiter.reset(ctx, "perMinute", { key: "u" }));
    for (let i = 0; i < 6; i++) expect((await limit()).ok).toBe(true);
    expect((await limit()).ok).toBe(false);
  });

  test("sharded: the shards' rates add up to the limit, and a burst takes exactly the rate", async () => {
    const t = makeTest();
    expect([0, 1, 2].map((i) => splitTotal(10, 3, i)).reduce((a, b) => a + b)).toBe(10);
    let admitted = 0;
    for (let i = 0; i < 40; i++) if ((await t.run((ctx) => rateLimiter.limit(ctx, "sharded"))).ok) admitted++;
    // Two reads per request can miss tokens on a third shard; every admission is within the rate.
    expect(admitted).toBeLessThanOrEqual(10);
    expect(admitted).toBeGreaterThanOrEqual(7);
    const total = await t.run((ctx) => rateLimiter.getValue(ctx, "sharded", { details: true, sampleShards: 3 }));
    expect(total.total).toEqual({ value: 10 - admitted, capacity: 10, exact: true });
  });
});
