// The sharded planner (pickTwo, isComfortable, planOne, planTwo, shardParams/shardConfig, resolvePhase): tables with explicit rows and instants, and seeded simulations through the model store of test/model.ts.
import { describe, expect, test } from "vitest";
import { HOUR, MINUTE, SECOND, delayUntil, evaluate, type State } from "../src/shared/kinds/algebra.js";
import { calculateRateLimit } from "../src/shared/kinds/predict.js";
import { resolvePhase, shardConfig, shardParams } from "../src/shared/shards/layout.js";
import { COMFORT_FRACTION, isComfortable, pickTwo, planOne, planPeek, planRequest, planTwo, type Plan, type ShardRead } from "../src/shared/shards/plan.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import { minus } from "../src/shared/core/split.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";
import { seededRandom } from "../tools/random.js";
import { applyModel, decideModel, type Store } from "./model.js";

const TB = "token bucket" as const;
const FW = "fixed window" as const;

/** A read of shard `shard` of `config` (phase 0) holding `state`. */
function read(config: RateLimitConfig, shard: number, state: State | null): ShardRead {
  return { shard, state, p: shardParams(config, 0, shard) };
}

/** The value a plan wrote for `shard`, or undefined. */
function written(plan: Plan, shard: number): number | undefined {
  return plan.writes.find((w) => w.shard === shard)?.state.value;
}

describe("pickTwo", () => {
  test.each([2, 3, 5, 10, 16])("over %i shards: always distinct, every ordered pair equally often", (n) => {
    // Draws on a grid fine enough that each first pick gets `m` values and each offset `m`.
    const m = 3;
    const counts = new Map<string, number>();
    for (let i = 0; i < n * m; i++) {
      for (let j = 0; j < (n - 1) * m; j++) {
        const [a, b] = pickTwo(n, (i + 0.5) / (n * m), (j + 0.5) / ((n - 1) * m));
        expect(a).not.toBe(b);
        expect(a >= 0 && a < n && b >= 0 && b < n).toBe(true);
        counts.set(`${a},${b}`, (counts.get(`${a},${b}`) ?? 0) + 1);
      }
    }
    expect(counts.size).toBe(n * (n - 1)); // every ordered pair occurs
    expect(new Set(counts.values())).toEqual(new Set([m * m])); // and equally often
  });

  test.each([
    // [why, n, r1, r2, expected]
    ["one shard: both picks are shard 0", 1, 0.7, 0.2, [0, 0]],
    ["draws of 0 pick the first shard and its neighbour", 4, 0, 0, [0, 1]],
    ["draws just below 1 stay in range and distinct", 4, 1 - 2 ** -53, 1 - 2 ** -53, [3, 2]],
    ["the second pick wraps around", 4, 0.9, 0.1, [3, 0]],
  ] as [string, number, number, number, [number, number]][])("%s", (_why, n, r1, r2, expected) => {
    expect(pickTwo(n, r1, r2)).toEqual(expected);
  });

  test("seeded draws cover every shard of 10 about evenly", () => {
    const random = seededRandom(42);
    const seen = Array<number>(10).fill(0);
    for (let i = 0; i < 10_000; i++) {
      const [a, b] = pickTwo(10, random(), random());
      seen[a]! += 1;
      seen[b]! += 1;
    }
    // 2000 expected per shard; a binomial sd is ~40, so ±10% is > 4 sd.
    for (const s of seen) expect(Math.abs(s - 2000)).toBeLessThan(200);
  });
});

describe("shard params and configs", () => {
  const configs: [string, RateLimitConfig][] = [
    ["token bucket 10/min over 3", { kind: TB, rate: 10, period: MINUTE, shards: 3 }],
    ["fixed window 10/h over 8, capacity 15, maxReserved 9", { kind: FW, rate: 10, period: HOUR, capacity: 15, maxReserved: 9, shards: 8, start: 5 }],
    ["token bucket 1000/min over 64, fractional capacity", { kind: TB, rate: 1000, period: MINUTE, capacity: 1000.5, shards: 64 }],
  ];

  test.each(configs)("%s: the shards' rate, capacity and maxReserved add up to the whole", (_why, config) => {
    const n = config.shards ?? 1;
    const ps = Array.from({ length: n }, (_, i) => shardParams(config, 0, i));
    expect(ps.reduce((s, p) => s + p.rate, 0)).toBe(config.rate);
    expect(ps.reduce((s, p) => s + p.capacity, 0)).toBe(config.capacity ?? config.rate);
    expect(ps.reduce((s, p) => s + p.maxReserved, 0)).toBe(config.maxReserved ?? Infinity);
    for (const p of ps) expect(p.period).toBe(config.period);
  });

  test.each(configs)("%s: calculateRateLimit with a shard's config answers what that shard's params do", (_why, config) => {
    const n = config.shards ?? 1;
    const phase = resolvePhase(config, "name", "key");
    for (let i = 0; i < n; i++) {
      const p = shardParams(config, phase, i);
      const state = { value: p.capacity / 2, ts: phase + 1_000 };
      const c = shardConfig(config, phase, i);
      expect(c.shards).toBe(1); // it describes one row
      for (const now of [phase + 1_000, phase + 17_777, phase + 3 * HOUR]) {
        const got = calculateRateLimit(state, c, now, 1);
        const cur = evaluate(state, p, now);
        expect(got.value).toBe(minus(cur.value, 1)); // the algebra's decimal-exact subtraction
        expect(got.ts).toBe(cur.ts);
      }
    }
  });

  test.each([
    // [why, config, name, key, expected phase or null (hash: only range and stability asserted)]
    ["token buckets have phase 0", { kind: TB, rate: 1, period: HOUR }, "n", "k", 0],
    ["start sets the phase", { kind: FW, rate: 1, period: HOUR, start: 2 * HOUR + 5 }, "n", "k", 5],
    ["a negative start too", { kind: FW, rate: 1, period: HOUR, start: -5 }, "n", "k", HOUR - 5],
    ["without start: a hash of name and key", { kind: FW, rate: 1, period: HOUR }, "n", "k", null],
    ["without start or key", { kind: FW, rate: 1, period: HOUR }, "n", undefined, null],
  ] as [string, RateLimitConfig, string, string | undefined, number | null][])("resolvePhase: %s", (_why, config, name, key, expected) => {
    const phase = resolvePhase(config, name, key);
    expect(resolvePhase(config, name, key)).toBe(phase); // stable across calls
    if (expected !== null) expect(phase).toBe(expected);
    expect(Number.isInteger(phase) && phase >= 0 && phase < config.period).toBe(true);
  });

  test("resolvePhase spreads keys over the period (no thundering herd at one instant)", () => {
    const config: RateLimitConfig = { kind: FW, rate: 1, period: HOUR };
    const phases = new Set(Array.from({ length: 200 }, (_, i) => resolvePhase(config, "login", `user${i}`)));
    expect(phases.size).toBeGreaterThan(190);
    expect(resolvePhase(config, "login", undefined)).not.toBe(resolvePhase(config, "login", ""));
  });
});

describe("isComfortable", () => {
  const config: RateLimitConfig = { kind: TB, rate: 100, period: MINUTE, shards: 10 }; // 10 per shard
  test.each([
    // [why, state, count, comfortable]
    ["a fresh shard serving 1", null, 1, true],
    ["left with exactly the threshold", { value: 1 + 10 * COMFORT_FRACTION[TB], ts: 0 }, 1, true],
    ["left just under the threshold", { value: 0.99 + 10 * COMFORT_FRACTION[TB], ts: 0 }, 1, false],
    ["enough for the count but not comfortable", { value: 3, ts: 0 }, 3, false],
    ["a fresh shard can't serve 15 alone", null, 15, false],
    ["a peek on a full shard", null, 0, true],
  ] as [string, State | null, number, boolean][])("%s", (_why, state, count, expected) => {
    expect(isComfortable(read(config, 0, state), 0, count)).toBe(expected);
  });
});

describe("planOne", () => {
  const config: RateLimitConfig = { kind: TB, rate: 10, period: MINUTE };
  test.each([
    // [why, state, count, reserve, expected plan]
    ["takes from the row", { value: 5, ts: 0 }, 2, false, { ok: true, writes: [{ shard: 0, state: { value: 3, ts: 0 } }], shards: [0] }],
    ["a peek writes nothing", { value: 5, ts: 0 }, 0, false, { ok: true, writes: [], shards: [0] }],
    ["refused: retryAfter and no writes", { value: 0, ts: 0 }, 1, false, { ok: false, retryAfter: 6_000, writes: [], shards: [0] }],
    ["reserved: the write and when to run", { value: 0, ts: 0 }, 1, true, { ok: true, retryAfter: 6_000, writes: [{ shard: 0, state: { value: -1, ts: 0 } }], shards: [0] }],
  ] as [string, State, number, boolean, Plan][])("%s", (_why, state, count, reserve, expected) => {
    expect(planOne(read(config, 0, state), 0, count, reserve)).toStrictEqual(expected);
  });
});

describe("planTwo", () => {
  const tb100: RateLimitConfig = { kind: TB, rate: 100, period: MINUTE, shards: 10 }; // 10 per shard
  const tb10x8: RateLimitConfig = { kind: TB, rate: 10, period: MINUTE, shards: 8 }; // 2,2,1,1,1,1,1,1
  const fw10x8: RateLimitConfig = { kind: FW, rate: 10, period: MINUTE, shards: 8, start: 0 };

  test("takes from the fuller shard when it can serve alone", () => {
    const plan = planTwo(read(tb100, 3, { value: 2, ts: 0 }), read(tb100, 5, { value: 8, ts: 0 }), 0, 3, false);
    expect(plan).toStrictEqual({ ok: true, writes: [{ shard: 5, state: { value: 5, ts: 0 } }], shards: [5] });
  });

  test.each([
    // [why, a value, b value, count, expected a, expected b]
    ["whole total 4: 2 and 2", 6, 7, 9, 2, 2],
    ["whole total 3: whole tokens, one apart", 6, 6, 9, 2, 1],
    ["whole total 0: both drained", 4, 5, 9, 0, 0],
    ["fractional total 3.5: split evenly", 6.5, 6, 9, 1.75, 1.75],
  ])("combines both when neither alone can serve, leaving them balanced: %s", (_why, va, vb, count, ea, eb) => {
    const plan = planTwo(read(tb100, 0, { value: va, ts: 0 }), read(tb100, 1, { value: vb, ts: 0 }), 0, count, false);
    expect(plan.ok).toBe(true);
    expect(plan.retryAfter).toBeUndefined();
    expect(plan.shards).toEqual([0, 1]);
    expect([written(plan, 0), written(plan, 1)]).toEqual([ea, eb]);
  });

  test("with unequal shares, combining splits in proportion to the rates", () => {
    // Shard 0 of 10 over 8 has rate 2, shard 7 rate 1.
    const plan = planTwo(read(tb10x8, 0, { value: 1.5, ts: 0 }), read(tb10x8, 7, { value: 0.9, ts: 0 }), 0, 2, false);
    expect(written(plan, 0)).toBeCloseTo((0.4 * 2) / 3, 12);
    expect(written(plan, 7)).toBeCloseTo((0.4 * 1) / 3, 12);
  });

  test("a fresh sharded limit (100/min over 10) admits a count of 15 from two fresh shards", () => {
    const plan = planTwo(read(tb100, 2, null), read(tb100, 9, null), 1_000, 15, false);
    expect(plan.ok).toBe(true);
    expect(plan.shards).toEqual([2, 9]);
    const a = written(plan, 2) ?? NaN;
    const b = written(plan, 9) ?? NaN;
    expect(a + b).toBe(5);
    expect(Number.isInteger(a) && Number.isInteger(b) && Math.abs(a - b) <= 1).toBe(true);
  });

  test("a debt one shard can't carry goes to the other, within its maxReserved", () => {
    // Shard 0: rate 2, capacity 2, maxReserved 1; shard 1: rate 1, capacity 1, maxReserved 0. Split
    // by rate, 0.75 owed would be 0.5 and 0.25, but shard 1 may owe nothing: shard 0 owes it all,
    // repaid at 2 per minute in 22,500 ms.
    const config: RateLimitConfig = { kind: TB, rate: 3, period: MINUTE, maxReserved: 1, shards: 2 };
    const plan = planTwo(read(config, 0, { value: 0.5, ts: 0 }), read(config, 1, { value: 0.75, ts: 0 }), 0, 2, true);
    expect(plan).toStrictEqual({
      ok: true,
      retryAfter: 22_500,
      writes: [
        { shard: 0, state: { value: -0.75, ts: 0 } },
        { shard: 1, state: { value: 0, ts: 0 } },
      ],
      shards: [0, 1],
    });
  });

  test("a peek over every shard waits for the last debt: the latest repayment, listing the shards in debt", () => {
    const config: RateLimitConfig = { kind: TB, rate: 100, period: MINUTE, maxReserved: 20, shards: 10 };
    // 10 per minute per shard: 1 owed is repaid in 6,000 ms, 0.5 in 3,000.
    const plan = planPeek([read(config, 0, { value: -1, ts: 0 }), read(config, 1, { value: 4, ts: 0 }), read(config, 2, { value: -0.5, ts: 0 })], 0);
    expect(plan).toStrictEqual({ ok: false, retryAfter: 6_000, writes: [], shards: [0, 2] });
  });

  test("a peek with reserve on a pair in debt is refused until the debt is repaid: it takes nothing to owe", () => {
    const config: RateLimitConfig = { kind: TB, rate: 100, period: MINUTE, maxReserved: 20, shards: 10 };
    const plan = planTwo(read(config, 0, { value: -1, ts: 0 }), read(config, 1, { value: -0.5, ts: 0 }), 0, 0, true);
    expect(plan.ok).toBe(false);
  });

  test("reservations across a pair: debt shared by rate, repaid together, within maxReserved", () => {
    const config: RateLimitConfig = { kind: TB, rate: 10, period: MINUTE, maxReserved: 8, shards: 8 };
    // Shard 0: rate 2, capacity 2, maxReserved 1. Shard 7: rate 1, capacity 1, maxReserved 1.
    const a = read(config, 0, { value: 1, ts: 0 });
    const b = read(config, 7, { value: 0, ts: 0 });
    const plan = planTwo(a, b, 0, 2.5, true);
    expect(plan.ok).toBe(true);
    const va = written(plan, 0) ?? NaN;
    const vb = written(plan, 7) ?? NaN;
    expect(va + vb).toBeCloseTo(-1.5, 12);
    expect(va).toBeCloseTo(-1, 12);
    expect(vb).toBeCloseTo(-0.5, 12);
    // Both shards are repaid 30 s from now; retryAfter is exactly then.
    expect(plan.retryAfter).toBe(30 * SECOND);
    for (const [r, v] of [[a, va], [b, vb]] as const) {
      expect(delayUntil({ value: v, ts: 0 }, r.p, 0, 0)).toBeLessThanOrEqual(plan.retryAfter ?? 0);
    }
  });

  test("a reservation deeper than the pair's maxReserved is refused until it fits", () => {
    const config: RateLimitConfig = { kind: TB, rate: 10, period: MINUTE, maxReserved: 8, shards: 8 };
    const a = read(config, 0, { value: 0, ts: 0 });
    const b = read(config, 7, { value: 0, ts: 0 });
    // The pair may go 2 into debt (1 each); 3 is refused until 1 token has come in: rate 3/min, 20 s.
    const plan = planTwo(a, b, 0, 3, true);
    expect(plan).toStrictEqual({ ok: false, retryAfter: 20 * SECOND, writes: [], shards: [0, 7] });
    expect(planTwo(a, b, 20 * SECOND, 3, true).ok).toBe(true);
    expect(planTwo(a, b, 20 * SECOND - 1, 3, true).ok).toBe(false);
  });

  const refusals: [string, RateLimitConfig, number, State | null, number, State | null, number, number, boolean][] = [
    // [why, config, shard a, state a, shard b, state b, now, count, reserve]
    ["token bucket 100/min: 1.5 short at 10/min per shard", tb100, 0, { value: 0, ts: 0 }, 1, { value: 0.5, ts: 0 }, 0, 2, false],
    ["token bucket 10 over 8, unequal rates", tb10x8, 0, { value: 0.2, ts: 0 }, 7, { value: 0.1, ts: 0 }, 5, 2, false],
    ["token bucket with one shard's ts ahead (skew)", tb10x8, 1, { value: 0, ts: 9_000 }, 6, { value: 0.3, ts: 0 }, 1_000, 2, false],
    ["token bucket 7/h over 3", { kind: TB, rate: 7, period: HOUR, shards: 3 }, 0, { value: 0, ts: 0 }, 2, { value: 0, ts: 0 }, 0, 3, false],
    ["fixed window 10 over 8: the next boundary", fw10x8, 0, { value: 0, ts: 0 }, 7, { value: 0, ts: 0 }, 100, 2, false],
    ["fixed window 10 over 8: the smallest pair needs both shards", fw10x8, 6, { value: 0, ts: 0 }, 7, { value: 0, ts: 0 }, 100, 2, false],
    ["fixed window with reserve and maxReserved", { kind: FW, rate: 10, period: MINUTE, maxReserved: 4, shards: 2, start: 0 }, 0, { value: -2, ts: 0 }, 1, { value: -1, ts: 0 }, 7, 2, true],
    ["token bucket reserve past the pair's maxReserved", { kind: TB, rate: 7, period: HOUR, maxReserved: 3, shards: 3 }, 0, { value: -1, ts: 0 }, 1, { value: 0, ts: 0 }, 0, 3, true],
  ];

  test.each(refusals)("refused %s: retryAfter is exact for the pair", (_why, config, sa, stA, sb, stB, now, count, reserve) => {
    const a = read(config, sa, stA);
    const b = read(config, sb, stB);
    const plan = planTwo(a, b, now, count, reserve);
    expect(plan.ok).toBe(false);
    expect(plan.writes).toEqual([]);
    expect(plan.shards).toEqual([sa, sb]);
    const r = plan.retryAfter ?? NaN;
    expect(Number.isInteger(r) && r >= 1).toBe(true);
    expect(planTwo(a, b, now + r, count, reserve).ok).toBe(true);
    expect(planTwo(a, b, now + r - 1, count, reserve).ok).toBe(false);
  });

  test("a peek on a pair reads and writes nothing", () => {
    const plan = planTwo(read(tb100, 0, { value: 0, ts: 0 }), read(tb100, 1, { value: 0, ts: 0 }), 0, 0, false);
    expect(plan).toStrictEqual({ ok: true, writes: [], shards: [0] });
  });

  // A pair is accepted when the fuller shard alone can serve OR the two combined can. When one
  // shard is in reserved debt, the fuller one alone is ready before the combined sum, so a retry
  // search on the combined condition alone would overshoot (18 s and 9 s below).
  test.each([
    // [why, state a, state b, count, least retryAfter]
    ["a plain request: shard a alone has 1 token after 6 s; the combined sum needs 18 s", { value: 0, ts: 0 }, { value: -5, ts: 0 }, 1, 6 * SECOND],
    ["a peek: shard a is out of debt after 6 s; the combined sum needs 9 s", { value: -1, ts: 0 }, { value: -2, ts: 0 }, 0, 6 * SECOND],
  ] as [string, State, State, number, number][])("refused with one shard in debt, retryAfter is still the least for the pair: %s", (_why, sa, sb, count, least) => {
    const a = read(tb100, 0, sa);
    const b = read(tb100, 1, sb);
    expect(planTwo(a, b, least, count, false).ok).toBe(true); // the pair does serve it then
    expect(planTwo(a, b, least - 1, count, false).ok).toBe(false);
    expect(planTwo(a, b, 0, count, false).retryAfter).toBe(least);
  });
});

describe("the model store, deciding as lib.ts does", () => {
  test("a fresh limit of 100/min over 10 shards admits a count of 15 via two fresh shards", () => {
    const config: RateLimitConfig = { kind: TB, rate: 100, period: MINUTE, shards: 10 };
    for (let seed = 0; seed < 20; seed++) {
      const store: Store = new Map();
      const { plan, reads } = decideModel(store, { name: "n", config, count: 15 }, 0, seededRandom(seed));
      expect(plan.ok).toBe(true);
      expect(plan.retryAfter).toBeUndefined();
      expect(reads.map((r) => r.state)).toEqual([null, null]);
      expect(plan.writes.reduce((s, w) => s + w.state.value, 0)).toBe(5);
    }
  });

  test("a comfortable first shard is the only one read", () => {
    const config: RateLimitConfig = { kind: TB, rate: 100, period: MINUTE, shards: 10 };
    const { plan, reads } = decideModel(new Map(), { name: "n", config, count: 1 }, 0, seededRandom(1));
    expect(reads).toHaveLength(1);
    expect(plan.writes).toHaveLength(1);
    expect(plan.writes[0]?.state.value).toBe(9);
  });

  test("an uncomfortable first shard makes it read a second and take from the fuller", () => {
    // 6 tokens a shard: under ALONE_COUNTS, so the pair decides.
    const config: RateLimitConfig = { kind: TB, rate: 60, period: MINUTE, shards: 10 };
    const random = seededRandom(7);
    const [first, second] = pickTwo(10, random(), random());
    const store: Store = new Map([[first, { value: 2, ts: 0 }]]);
    const { plan, reads } = decideModel(store, { name: "n", config, count: 1 }, 0, seededRandom(7));
    expect(reads.map((r) => r.shard)).toEqual([first, second]);
    expect(plan.writes).toStrictEqual([{ shard: second, state: { value: 5, ts: 0 } }]);
  });

  test("on shards of ALONE_COUNTS requests or more, an uncomfortable first shard that can serve is the only one read", () => {
    const config: RateLimitConfig = { kind: TB, rate: 100, period: MINUTE, shards: 10 };
    const random = seededRandom(7);
    const [first] = pickTwo(10, random(), random());
    const store: Store = new Map([[first, { value: 2, ts: 0 }]]);
    const { plan, reads } = decideModel(store, { name: "n", config, count: 1 }, 0, seededRandom(7));
    expect(reads.map((r) => r.shard)).toEqual([first]);
    expect(plan.writes).toStrictEqual([{ shard: first, state: { value: 1, ts: 0 } }]);
  });

  /**
   * Drives a limit with `perWindow` requests of count 1 per period, evenly spaced, for `windows`
   * periods, and returns how many were admitted in each period.
   */
  function sustained(config: RateLimitConfig, perWindow: number, windows: number, seed: number): number[] {
    const store: Store = new Map();
    const random = seededRandom(seed);
    const admitted: number[] = [];
    for (let w = 0; w < windows; w++) {
      let n = 0;
      for (let j = 0; j < perWindow; j++) {
        const now = w * config.period + Math.floor((j * config.period) / perWindow);
        const { plan } = decideModel(store, { name: "n", config, count: 1 }, now, random);
        if (plan.ok) {
          applyModel(store, plan);
          n++;
        }
      }
      admitted.push(n);
    }
    return admitted;
  }

  test.each([
    // [why, rate, shards, capacity, requests per window, windows]
    ["10 over 8 (2,2,1,1,1,1,1,1): 10 per window, not 8", 10, 8, undefined, 200, 40],
    ["10 over 3 (4,3,3)", 10, 3, undefined, 100, 40],
    ["100 over 16 (7×4, 6×12)", 100, 16, undefined, 1_000, 10],
    ["1000 over 64 (16×40, 15×24)", 1000, 64, undefined, 4_000, 4],
    ["10 over 8 with capacity 15: 15 first, then 10", 10, 8, 15, 200, 20],
  ])("fixed window %s: under sustained demand admits exactly the rate per window", (_why, rate, shards, capacity, perWindow, windows) => {
    const config: RateLimitConfig = {
      kind: FW,
      rate,
      period: MINUTE,
      shards,
      start: 0,
      ...(capacity === undefined ? {} : { capacity }),
    };
    const admitted = sustained(config, perWindow, windows, 1234);
    expect(admitted).toEqual([capacity ?? rate, ...Array<number>(windows - 1).fill(rate)]);
  });

  test.each([
    // [why, rate, shards, requests per minute, minutes]
    ["10/min over 3", 10, 3, 600, 20],
    ["10/min over 8", 10, 8, 600, 20],
    ["100/min over 16", 100, 16, 2_000, 10],
    ["1000/min over 64", 1000, 64, 6_000, 3],
  ])("token bucket %s: under sustained demand admits the bound, less at most a token per shard", (_why, rate, shards, perMinute, minutes) => {
    const config: RateLimitConfig = { kind: TB, rate, period: MINUTE, shards };
    const total = sustained(config, perMinute, minutes, 99).reduce((a, b) => a + b, 0);
    // The last request is at minutes·period - period/perMinute, so that's the span.
    const span = minutes * MINUTE - MINUTE / perMinute;
    const bound = rate + (rate * span) / MINUTE;
    expect(total).toBeLessThanOrEqual(bound);
    expect(total).toBeGreaterThan(bound - shards);
  });
});

describe("planRequest reads no third shard on shards written often (quiet ones: test/shards-read-on.test.ts)", () => {
  // 5/s over 5 shards: each refills a token every second, too often to be quiet.
  const config: RateLimitConfig = { kind: TB, rate: 5, period: SECOND, shards: 5 };
  test("an empty pair is refused, though a third shard is full: reading on converges overloaded requests", () => {
    const asked = new Set<number>();
    const draws = [0.1, 0];
    const empty = { value: 0, ts: 0 };
    const states = [empty, empty, null, null, null];
    const plan = runPlan(planRequest(5, 0, 1, false, () => draws.shift()!), (shard) => {
      asked.add(shard);
      return read(config, shard, states[shard] ?? null);
    });
    expect([...asked]).toEqual([0, 1]);
    expect(plan).toEqual({ ok: false, retryAfter: 500, writes: [], shards: [0, 1] });
  });
});

describe("a peek (count 0) on a sharded limit answers for every shard", () => {
  const config: RateLimitConfig = { kind: TB, rate: 5, period: SECOND, shards: 5, maxReserved: 5 };
  function peek(states: (State | null)[], now = 0, draws = [0.1, 0]) {
    const asked = new Set<number>();
    const plan = runPlan(planRequest(5, now, 0, false, () => draws.shift()!), (shard) => {
      asked.add(shard);
      return read(config, shard, states[shard] ?? null);
    });
    return { plan, read: [...asked] };
  }
  // Shard 3 owes half a token (500 ms at one token a second); the pair drawn (0 and 1) is full.
  const states = [null, null, null, { value: -0.5, ts: 0 }, null];

  test.each([
    // [why, draws]
    ["drawing shards 0 and 1", [0.1, 0]],
    ["drawing shards 4 and 0", [0.9, 0]],
  ] as [string, number[]][])("refused while any shard is in debt, %s", (_why, draws) => {
    const { plan, read } = peek(states, 0, draws);
    expect(read.sort()).toEqual([0, 1, 2, 3, 4]);
    expect(plan).toEqual({ ok: false, retryAfter: 500, writes: [], shards: [3] });
  });

  test("a corrupt (NaN) shard never passes a peek: it fails closed with an error", () => {
    expect(() => peek([null, { value: Number.NaN, ts: 0 }, null, null, null])).toThrow(/InvalidRateLimit/);
  });

  test("ok from the instant the last debt is repaid", () => {
    expect(peek(states, 500).plan.ok).toBe(true);
    expect(peek(states, 499).plan.ok).toBe(false);
  });
});
