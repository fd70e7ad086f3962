// Mutation-testing gaps in the pure layer (settle, request, limit-all, metrics, overload), table-driven with explicit instants: each row pins a rule a surviving mutant broke without a test noticing.
import { describe, expect, test } from "vitest";
import { resolvePhase, shardParams } from "../src/shared/layout.js";
import type { StoredRow } from "../src/shared/stored.js";
import { settle } from "../src/shared/settle.js";
import { requestFlow, type KeyRow, type RowQuery, type Take } from "../src/shared/flow.js";
import { answerRead, runPlan } from "../src/shared/rows.js";
import type { RateLimitArgs, RateLimitConfig } from "../src/shared/validators.js";

const T0 = 1_000_000;
const DAY = 86_400_000;
const phaseOf = (c: RateLimitConfig) => resolvePhase(c, "n", undefined);
const small: RateLimitConfig = { kind: "token bucket", rate: 5, period: DAY, capacity: 5, applyUpdates: "asynchronously" };
const two: RateLimitConfig = { kind: "token bucket", rate: 40, period: DAY, shards: 2, applyUpdates: "asynchronously" };
const four: RateLimitConfig = { ...two, shards: 4 };
const sliding: RateLimitConfig = { kind: "sliding window", rate: 5, period: DAY, applyUpdates: "asynchronously" };
const window: RateLimitConfig = { kind: "fixed window", rate: 5, period: DAY, applyUpdates: "asynchronously" };

function row(config: RateLimitConfig, shard: number, value: number, ts = T0): StoredRow {
  const p = shardParams(config, phaseOf(config), shard);
  return { shard, value, ts, shards: config.shards ?? 1, kind: p.kind, rate: p.rate, period: p.period, capacity: p.capacity, terms: p.terms };
}
const take = (shard: number, count: number, config?: RateLimitConfig, ts = T0): Take => ({ shard, count, ts, ...(config ? { config } : {}) });
const values = (states: { value: number }[]) => states.map((s) => Math.round(s.value * 1000) / 1000);

describe("settle: a take's shard, as its own layout has it", () => {
  test.each([
    // [why, takes, config, values]
    ["a negative shard (none we write) counts against shard 0", [take(-1, 3)], small, [2]],
    ["a fractional shard counts against shard 0", [take(0.5, 3)], small, [2]],
    ["shard 0 is shard 0", [take(0, 3, two)], two, [17, 20]],
    ["a take that records no config, on shard 2 of a limit now 2 shards (shard === n): still counted, against shard 0", [take(2, 3)], two, [17, 20]],
    ["a take on shard 2 of the 3-shard layout it records, settled under 2 shards: 34 of 40 left, still counted", [take(2, 6, { ...two, shards: 3 })], two, [17, 17]],
  ] as [string, Take[], RateLimitConfig, number[]][])("%s", (_why, takes, config, expected) => {
    expect(values(settle([], takes, config, phaseOf, T0 + 10))).toEqual(expected);
  });
});

describe("settle: rows are read as they stand only when every one was written under the current layout", () => {
  test("rows of as many shards under other terms are carried over (20 of 80 left, spread), not read as they stand", () => {
    const rows = [0, 1, 2, 3].map((s) => row(four, s, s < 2 ? 0 : 10));
    expect(values(settle(rows, [], { ...four, rate: 80 }, phaseOf, T0 + 10))).toEqual([5, 5, 5, 5]);
  });
  test("rows that record no layout are the smallest layout that has them: shard 1, unseen, is not counted full", () => {
    expect(values(settle([{ shard: 0, value: 4, ts: T0 }], [], two, phaseOf, T0 + 10))).toEqual([2, 2]);
  });
  test.each([
    ["shard n", 2],
    ["a negative shard", -1],
  ])("a row at %s (none we write) is not read as a shard of the layout", (_why, shard) => {
    const rows = [row(two, 0, 5), row(two, 1, 5)];
    const expected = settle(rows, [], two, phaseOf, T0 + 10);
    expect(settle([...rows, { ...row(two, 1, 9), shard }], [], two, phaseOf, T0 + 10)).toEqual(expected);
  });
});

describe("settle: the rows it carries between runs are the rows the applier writes", () => {
  // Rate 41 over 4 shards is 11, 10, 10, 10; rate 42 is 11, 11, 10, 10: shard 3's share is unchanged,
  // only the whole limit's terms tell the two apart.
  const r41: RateLimitConfig = { ...four, rate: 41 };
  const r42: RateLimitConfig = { ...four, rate: 42 };
  test("a take under old terms on a shard whose share didn't change is carried over as a row of the old terms", () => {
    const written = [row(r41, 3, 6)];
    expect(settle([], [take(3, 4, r41)], r42, phaseOf, T0 + 10)).toEqual(settle(written, [], r42, phaseOf, T0 + 10));
  });
  test("a sliding window keeps its previous window's count", () => {
    expect(settle([], [take(0, 2, sliding)], sliding, phaseOf, T0 + 10)).toStrictEqual([{ value: 3, ts: T0, prev: 0 }]);
    const [next] = settle([], [take(0, 2, sliding, T0), take(0, 1, sliding, T0 + DAY + 5)], sliding, phaseOf, T0 + DAY + 10);
    expect(next!.prev).toBe(2);
  });
});

describe("requestFlow: an outcome has only the fields it sets", () => {
  const tb: RateLimitConfig = { kind: "token bucket", rate: 5, period: DAY };
  const outcome = (args: Partial<RateLimitArgs>, rows: KeyRow<string>[] = []) =>
    runPlan(requestFlow<string>({ name: "n", config: tb, ...args } as RateLimitArgs, T0, () => 0), (q: RowQuery) => answerRead({ rows, pending: [] }, q));
  test.each([
    ["no metrics: no event", {}, "event"],
    ["no throws: no raise", {}, "raise"],
    ["refused without throws: no raise", { count: 5, config: { ...tb, capacity: 5 } }, "raise"],
    ["transactional, refused: no shed", { count: 5, config: { ...tb, capacity: 5 } }, "shed"],
  ] as [string, Partial<RateLimitArgs>, string][])("%s", (_why, args, field) => {
    const rows: KeyRow<string>[] = [{ id: "r", shard: 0, value: 0, ts: T0, shards: 1, kind: "token bucket" }];
    expect(field in outcome(args, rows)).toBe(false);
  });
  test("admitted now: the result is exactly { ok: true }, no retryAfter key", () => {
    expect(outcome({}).result).toStrictEqual({ ok: true });
  });
});
