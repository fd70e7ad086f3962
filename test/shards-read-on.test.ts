// Reading on past a refused pair over quiet shards (readOn in src/shared/shards/overload.ts, planReadOn and pickOthers in src/shared/shards/plan.ts): tables with explicit rows, instants and draws, for token buckets and the exact sliding window, whose tokens come back on the shard that took them.
import { describe, expect, test } from "vitest";
import { MINUTE, SECOND, evaluate, type State } from "../src/shared/kinds/algebra.js";
import { shardParams } from "../src/shared/shards/layout.js";
import { pickOthers, planOne, planRequest, type Plan, type ShardRead } from "../src/shared/shards/plan.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const TB = "token bucket" as const;

/** A read of shard `shard` of `config` (phase 0) holding `state`. */
function read(config: RateLimitConfig, shard: number, state: State | null): ShardRead {
  return { shard, state, p: shardParams(config, 0, shard) };
}

/** The value a plan wrote for `shard`, or undefined. */
function written(plan: Plan, shard: number): number | undefined {
  return plan.writes.find((w) => w.shard === shard)?.state.value;
}

describe("planRequest reads on past a refused pair of quiet shards", () => {
  const empty = { value: 0, ts: 0 };
  /** Plans a request of 1 at 0 on `config` over 5 shards holding `states` (null: full), drawing `draws`. */
  function plan(config: RateLimitConfig, states: (State | null)[], draws: number[]) {
    const asked: number[] = [];
    const result = runPlan(planRequest(5, 0, 1, false, () => draws.shift()!), (shard) => {
      asked.push(shard);
      return read(config, shard, states[shard] ?? null);
    });
    return { plan: result, asked: [...new Set(asked)] };
  }

  test("quiet shards (a token every 2 s each): the empty pair reads on and takes from the full third", () => {
    const config: RateLimitConfig = { kind: TB, rate: 5, period: 2 * SECOND, shards: 5 };
    const { plan: p, asked } = plan(config, [empty, empty, null, null, null], [0.1, 0, 0]);
    expect(asked).toEqual([0, 1, 2]);
    expect(p.ok).toBe(true);
    expect(p.shards).toEqual([2]);
    expect(written(p, 2)).toBe(0);
    expect(p.writes).toHaveLength(1);
  });

  test("quiet shards, all four read short: refused until the first read can serve, listing the four; the fifth, full, is not read", () => {
    const config: RateLimitConfig = { kind: TB, rate: 5, period: 2 * SECOND, shards: 5 };
    // Shard 2 holds 0.75 of a token: whole in 500 ms, before the pair (1000 ms) or shard 3 (2000 ms).
    const { plan: p, asked } = plan(config, [empty, empty, { value: 0.75, ts: 0 }, empty, null], [0.1, 0, 0, 0]);
    expect(asked).toEqual([0, 1, 2, 3]);
    expect(p).toEqual({ ok: false, retryAfter: 500, writes: [], shards: [0, 1, 2, 3] });
  });
});

describe("planRequest on an exact sliding window's quiet shards: tokens come back where they were taken", () => {
  // 100 a minute over 10 shards: 10 tokens a shard, one every 6 s (quiet).
  const config: RateLimitConfig = { kind: "sliding window", rate: 100, period: MINUTE, shards: 10 };
  /** Shard `shard`'s state after 10 takes of 1 at `at`: its log is full until `at` + 1 min. */
  function spent(shard: number, at: number): State {
    let state: State | null = null;
    for (let i = 0; i < 10; i++) {
      const p = planOne(read(config, shard, state), at, 1, false);
      state = p.writes[0]!.state;
    }
    return state!;
  }
  /** Plans a request of 1 at `now` drawing shards 0 and 1, then 2 and 3 to read on. */
  function plan(states: (State | null)[], now: number) {
    const asked: number[] = [];
    const draws = [0.05, 0, 0, 0];
    const result = runPlan(planRequest(10, now, 1, false, () => draws.shift()!), (shard) => {
      asked.push(shard);
      return read(config, shard, states[shard] ?? null);
    });
    return { plan: result, asked: [...new Set(asked)] };
  }
  // Shards 0, 1 and 3 took their 10 at 1 s; shard 2 at 0, so its tokens are back at 1 min.
  const states = [spent(0, SECOND), spent(1, SECOND), spent(2, 0), spent(3, SECOND)];

  test("at 1 min the pair's logs are full, shard 2's takes have left its window: taken from shard 2", () => {
    const { plan: p, asked } = plan(states, MINUTE);
    expect(asked).toEqual([0, 1, 2]);
    expect(p.ok).toBe(true);
    expect(p.shards).toEqual([2]);
    expect(evaluate(p.writes[0]!.state, read(config, 2, null).p, MINUTE).value).toBe(9);
  });

  test("a ms before, every shard read is full: refused until the first take of shard 2 leaves, listing the four read", () => {
    const { plan: p, asked } = plan(states, MINUTE - 1);
    expect(asked).toEqual([0, 1, 2, 3]);
    expect(p).toEqual({ ok: false, retryAfter: 1, writes: [], shards: [0, 1, 2, 3] });
  });
});

describe("pickOthers", () => {
  test.each([
    // [why, n, first, second, k, draws, picks]
    ["the others in order when every draw is 0", 5, 0, 1, 2, [0, 0], [2, 3]],
    ["the last other when the draw is near 1", 5, 0, 1, 1, [0.999], [4]],
    ["first and second anywhere", 6, 4, 1, 3, [0, 0, 0], [0, 2, 3]],
    ["no more than there are", 3, 2, 0, 2, [0.5, 0.5], [1]],
    ["none over 2 shards", 2, 0, 1, 2, [0.5, 0.5], []],
  ] as [string, number, number, number, number, number[], number[]][])("%s", (_why, n, first, second, k, draws, picks) => {
    expect(pickOthers(n, first, second, k, () => draws.shift()!)).toEqual(picks);
  });

  test("over 6 shards, every other shard equally often first", () => {
    const counts = new Map<number, number>();
    for (let i = 0; i < 4; i++) {
      const [pick] = pickOthers(6, 1, 3, 1, () => (i + 0.5) / 4);
      counts.set(pick!, (counts.get(pick!) ?? 0) + 1);
    }
    expect([...counts.entries()].sort((a, b) => a[0] - b[0])).toEqual([[0, 1], [2, 1], [4, 1], [5, 1]]);
  });
});
