// settle and fold (src/shared/flow/settle.ts), table-driven with explicit instants: takes not yet applied count under the config each was taken under, rows and takes of another layout are carried over to the current one, and nothing is lost or gained.
import { describe, expect, test } from "vitest";
import { resolvePhase, shardParams } from "../src/shared/shards/layout.js";
import type { StoredRow } from "../src/shared/shapes/stored.js";
import { settle, takenUnder } from "../src/shared/flow/settle.js";
import type { Take } from "../src/shared/flow/flow.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const T0 = 1_000_000;
const phaseOf = (c: RateLimitConfig) => resolvePhase(c, "n", undefined);
// Refills over a day: within these tests' seconds, nothing whole.
const DAY = 86_400_000;
const small: RateLimitConfig = { kind: "token bucket", rate: 5, period: DAY, capacity: 5, applyUpdates: "asynchronously" };
const big: RateLimitConfig = { ...small, capacity: 20 };
const four: RateLimitConfig = { kind: "token bucket", rate: 40, period: DAY, shards: 4, applyUpdates: "asynchronously" };
const two: RateLimitConfig = { ...four, shards: 2 };
const window: RateLimitConfig = { kind: "fixed window", rate: 5, period: DAY, applyUpdates: "asynchronously" };
const sliding: RateLimitConfig = { kind: "sliding window", exact: false, rate: 5, period: DAY, applyUpdates: "asynchronously" };

/** The row shard `shard` of `config` stores when it holds `value` at `ts`. */
function row(config: RateLimitConfig, shard: number, value: number, ts = T0): StoredRow {
  const p = shardParams(config, phaseOf(config), shard);
  return { shard, value, ts, shards: config.shards ?? 1, kind: p.kind, rate: p.rate, period: p.period, capacity: p.capacity, terms: p.terms! };
}
const take = (shard: number, count: number, config?: RateLimitConfig, ts = T0): Take => ({ shard, count, ts, ...(config ? { config } : {}) });
/** The states' values, rounded off below a token (a day's refill over a few ms). */
const values = (states: { value: number }[]) => states.map((s) => Math.round(s.value * 1000) / 1000);

describe("settle", () => {
  test.each([
    // [why, rows, takes, config, values]
    ["no row, no take: full", [], [], small, [5]],
    ["takes under the current config fold onto a missing (full) row", [], [take(0, 3, small)], small, [2]],
    ["a take that records no config is under the current one", [], [take(0, 3)], small, [2]],
    // Not under the take before it: 19 of 20 carried into 5, then 4 taken under small (not 20 - 5 carried into 5).
    ["a take that records no config, after one under other terms, is under the current one", [], [take(0, 1, big, T0), take(0, 4, undefined, T0 + 1)], small, [1]],
    ["capacity raised 5 → 20 over 5 pending takes and no row: still nothing left", [], [take(0, 5, small)], big, [0]],
    ["the same over a row: carried over as it stands", [row(small, 0, 2)], [take(0, 2, small)], big, [0]],
    ["takes under both, in order of time: 4 of 5, then 1 of what was carried over", [], [take(0, 4, small, T0), take(0, 1, big, T0 + 1)], big, [0]],
    // Two deployments racing: 19 of 20 left, carried into 5 (clamped), 4 taken: 1, carried back.
    ["a later take under the old config still counts, under its own terms", [], [take(0, 1, big, T0), take(0, 4, small, T0 + 1)], big, [1]],
    ["4 shards → 2, every take pending, no row: takes on dropped shards 2 and 3 count", [], [0, 1, 2, 3].map((s) => take(s, 10, four)), two, [0, 0]],
    ["4 shards → 2 over rows of 4, takes on 2 and 3: 10 + 10 left of 40", [0, 1, 2, 3].map((s) => row(four, s, s < 2 ? 0 : 10)), [take(2, 10, four), take(3, 0, four)], two, [5, 5]],
    ["2 → 4 over rows of 2 and a take under 4 on shard 3", [row(two, 0, 20), row(two, 1, 20)], [take(3, 10, four)], four, [10, 10, 10, 0]],
  ] as [string, StoredRow[], Take[], RateLimitConfig, number[]][])("%s", (_why, rows, takes, config, expected) => {
    expect(values(settle(rows, takes, config, phaseOf, T0 + 10))).toEqual(expected);
  });

  test("whatever the order of the takes given, they are applied in order of time", () => {
    const takes = [take(0, 1, big, T0 + 5), take(0, 4, small, T0), take(0, 2, big, T0 + 9)];
    const a = settle([], takes, big, phaseOf, T0 + 10);
    expect(settle([], [...takes].reverse(), big, phaseOf, T0 + 10)).toEqual(a);
  });
});

describe("takenUnder", () => {
  test.each([
    ["the same config", small, small, true],
    ["no config recorded", undefined, small, true],
    ["equal terms, another object (as read back from the database)", { ...small }, small, true],
    ["maxReserved doesn't change what a row means", { ...small, maxReserved: 3 }, small, true],
    ["capacity does", small, big, false],
    ["the shard count does", four, two, false],
    // Each term alone, each way round (the field-by-field fast path must agree with the terms).
    ["the kind does", small, { ...small, kind: "fixed window" }, false],
    ["the rate does", small, { ...small, rate: 6, capacity: 5 }, false],
    ["the period does", small, { ...small, period: DAY / 2 }, false],
    ["a capacity equal to the rate is the default", { ...small, capacity: undefined }, small, true],
    ["an explicit shard count of 1 is the default", { ...small, shards: 1 }, small, true],
    ["metrics, dryRun and applyUpdates don't", { ...small, metrics: true, dryRun: true, applyUpdates: "transactionally" }, small, true],
    ["a fixed window's start does", { ...window, start: 1000 }, { ...window, start: 2000 }, false],
    ["a start a whole period later is the same phase", { ...window, start: 1000 }, { ...window, start: 1000 + DAY }, true],
    ["a sliding window's start does", { ...sliding, start: 1000 }, { ...sliding, start: 2000 }, false],
  ] as [string, RateLimitConfig | undefined, RateLimitConfig, boolean][])("%s", (_why, under, config, expected) => {
    expect(takenUnder(take(0, 1, under), config, phaseOf)).toBe(expected);
    if (under !== undefined) expect(takenUnder(take(0, 1, config), under, phaseOf)).toBe(expected);
  });
});

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
