// Shedding under overload at its thresholds (src/shared/shards/overload.ts), with explicit instants: the second shard's size that makes a pair, which shard sizes a sharded stale decision sheds on, the retry of a refusal shed over two shards, and a shard that can never hold the request and its margin.
import { describe, expect, test } from "vitest";
import type { Params } from "../src/shared/kinds/algebra.js";
import { ALONE_COUNTS, NO_COMBINE_COUNTS, SHED_SHARD_COUNTS, nearEmptyRule, shedPlan } from "../src/shared/shards/overload.js";
import type { Plan, ShardRead } from "../src/shared/shards/plan.js";

/** A token bucket shard of `capacity` tokens refilling 1 token per 1000 ms. */
const params = (capacity: number): Params => ({ kind: "token bucket", rate: capacity, period: 1000 * capacity, capacity, maxReserved: Infinity, phase: 0 });
const read = (shard: number, capacity: number, value: number): ShardRead => ({ shard, state: { value, ts: 0 }, p: params(capacity) });

describe("nearEmptyRule once the second shard is read: under NO_COMBINE_COUNTS requests' worth, a pair", () => {
  // Requests of 2, so NO_COMBINE_COUNTS × count (8) differs from NO_COMBINE_COUNTS / count (2).
  const first = read(0, ALONE_COUNTS * 2, 0);
  test.each([
    // [why, second's capacity, rule]
    [`a second of exactly ${NO_COMBINE_COUNTS} requests (8 tokens) leaves the first alone`, NO_COMBINE_COUNTS * 2, "alone"],
    ["a second a token smaller (7) is too small to refill a request soon: a pair", NO_COMBINE_COUNTS * 2 - 1, "pair"],
    ["a second of 3 tokens: a pair", 3, "pair"],
  ] as const)("%s", (_why, capacity, rule) => {
    expect(nearEmptyRule(first, 2, false, read(1, capacity, 0))).toBe(rule);
  });
});

describe("shedPlan at its shard sizes", () => {
  const base = { count: 1, reserve: false, dryRun: false, busy: true, margin: 0.25, shards: 2 };
  /** Takes 1 from shard 0, which holds `value`. */
  const admit = (value: number): Plan => ({ ok: true, writes: [{ shard: 0, state: { value: value - 1, ts: 0 } }], shards: [0] });

  test.each([
    // [why, reads, args, shed]
    // Unsharded, the shard's size doesn't matter: 1 + 0.5 (the margin) back from 1 takes 500 ms.
    ["unsharded, a shard of 2 (under SHED_SHARD_COUNTS requests) still sheds", [read(0, 2, 1)], { shards: 1 }, { ok: false, retryAfter: 500, writes: [], shards: [0] }],
    // 1 + 1.5 (the margin) back from 2 takes 500 ms.
    [`sharded, every shard of exactly ${SHED_SHARD_COUNTS} requests: sheds`, [read(0, SHED_SHARD_COUNTS, 2), read(1, SHED_SHARD_COUNTS, 6)], {}, { ok: false, retryAfter: 500, writes: [], shards: [0] }],
    [
      "sharded, one shard read a token under SHED_SHARD_COUNTS requests: decided again exactly",
      [read(0, SHED_SHARD_COUNTS, 2), read(1, SHED_SHARD_COUNTS - 1, 5)],
      {},
      undefined,
    ],
    // A shard of 1 can never hold 1 + 0.25: no retry to give, so no shed (and no error).
    ["unsharded, a shard that can never hold the request and its margin: decided again exactly", [read(0, 1, 1)], { shards: 1 }, undefined],
  ] as [string, ShardRead[], Partial<typeof base>, Plan | undefined][])("%s", (_why, reads, args, shed) => {
    expect(shedPlan(admit(reads[0]!.state!.value), reads, 0, { ...base, ...args })).toStrictEqual(shed);
  });

  test("a take from two shards inside the margin is refused until both hold the request and its margin again: the later of the two", () => {
    // Shards of 8 (margin 2): each needs 3; shard 0 holds 2 (1000 ms to go), shard 1 holds 2.5 (500 ms).
    const reads = [read(0, 8, 2), read(1, 8, 2.5)];
    const plan: Plan = { ok: true, writes: [{ shard: 0, state: { value: 1.5, ts: 0 } }, { shard: 1, state: { value: 2, ts: 0 } }], shards: [0, 1] };
    expect(shedPlan(plan, reads, 0, { ...base, count: 1 })).toStrictEqual({ ok: false, retryAfter: 1000, writes: [], shards: [0, 1] });
  });
});
