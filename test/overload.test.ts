// Shedding under overload (src/shared/shards/overload.ts), table-driven with explicit instants: which rule a request near empty follows, what the pair decides under it and when a refusal's retry succeeds, which stale decisions may shed a refusal, and what stands of a stale decision given its lag.
import type { RateLimitResult } from "../src/shared/shapes/validators.js";
import { describe, expect, test } from "vitest";
import type { Params } from "../src/shared/kinds/algebra.js";
import {
  ALONE_COUNTS,
  MAX_STALENESS_MS,
  NO_COMBINE_COUNTS,
  QUIET_SHARD_MS,
  READ_ON_SHARDS,
  nearEmptyRule,
  planNearEmpty,
  readOn,
  shedPlan,
  staleVerdict,
  type StaleDecision,
} from "../src/shared/shards/overload.js";
import { planRequest, type Plan, type ShardRead } from "../src/shared/shards/plan.js";
import { runPlan } from "../src/shared/shapes/rows.js";

const TB = "token bucket" as const;
/** A shard of `capacity` tokens refilling `capacity` per 1000 ms (1 token per ms per 1000 capacity). */
const params = (capacity: number): Params => ({ kind: TB, rate: capacity, period: 1000, capacity, maxReserved: Infinity, phase: 0 });
const read = (shard: number, capacity: number, value: number | null): ShardRead => ({
  shard,
  state: value === null ? null : { value, ts: 0 },
  p: params(capacity),
});

describe("readOn: how many more shards a refused pair reads, by how often its shards refill a request", () => {
  /** A shard of 10 tokens refilling `rate` per `period` ms. */
  const shard = (rate: number, period: number): ShardRead => ({
    shard: 0,
    state: { value: 0, ts: 0 },
    p: { kind: TB, rate, period, capacity: 10, maxReserved: Infinity, phase: 0 },
  });
  test.each([
    // [why, rate, period, count, reserve, n, more]
    [`a token every ${QUIET_SHARD_MS} ms: quiet, reads ${READ_ON_SHARDS} more`, 1, QUIET_SHARD_MS, 1, false, 10, READ_ON_SHARDS],
    ["a token every 6 s (10 a minute): quiet", 10, 60_000, 1, false, 10, READ_ON_SHARDS],
    [`a token every ${QUIET_SHARD_MS - 1} ms: written too often, reads no more`, 1, QUIET_SHARD_MS - 1, 1, false, 10, 0],
    ["counted in requests: 2 tokens a period refill a request of 2 once a period", 2, QUIET_SHARD_MS, 2, false, 10, READ_ON_SHARDS],
    ["a request of half a token refills twice a period: written too often", 1, QUIET_SHARD_MS, 0.5, false, 10, 0],
    ["a zero rate never refills: quiet", 0, 1000, 1, false, 10, READ_ON_SHARDS],
    ["over 3 shards only one is left to read", 1, 60_000, 1, false, 3, 1],
    ["over 2 shards none is", 1, 60_000, 1, false, 2, 0],
    ["a reservation reads no more: its pair may take into debt", 1, 60_000, 1, true, 10, 0],
    ["a peek reads every shard, never here", 1, 60_000, 0, false, 10, 0],
  ] as const)("%s", (_why, rate, period, count, reserve, n, more) => {
    expect(readOn(shard(rate, period), count, reserve, n)).toBe(more);
  });
});

describe("nearEmptyRule: by how many requests the first shard holds", () => {
  test.each([
    // [why, capacity, count, reserve, rule]
    ["a shard of 3 requests combines with its pair (partial tokens would strand)", 3, 1, false, "pair"],
    [`${NO_COMBINE_COUNTS} requests: never combine`, NO_COMBINE_COUNTS, 1, false, "no combining"],
    [`${ALONE_COUNTS - 1} requests: still reads the pair`, ALONE_COUNTS - 1, 1, false, "no combining"],
    [`${ALONE_COUNTS} requests: alone`, ALONE_COUNTS, 1, false, "alone"],
    ["counted in requests: 20 tokens hold 4 requests of 5", 20, 5, false, "no combining"],
    ["a shard of 3 tokens for requests of 2 combines (it holds fewer than 2 of them)", 3, 2, false, "pair"],
    ["a reservation always decides on the pair: it may go into debt", 100, 1, true, "pair"],
    ["a peek decides on every shard, never here", 100, 0, false, "pair"],
  ] as const)("%s", (_why, capacity, count, reserve, rule) => {
    expect(nearEmptyRule(read(0, capacity, 0), count, reserve)).toBe(rule);
  });
});

describe("planNearEmpty: the pair near empty", () => {
  test.each([
    // [why, rule, a, b, plan]
    ["no combining: the fuller serves alone", "no combining", 0.5, 1.5, { ok: true, writes: [{ shard: 1, state: { value: 0.5, ts: 0 } }], shards: [1] }],
    ["no combining: a tie goes to the first drawn", "no combining", 1, 1, { ok: true, writes: [{ shard: 0, state: { value: 0, ts: 0 } }], shards: [0] }],
    // 0.5 + 0.75 would serve 1 together: refused until either alone holds 1. b gains 1 token in 100 ms
    // (10 per 1000 ms): b needs 25 ms, a 50.
    ["no combining: partial tokens together are refused", "no combining", 0.5, 0.75, { ok: false, retryAfter: 25, writes: [], shards: [0, 1] }],
    ["alone: the first serves (re-read after the second)", "alone", 1, 5, { ok: true, writes: [{ shard: 0, state: { value: 0, ts: 0 } }], shards: [0] }],
    ["alone: the second spares a request (keeps one more)", "alone", 0.5, 2, { ok: true, writes: [{ shard: 1, state: { value: 1, ts: 0 } }], shards: [1] }],
    // b holds 1.5: it could serve, but 0.5 short of sparing one. a needs 50 ms to hold 1, b 50 ms to hold 2.
    ["alone: the second's last request is left to those that draw it first", "alone", 0.5, 1.5, { ok: false, retryAfter: 50, writes: [], shards: [0, 1] }],
    ["alone: both empty, the second sooner", "alone", 0, 1.8, { ok: false, retryAfter: 20, writes: [], shards: [0, 1] }],
  ] as [string, "no combining" | "alone", number, number, Plan][])("%s", (_why, rule, a, b, plan) => {
    expect(planNearEmpty(rule, read(0, 10, a), read(1, 10, b), 0, 1)).toStrictEqual(plan);
  });

  test.each([
    // [why, capacity, a, b, count, plan]
    // 10 tokens per 1000 ms: a needs 100 ms to hold 2; b needs 50 ms to hold twice 2.
    ["alone, requests of 2: the second spares one only holding 4", 10, 1, 3.5, 2, { ok: false, retryAfter: 50, writes: [], shards: [0, 1] }],
    ["alone, requests of 2: the second holding 4 serves", 10, 1, 4, 2, { ok: true, writes: [{ shard: 1, state: { value: 2, ts: 0 } }], shards: [1] }],
    // Shards of 2 (2 per 1000 ms): the second can hold twice 1, exactly its capacity, in 100 ms; the first needs 450.
    ["alone: twice the request may be the second's whole capacity", 2, 0.1, 1.8, 1, { ok: false, retryAfter: 100, writes: [], shards: [0, 1] }],
  ] as [string, number, number, number, number, Plan][])("%s", (_why, capacity, a, b, count, plan) => {
    expect(planNearEmpty("alone", read(0, capacity, a), read(1, capacity, b), 0, count)).toStrictEqual(plan);
  });

  test.each([
    ["no combining", 0.5, 0.75],
    ["alone", 0.5, 1.5],
    ["alone", 0.2, 0.1],
  ] as const)("%s (%s, %s): a retry after retryAfter is served by the same pair, and not a ms earlier", (rule, va, vb) => {
    const a = read(0, 10, va);
    const b = read(1, 10, vb);
    const refused = planNearEmpty(rule, a, b, 0, 1);
    expect(refused.ok).toBe(false);
    expect(planNearEmpty(rule, a, b, refused.retryAfter!, 1).ok).toBe(true);
    expect(planNearEmpty(rule, a, b, refused.retryAfter! - 1, 1).ok).toBe(false);
  });
});

describe("planRequest near empty: what it reads and takes, by shard size", () => {
  // Draws 0 and 0: shards 0 then 1 of 2.
  const draws = () => {
    const d = [0, 0];
    return () => d.shift() ?? 0;
  };
  const run = (capacity: number, a: number, b: number, count = 1) => {
    const asked: number[] = [];
    const rows = [read(0, capacity, a), read(1, capacity, b)];
    const plan = runPlan(planRequest(2, 0, count, false, draws()), (shard) => (asked.push(shard), rows[shard]!));
    return { plan, asked: [...new Set(asked)] };
  };

  test.each([
    // [why, capacity per shard, a, b, shards read, shards taken from (none: refused)]
    ["small shards (3): the pair combines 0.5 and 0.75", 3, 0.5, 0.75, [0, 1], [0, 1]],
    ["mid shards (6): the pair never combines", 6, 0.5, 0.75, [0, 1], null],
    ["mid shards (6): the first can serve but isn't comfortable: the fuller of the pair serves", 6, 2, 6, [0, 1], [1]],
    ["big shards (10): the first can serve: it alone is read", 10, 2, 10, [0], [0]],
    ["big shards (10): the first is empty, the second spares one", 10, 0.5, 2, [0, 1], [1]],
    ["big shards (10): the first is empty, the second holds its last", 10, 0.5, 1.5, [0, 1], null],
    ["big shards (10): comfortable first, as ever", 10, 10, 0, [0], [0]],
  ] as [string, number, number, number, number[], number[] | null][])("%s", (_why, capacity, a, b, asked, taken) => {
    const out = run(capacity, a, b);
    expect(out.asked).toEqual(asked);
    expect(out.plan.ok ? out.plan.writes.map((w) => w.shard) : null).toEqual(taken);
  });

  test("with nearEmpty false (an asynchronous limit), big shards keep the pair: the fuller serves", () => {
    const rows = [read(0, 10, 2), read(1, 10, 10)];
    const asked: number[] = [];
    const plan = runPlan(planRequest(2, 0, 1, false, draws(), undefined, false), (shard) => (asked.push(shard), rows[shard]!));
    expect([...new Set(asked)]).toEqual([0, 1]);
    expect(plan.writes.map((w) => w.shard)).toEqual([1]);
  });

  test("a reservation on big shards still reads the pair and goes into debt", () => {
    const rows = [read(0, 10, 0.5), read(1, 10, 0.25)];
    const plan = runPlan(planRequest(2, 0, 1, true, draws()), (shard) => rows[shard]!);
    expect(plan.ok).toBe(true);
    expect(plan.writes.reduce((sum, w) => sum + w.state.value, 0)).toBe(-0.25);
  });
});

describe("shedPlan: which stale decisions of an asynchronous limit shed a refusal", () => {
  // Capacity 8, 8 tokens per 8000 ms (1 per 1000 ms); the margin is 2.
  const row = (value: number): ShardRead => ({ shard: 0, state: { value, ts: 0 }, p: { ...params(8), rate: 8, period: 8000 } });
  const admit = (value: number): Plan => ({ ok: true, writes: [{ shard: 0, state: { value: value - 1, ts: 0 } }], shards: [0] });
  const refuse: Plan = { ok: false, retryAfter: 1000, writes: [], shards: [0] };
  const base = { count: 1, reserve: false, dryRun: false, busy: true, margin: 0.25, shards: 1 };

  test.each([
    // [why, plan, row value, args, shed]
    ["busy, inside the margin (2 left, 1 after): refused until 1 + 2 are back, 1000 ms", admit(2), 2, {}, { ok: false, retryAfter: 1000, writes: [], shards: [0] }],
    ["busy, a refusal on the snapshot stands as it is", refuse, 0.5, {}, refuse],
    ["busy, but keeping the margin (4 left, 3 after): it stands on its own, nothing to shed", admit(4), 4, {}, undefined],
    ["not busy: decided again exactly", admit(2), 2, { busy: false }, undefined],
    ["sharded, on shards of 8 requests' worth (SHED_SHARD_COUNTS or more): shed as unsharded", admit(2), 2, { shards: 2 }, { ok: false, retryAfter: 1000, writes: [], shards: [0] }],
    ["sharded, a refusal on shards of 8 requests' worth stands as it is", refuse, 0.5, { shards: 2 }, refuse],
    ["sharded, on shards of 4 requests' worth (2 tokens each): one pair near its margin says little of the others, decided again exactly", admit(2), 2, { shards: 2, count: 2 }, undefined],
    ["sharded, a refusal on shards of 4 requests' worth: decided again exactly", refuse, 0.5, { shards: 2, count: 2 }, undefined],
    ["a reservation may go into debt: decided again exactly", admit(2), 2, { reserve: true }, undefined],
    ["a dry run: decided again exactly (it logs what it would refuse)", admit(2), 2, { dryRun: true }, undefined],
    ["a peek: decided again exactly", admit(2), 2, { count: 0 }, undefined],
    ["a peek inside the margin: decided again exactly, never shed", { ok: true, writes: [], shards: [0] }, 1, { count: 0 }, undefined],
    ["an admission waiting for its debt to be repaid: decided again exactly", { ...admit(2), retryAfter: 5 }, 2, {}, undefined],
  ] as [string, Plan, number, Partial<typeof base>, Plan | undefined][])("%s", (_why, plan, value, args, shed) => {
    expect(shedPlan(plan, [row(value)], 0, { ...base, ...args })).toStrictEqual(shed);
  });
});

describe("staleVerdict: what stands of a decision on a snapshot lagMs old", () => {
  const ok = { ok: true } as const;
  const no = { ok: false, retryAfter: 1000 } as const;
  const take = { shard: 0, count: 1, ts: 0 };
  type Decision = StaleDecision<typeof take, { result: RateLimitResult }>;
  const safe: Decision = { result: ok, takes: [take], safeOnStale: true };
  const shedding: Decision = { result: ok, takes: [take], safeOnStale: false, shed: { result: no } };
  const neither: Decision = { result: ok, takes: [take], safeOnStale: false };

  test.each([
    // [why, decision, lag, stands]
    ["an admission keeping the margin stands, with its takes", safe, 50, { result: ok, takes: [take] }],
    ["also on a snapshot that doesn't lag", safe, 0, { result: ok, takes: [take] }],
    [`at exactly ${MAX_STALENESS_MS} ms`, safe, MAX_STALENESS_MS, { result: ok, takes: [take] }],
    ["nothing stands on an older snapshot", safe, MAX_STALENESS_MS + 1, null],
    ["a lag that isn't a number: nothing stands", safe, NaN, null],
    ["a shed refusal stands, taking nothing", shedding, 50, { result: no, takes: [] }],
    ["not from a snapshot that doesn't lag: it missed nothing, decide exactly", shedding, 0, null],
    ["nor from an older one", shedding, MAX_STALENESS_MS + 1, null],
    ["neither: decided again exactly", neither, 50, null],
  ] as [string, Decision, number, unknown][])("%s", (_why, decision, lag, stands) => {
    expect(staleVerdict(decision, lag)).toStrictEqual(stands);
  });
});

test("the near-empty shard sizes are ordered: combining stops before a shard is decided alone", () => {
  expect(NO_COMBINE_COUNTS).toBeLessThan(ALONE_COUNTS);
});
