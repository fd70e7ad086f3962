// The shard planner's reads, waits and writes to the exact shard, ms and token (src/shared/shards/plan.ts): the shards a decision asks for (order and number), read-on shards smaller than the request, reservations on pair rows never written, the share test's edge, a two-shard limit's tolerance band, gathered reservations that owe nothing, and the probes each wait's search costs.
import { describe, expect, test, vi } from "vitest";
import { HOUR, MINUTE, SECOND, type Params, type State } from "../src/shared/kinds/algebra.js";
import { shardParams } from "../src/shared/shards/layout.js";
import { planRequest, planTwo, type Plan, type ShardRead } from "../src/shared/shards/plan.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

// Every value the planner's wait searches test, counted: leastDelay's probes and delayUntil's
// tests (the default test made explicit, as delayUntil defines it). The searches answer as before.
const searched = vi.hoisted(() => ({ probes: 0 }));
vi.mock("../src/shared/kinds/algebra.js", async (importOriginal) => {
  const algebra = await importOriginal<typeof import("../src/shared/kinds/algebra.js")>();
  const { minus: sub } = await import("../src/shared/core/split.js");
  return {
    ...algebra,
    leastDelay: (ok: (t: number) => boolean, now: number, guess: number, count?: number) =>
      algebra.leastDelay((t) => (searched.probes++, ok(t)), now, guess, count),
    delayUntil: (
      state: State | null,
      p: Params,
      now: number,
      need: number,
      test: (value: number) => boolean = (value) => sub(value, need) >= 0,
      count: number = need,
    ) => algebra.delayUntil(state, p, now, need, (value) => (searched.probes++, test(value)), count),
  };
});

/** Draws that make planRequest pick `first` then `second` of `n` shards, then `rest` (each in [0, 1)). */
function draws(n: number, first: number, second: number, rest: number[] = []): () => number {
  const k = (((second - first - 1) % n) + n) % n;
  const values = [(first + 0.5) / n, (k + 0.5) / (n - 1), ...rest];
  return () => {
    const next = values.shift();
    if (next === undefined) throw new Error("no draw left");
    return next;
  };
}

/** Runs planRequest over rows holding `values` (null: none, a full shard) at `now` (ms); returns its plan and every shard it asked for, in order. */
function decide(
  config: RateLimitConfig,
  values: readonly (number | null)[],
  now: number,
  count: number,
  reserve: boolean,
  random: () => number,
): { plan: Plan; asked: number[] } {
  const n = config.shards ?? 1;
  const rows: ShardRead[] = Array.from({ length: n }, (_, shard) => {
    const value = values[shard] ?? null;
    return { shard, state: value === null ? null : { value, ts: now }, p: shardParams(config, 0, shard) };
  });
  const asked: number[] = [];
  const plan = runPlan(planRequest(n, now, count, reserve, random), (shard) => (asked.push(shard), rows[shard]!));
  return { plan, asked };
}

/** The value a plan wrote for each shard it wrote, by shard (`+ 0`: a 0 from Math.round(-0.x) is -0, the same number to every reader). */
function written(plan: Plan): Record<number, number> {
  return Object.fromEntries(plan.writes.map((w) => [w.shard, w.state.value + 0]));
}

describe("planRequest: the shards a decision asks for", () => {
  test("a peek on a one-shard limit asks for shard 0 twice, as every decision asks for its first shard again before deciding on it (a read may switch the view to a migrated layout)", () => {
    const config: RateLimitConfig = { kind: "token bucket", rate: 10, period: SECOND };
    const asked: number[] = [];
    const row: ShardRead = { shard: 0, state: { value: 4, ts: 0 }, p: shardParams(config, 0, 0) };
    const plan = runPlan(planRequest(1, 0, 0, false, () => 0), (shard) => (asked.push(shard), row));
    expect(asked).toEqual([0, 0]);
    expect(plan).toEqual({ ok: true, writes: [], shards: [0] });
  });
});

describe("planReadOn: a read-on shard smaller than the request is read, never decided on alone", () => {
  // 7 per 2 s over 5 shards: shards 0 and 1 hold 2 and refill 1 a second, shards 2 to 4 hold 1
  // (shard 0 refills a request of 2 once every 2 s: quiet, so a refused pair reads two more).
  const config: RateLimitConfig = { kind: "token bucket", rate: 7, period: 2 * SECOND, shards: 5 };

  test("the empty pair refuses 2; shards 2 and 3, full but holding 1 each, are read and can't serve: refused until the pair holds 2 (1 s), listing all four", () => {
    const { plan, asked } = decide(config, [0, 0, null, null, null], 0, 2, false, draws(5, 0, 1, [0, 0]));
    expect(asked).toEqual([0, 1, 0, 2, 3]);
    expect(plan).toEqual({ ok: false, retryAfter: SECOND, writes: [], shards: [0, 1, 2, 3] });
  });
});

// 12 an hour over 5 shards, 10 reservable: shards 0 and 1 hold 3 and refill 3 an hour, 2 to 4 hold
// 2 and refill 2 an hour; each may owe 2 (floor -2).
const TB5: RateLimitConfig = { kind: "token bucket", rate: 12, period: HOUR, maxReserved: 10, shards: 5 };

describe("planReserved: reservations whose pair has a shard never written (a full row)", () => {
  test("first shard full (5 above its floor), second 0.1 above: 6 is more than the pair may reserve, so it reads shard 2 (full, 4 above) and takes 5 from shard 0 to its floor, 1 from shard 2; shard 0 repays its 2 owed in 40 minutes", () => {
    const { plan, asked } = decide(TB5, [null, -1.9, null, null, null], 0, 6, true, draws(5, 0, 1));
    expect(asked).toEqual([0, 1, 0, 0, 1, 2]);
    expect(plan.ok).toBe(true);
    expect(written(plan)).toEqual({ 0: -2, 2: 1 });
    expect(plan.shards).toEqual([0, 2]);
    expect(plan.retryAfter).toBe(40 * MINUTE);
  });

  test("second shard full: the same from shard 1", () => {
    const { plan, asked } = decide(TB5, [-1.9, null, null, null, null], 0, 6, true, draws(5, 0, 1));
    expect(asked).toEqual([0, 1, 0, 0, 1, 2]);
    expect(plan.ok).toBe(true);
    expect(written(plan)).toEqual({ 1: -2, 2: 1 });
    expect(plan.shards).toEqual([1, 2]);
    expect(plan.retryAfter).toBe(40 * MINUTE);
  });

  test("a pair holding 0.5 and 0.5 above its floors refuses 2; shard 2, full, holds them alone and is left at 0: nothing owed, so no retryAfter", () => {
    const { plan, asked } = decide(TB5, [-1.5, -1.5, null, null, null], 0, 2, true, draws(5, 0, 1));
    expect(asked).toEqual([0, 1, 0, 0, 1, 2]);
    expect(plan).toEqual({ ok: true, writes: [{ shard: 2, state: { value: 0, ts: 0 } }], shards: [2] });
  });
});

describe("planReserved: the pair's share of the request (2/k of it, k the shards) decides whether it reads on", () => {
  test("a pair holding 0.6 above its floors, less than its share of 2 (0.8 of 5 shards'), reads nothing more: refused as the pair is, until the next window", () => {
    const fw5: RateLimitConfig = { kind: "fixed window", rate: 12, period: HOUR, maxReserved: 10, shards: 5, start: 0 };
    const { plan, asked } = decide(fw5, [-1.7, -1.7, -2, -2, -2], 0, 2, true, draws(5, 0, 1));
    expect(asked).toEqual([0, 1, 0]);
    expect(plan).toEqual({ ok: false, retryAfter: HOUR, writes: [], shards: [0, 1] });
  });

  // 4 an hour over 4 shards, nothing reservable: each shard holds 1 and its floor is 0.
  const none4: RateLimitConfig = { kind: "token bucket", rate: 4, period: HOUR, maxReserved: 0, shards: 4 };

  test("a pair holding its share of a token to the ppb the test allows (0.2 and 0.2999999995 of four shards' 0.5) reads on, and gathers the token from three shards, owing nothing", () => {
    const { plan, asked } = decide(none4, [0.2, 0.2999999995, 0.6, 0], 0, 1, true, draws(4, 0, 1));
    expect(asked).toEqual([0, 1, 0, 0, 1, 2]);
    // The fullest first, each to its floor (0), the last only what is still needed.
    expect(plan).toEqual({
      ok: true,
      writes: [
        { shard: 2, state: { value: 0, ts: 0 } },
        { shard: 1, state: { value: 0, ts: 0 } },
        { shard: 0, state: { value: 0.0999999995, ts: 0 } },
      ],
      shards: [2, 1, 0],
    });
  });

  test("two shards, the whole limit: holding a token less half a ppb (within the share test's tolerance), the pair refuses, reads nothing more, and its refill serves in 1 ms", () => {
    // 2 a minute over 2 shards, nothing reservable: each holds 1 and refills 1 a minute.
    const none2: RateLimitConfig = { kind: "token bucket", rate: 2, period: MINUTE, maxReserved: 0, shards: 2 };
    const { plan, asked } = decide(none2, [0.5, 0.4999999995], 0, 1, true, draws(2, 0, 1));
    expect(asked).toEqual([0, 1, 0]);
    expect(plan).toEqual({ ok: false, retryAfter: 1, writes: [], shards: [0, 1] });
  });
});

describe("planGathered: what a gathered reservation writes", () => {
  test("a shard whose spare is exactly what is still needed goes to its floor exactly (-1/3, not the 12-digit -0.3333333333333)", () => {
    // A third reservable over 3 shards: shards 0 and 1 may owe nothing, shard 2 a third (its floor).
    const third: RateLimitConfig = { kind: "token bucket", rate: 3, period: HOUR, maxReserved: 1 / 3, shards: 3 };
    // Shard 2 holds 1/3 - 0.25 above its floor, 0.0833333333333 to 12 digits: what 1 less 0.5 and
    // 0.4166666666667 leaves to take.
    const { plan, asked } = decide(third, [0.5, 0.4166666666667, -0.25], 0, 1, true, draws(3, 0, 1));
    expect(asked).toEqual([0, 1, 0, 0, 1, 2]);
    expect(plan).toEqual({
      ok: true,
      retryAfter: 20 * MINUTE,
      writes: [
        { shard: 0, state: { value: 0, ts: 0 } },
        { shard: 1, state: { value: 0, ts: 0 } },
        { shard: 2, state: { value: 0 - 1 / 3, ts: 0 } },
      ],
      shards: [0, 1, 2],
    });
  });

  test("a shard at its floor is read but not written, even when the others' spares (exact to 12 digits of floors of 4e9: minus) leave 0.0005 of the count unmet", () => {
    // 16e9 reservable over 4 shards: each may owe 4e9. Shards 0 and 1 hold 0.3003 above their
    // floors (0.3 to 12 digits), shard 2 none, shard 3 0.3995: the four hold the token (the total
    // test), the three above their floors 0.9995 of it as each is counted.
    const huge: RateLimitConfig = { kind: "token bucket", rate: 4, period: SECOND, maxReserved: 16e9, shards: 4 };
    const { plan, asked } = decide(huge, [-4e9 + 0.3003, -4e9 + 0.3003, -4e9, -4e9 + 0.3995], 0, 1, true, draws(4, 0, 1));
    expect(asked).toEqual([0, 1, 0, 0, 1, 2, 0, 1, 2, 3]);
    expect(plan.ok).toBe(true);
    expect(plan.writes.map((w) => w.shard)).toEqual([3, 0, 1]);
    expect(plan.shards).toEqual([3, 0, 1]);
  });
});

describe("planTwo: each wait's search costs the fewest probes (its guess lands on the wait)", () => {
  // 8 tokens every 1024 ms a shard (1/128 of a token a ms, exact in binary), up to 5 owed.
  const p: Params = { kind: "token bucket", rate: 8, period: 1024, capacity: 8, maxReserved: 5, phase: 0 };
  const T = 10 * SECOND;
  /** planTwo on shards 0 and 1 holding `va` and `vb` as of `ts`, at `now`, and the probes its searches took. */
  function two(va: number, vb: number, ts: number, now: number, count: number, reserve: boolean, q: Params = p, q2: Params = p) {
    searched.probes = 0;
    const plan = planTwo({ shard: 0, state: { value: va, ts }, p: q }, { shard: 1, state: { value: vb, ts }, p: q2 }, now, count, reserve);
    return { plan, probes: searched.probes };
  }

  test.each<[string, number, number, number, number, boolean, number]>([
    // [why, va, vb, row ts, count, reserve, the wait in ms]
    ["0.25 and 0.25 need 0.5 more for 1 together: 32 ms at 1/64 a ms", 0.25, 0.25, T, 1, false, 32],
    ["0 and 0.5 need 0.5 more: 32 ms", 0, 0.5, T, 1, false, 32],
    ["rows 100 ms ahead of now (time ran backwards) refill from their ts: 100 + 64 ms", 0, 0, T + 100, 1, false, 164],
    ["a reservation on a pair at its floors (-5 and -5) waits until it may owe 1 more: 64 ms", -5, -5, T, 1, true, 64],
  ])("refused: %s, found in two probes (the wait, and a ms before it)", (_why, va, vb, ts, count, reserve, wait) => {
    const { plan, probes } = two(va, vb, ts, T, count, reserve);
    expect(plan).toEqual({ ok: false, retryAfter: wait, writes: [], shards: [0, 1] });
    expect(probes).toBe(2);
  });

  // 3 a second over 2 shards, 10 reservable: shard 0 holds 2 and refills 2 a second, shard 1 holds 1
  // and refills 1; each may owe 5. A reservation takes whole tokens from shard 0 (its share, 2/3).
  const s0 = shardParams({ kind: "token bucket", rate: 3, period: SECOND, maxReserved: 10, shards: 2 }, 0, 0);
  const s1 = shardParams({ kind: "token bucket", rate: 3, period: SECOND, maxReserved: 10, shards: 2 }, 0, 1);

  test("only a shard left in debt is searched for its repayment: 0.5 and 0 reserve 1, leaving 0 and -0.5 (shard 1 repays in 500 ms): three probes (the capacity, the wait, a ms before)", () => {
    const { plan, probes } = two(0.5, 0, 0, 0, 1, true, s0, s1);
    expect(written(plan)).toEqual({ 0: 0, 1: -0.5 });
    expect(plan.retryAfter).toBe(500);
    expect(probes).toBe(3);
  });

  test("the same with the debt on the first: 0 and 0 reserve 1, leaving -1 and 0 (shard 0 repays in 500 ms): three probes", () => {
    const { plan, probes } = two(0, 0, 0, 0, 1, true, s0, s1);
    expect(written(plan)).toEqual({ 0: -1, 1: 0 });
    expect(plan.retryAfter).toBe(500);
    expect(probes).toBe(3);
  });
});
