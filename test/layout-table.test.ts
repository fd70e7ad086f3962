// Laying a key out over its shards (src/shared/shards/layout.ts): phases, terms, expanded rows, shard configs, sameClock and relayout, as tables of explicit rows, values and instants.
import { describe, expect, test } from "vitest";
import { DAY, HOUR, MINUTE, type Params, type State } from "../src/shared/kinds/algebra.js";
import { configTerms, expandRow, relayout, resolvePhase, sameClock, shardConfig, shardParams, termsHash } from "../src/shared/shards/layout.js";
import type { StoredRow } from "../src/shared/shapes/stored.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const TB = "token bucket" as const;
const FW = "fixed window" as const;
const SW = "sliding window" as const;
const T0 = 1_000_000;
/** A phase that is no multiple of a minute, so window starts of phase 0 aren't window starts of it. */
const PHASE = 1_234;

describe("resolvePhase: a key's phase never changes between versions (its rows' windows depend on it)", () => {
  test.each([
    // [why, kind, name, key, period, phase]
    ["a keyed hourly window", FW, "login", "alice", HOUR, 48_017],
    ["the kind doesn't enter the hash", SW, "login", "alice", HOUR, 48_017],
    ["the same key over a minute", FW, "login", "alice", MINUTE, 800],
    ["a key-less limit", FW, "login", undefined, HOUR, 1_423_349],
    ["the string key \"undefined\" is not the key-less limit", FW, "login", "undefined", HOUR, 1_100_505],
    ["the empty key is not the key-less limit either", FW, "login", "", HOUR, 1_437_412],
    ["another name", SW, "api", "k", MINUTE, 50_873],
    ["a key-less daily window", FW, "api", undefined, DAY, 29_334_085],
  ] as [string, typeof FW | typeof SW, string, string | undefined, number, number][])("%s", (_why, kind, name, key, period, phase) => {
    // The approximate sliding window's two counting windows take the hashed phase; an exact one has none (below).
    expect(resolvePhase(kind === SW ? { kind, exact: false, rate: 10, period } : { kind, rate: 10, period }, name, key)).toBe(phase);
  });

  test("an exact sliding window has phase 0: it has no windows to align", () => {
    expect(resolvePhase({ kind: SW, rate: 10, period: HOUR }, "login", "alice")).toBe(0);
    expect(resolvePhase({ kind: SW, rate: 10, period: HOUR, exact: true }, "api", "k")).toBe(0);
  });

  test.each([
    // [why, config, phase]
    ["a token bucket has phase 0 (no hash)", { kind: TB, rate: 10, period: HOUR }, 0],
    ["start 0 is a phase of 0, not a hash", { kind: FW, rate: 10, period: HOUR, start: 0 }, 0],
    ["start two hours and 5 ms in", { kind: FW, rate: 10, period: HOUR, start: 2 * HOUR + 5 }, 5],
    ["a negative start counts back from the period", { kind: FW, rate: 10, period: HOUR, start: -5 }, HOUR - 5],
    ["a sliding window's start, negative and over a period back", { kind: SW, exact: false, rate: 10, period: HOUR, start: -(2 * HOUR + 90_000) }, HOUR - 90_000],
  ] as [string, RateLimitConfig, number][])("%s", (_why, config, phase) => {
    expect(resolvePhase(config, "login", "alice")).toBe(phase);
  });
});

describe("shardParams' terms: the whole limit's, with the phase only for the windowed kinds", () => {
  test.each([
    // [why, config, terms of every shard]
    ["a token bucket records phase 0 whatever phase it is given", { kind: TB, rate: 10, period: MINUTE, capacity: 20, shards: 3 }, '["token bucket",10,60000,20,3,0]'],
    ["a fixed window records its phase", { kind: FW, rate: 10, period: MINUTE, capacity: 20, shards: 3 }, '["fixed window",10,60000,20,3,1234]'],
    ["a sliding window too; capacity defaults to rate and shards to 1", { kind: SW, exact: false, rate: 10, period: MINUTE }, '["sliding window",10,60000,10,1,1234]'],
  ] as [string, RateLimitConfig, string][])("%s", (_why, config, terms) => {
    for (let i = 0; i < (config.shards ?? 1); i++) expect(shardParams(config, PHASE, i).terms).toBe(terms);
  });
});

describe("expandRow fills in a compact row's layout only under the config its fingerprint stands for", () => {
  // Shard 1 of 10 over 3 shards is 3; of a capacity of 20, 7 (20 = 7 + 7 + 6).
  const config: RateLimitConfig = { kind: FW, rate: 10, period: MINUTE, capacity: 20, shards: 3 };
  const h = termsHash(configTerms(config));

  test("under its config: the shard count, kind, the shard's own rate, period and capacity, and the terms", () => {
    const row: StoredRow = { shard: 1, value: 5, ts: T0, h };
    expect(expandRow(row, config, PHASE)).toStrictEqual({
      ...row,
      shards: 3,
      kind: FW,
      rate: 3,
      period: MINUTE,
      capacity: 7,
      terms: '["fixed window",10,60000,20,3,1234]',
    });
  });

  test.each([
    // [why, row, config]
    ["a row without a fingerprint (in full, or upstream's)", { shard: 1, value: 5, ts: T0 }, config],
    ["no config known for the fingerprint", { shard: 1, value: 5, ts: T0, h }, undefined],
    ["another config's fingerprint (capacity 21)", { shard: 1, value: 5, ts: T0, h }, { ...config, capacity: 21 }],
  ] as [string, StoredRow, RateLimitConfig | undefined][])("returned as it is (the same object): %s", (_why, row, c) => {
    expect(expandRow(row, c, PHASE)).toBe(row);
  });
});

describe("shardConfig: one shard's share as a config of its own", () => {
  test.each([
    // [why, config, shard, expected]
    [
      "a finite maxReserved is split too (5 over 3: 2, 2, 1); a token bucket has no start",
      { kind: TB, rate: 10, period: MINUTE, capacity: 20, maxReserved: 5, shards: 3 },
      1,
      { kind: TB, rate: 3, period: MINUTE, capacity: 7, shards: 1, maxReserved: 2 },
    ],
    [
      "no maxReserved: none in the shard's config (not Infinity); start is the phase",
      { kind: FW, rate: 10, period: MINUTE, capacity: 20, shards: 3 },
      2,
      { kind: FW, rate: 3, period: MINUTE, capacity: 6, shards: 1, start: PHASE },
    ],
    [
      "a sliding window's first shard takes the remainder",
      { kind: SW, exact: false, rate: 10, period: MINUTE, shards: 3 },
      0,
      { kind: SW, exact: false, rate: 4, period: MINUTE, capacity: 4, shards: 1, start: PHASE },
    ],
  ] as [string, RateLimitConfig, number, RateLimitConfig][])("%s", (_why, config, i, expected) => {
    expect(shardConfig(config, PHASE, i)).toStrictEqual(expected);
  });
});

describe("sameClock: a row means what the current params take it to mean", () => {
  // Shard 1 of a 3-shard fixed window: rate 3, capacity 7, windows starting at PHASE.
  const config: RateLimitConfig = { kind: FW, rate: 10, period: MINUTE, capacity: 20, shards: 3 };
  const p = shardParams(config, PHASE, 1);
  const START = PHASE + 20 * MINUTE; // a window start of p
  const own = { shards: 3, kind: FW, rate: 3, period: MINUTE, capacity: 7 };
  const terms = '["fixed window",10,60000,20,3,1234]';
  const otherTerms = '["fixed window",10,60000,20,3,0]'; // the phase moved; the shard's share didn't
  const row = (fields: Partial<StoredRow>): StoredRow => ({ shard: 1, value: 2, ts: START, ...fields });
  /** p as a caller that knows no terms sees it. */
  const bare: Params = { kind: FW, rate: 3, period: MINUTE, capacity: 7, maxReserved: Infinity, phase: PHASE };

  test.each([
    // [why, row, params, same]
    ["everything recorded and matching", row({ ...own, terms }), p, true],
    ["an upstream row (nothing recorded) at a window start", row({}), p, true],
    ["another kind recorded", row({ ...own, kind: TB }), p, false],
    ["no kind recorded: assumed to be p's", row({ rate: 3, period: MINUTE, capacity: 7 }), p, true],
    ["other whole-limit terms, the shard's share unchanged", row({ ...own, terms: otherTerms }), p, false],
    ["no terms on the row: not compared", row(own), p, true],
    ["no terms on the params: not compared", row({ ...own, terms: otherTerms }), bare, true],
    ["own rate differs", row({ ...own, rate: 4 }), p, false],
    ["own period differs", row({ ...own, period: HOUR }), p, false],
    ["own capacity differs", row({ ...own, capacity: 8 }), p, false],
    // A row that records only some of kind, rate, period and capacity is compared on none of them.
    ["no kind: other rate, period and capacity not compared", row({ rate: 4, period: HOUR, capacity: 8 }), p, true],
    ["no rate: other period and capacity not compared", row({ kind: FW, period: HOUR, capacity: 8 }), p, true],
    ["no period: other rate and capacity not compared", row({ kind: FW, rate: 4, capacity: 8 }), p, true],
    ["no capacity: other rate and period not compared", row({ kind: FW, rate: 4, period: HOUR }), p, true],
    ["a fixed window 1 ms past a window start", row({ ...own, terms, ts: START + 1 }), p, false],
    ["a fixed window at a window start of phase 0, not of p's", row({ ...own, terms, ts: 20 * MINUTE }), p, false],
  ] as [string, StoredRow, Params, boolean][])("%s → %s", (_why, r, params, same) => {
    expect(sameClock(r, params)).toBe(same);
  });

  test("a token bucket's ts need not be a window start", () => {
    const bucket = shardParams({ kind: TB, rate: 10, period: MINUTE }, PHASE, 0);
    expect(sameClock({ shard: 0, value: 2, ts: T0 + 1 }, bucket)).toBe(true);
  });
});

describe("relayout", () => {
  const bucket = (rate: number, shards: number, capacity = rate): RateLimitConfig => ({ kind: TB, rate, period: MINUTE, capacity, shards });
  const at = (ts: number, values: number[], prevs?: number[]): State[] =>
    values.map((value, i) => (prevs ? { value, ts, prev: prevs[i]! } : { value, ts }));

  test.each([
    // [why, rows, new config, expected]
    [
      // Shards 0 and 2 of 30 over 3 (10 each): shard 1 is missing, so full. 3 + 10 + 4 = 17 over 2 shards.
      "rows recording no layout (upstream's) for shards 0 and 2 are a layout of 3 shards",
      [
        { shard: 0, value: 3, ts: T0 },
        { shard: 2, value: 4, ts: T0 },
      ],
      bucket(30, 2),
      at(T0, [9, 8]),
    ],
    [
      // Four shards of 40 (10 each), shards 2 and 3 full: 1 + 1 + 10 + 10 = 22 over 2 shards.
      "a row recording its layout gives the old shard count, even after a row recording none",
      [
        { shard: 0, value: 1, ts: T0 },
        { shard: 1, value: 1, ts: T0, shards: 4 },
      ],
      bucket(40, 2),
      at(T0, [11, 11]),
    ],
  ] as [string, StoredRow[], RateLimitConfig, State[]][])("%s", (_why, rows, config, expected) => {
    expect(relayout(rows, config, 0, T0)).toStrictEqual(expected);
  });

  describe("the total is taken at the latest row's ts, not at the reader's now", () => {
    test("rows written 10 s apart: the earlier one refills up to the later one's ts, no further", () => {
      // 60 a minute over 2 shards: each refills 1 token per 2 s. At T0 + 10 s shard 0 has 5 and
      // shard 1 none; at now (T0 + 60 s) they would have 30 and 25.
      const rows: StoredRow[] = [
        { shard: 0, value: 0, ts: T0, shards: 2 },
        { shard: 1, value: 0, ts: T0 + 10_000, shards: 2 },
      ];
      expect(relayout(rows, bucket(60, 1), 0, T0 + 60_000)).toStrictEqual(at(T0 + 10_000, [5]));
    });

    test("no row the old layout has (all full): stamped now", () => {
      // A row of shard 1 recording a 1-shard layout: shard 0 is missing, so full (60).
      const rows: StoredRow[] = [{ shard: 1, value: 0, ts: T0, shards: 1 }];
      expect(relayout(rows, bucket(60, 2), 0, T0 + 5)).toStrictEqual(at(T0 + 5, [30, 30]));
    });

    test("no rows at all: every shard full, stamped now", () => {
      expect(relayout([], bucket(60, 2), 0, T0 + 5)).toStrictEqual(at(T0 + 5, [30, 30]));
      expect(relayout([], bucket(60, 1), 0, T0)).toStrictEqual(at(T0, [60]));
    });
  });

  describe("a sliding window's previous-window count is summed and split by rate", () => {
    // 10 over 3 shards: rates 4, 3, 3. The old layout is 2 shards of 5.
    const sliding: RateLimitConfig = { kind: SW, exact: false, rate: 10, period: MINUTE, shards: 3 };

    test("prev 3 + 2 = 5 split 4:3:3 as 2, 1.5, 1.5; the 3 tokens split evenly", () => {
      const rows: StoredRow[] = [
        { shard: 0, value: 2, ts: T0, prev: 3, shards: 2 },
        { shard: 1, value: 1, ts: T0, prev: 2, shards: 2 },
      ];
      expect(relayout(rows, sliding, 0, T0)).toStrictEqual(at(T0, [1, 1, 1], [2, 1.5, 1.5]));
    });

    test("no prev field when the previous windows counted nothing", () => {
      const rows: StoredRow[] = [
        { shard: 0, value: 2, ts: T0, shards: 2 },
        { shard: 1, value: 5, ts: T0, shards: 2 },
      ];
      expect(relayout(rows, sliding, 0, T0)).toStrictEqual(at(T0, [3, 2, 2]));
    });
  });

  test("a debt is split by rate (4:3:3), not evenly in whole tokens", () => {
    const rows: StoredRow[] = [
      { shard: 0, value: -4, ts: T0, shards: 2 },
      { shard: 1, value: -1, ts: T0, shards: 2 },
    ];
    expect(relayout(rows, bucket(10, 3), 0, T0)).toStrictEqual(at(T0, [-2, -1.5, -1.5]));
  });

  // A capacity of 7 over 4 shards is 2, 2, 2, 1: below the rate's 3, 3, 2, 2. The last shard takes
  // the total's fraction but holds 1; the half token goes to the first shard with room, in shard
  // order, and no further.
  test.each([
    // [why, old single shard's value, expected]
    ["4.5 splits 1, 1, 1, 1.5: shard 0 has room", 4.5, [1.5, 1, 1, 1]],
    ["5.5 splits 2, 1, 1, 1.5: shard 0 is full, shard 1 takes it", 5.5, [2, 1.5, 1, 1]],
    ["6.5 splits 2, 2, 1, 1.5: shards 0 and 1 are full, shard 2 takes it", 6.5, [2, 2, 1.5, 1]],
  ] as [string, number, number[]][])("what a full shard can't take goes to the first with room: %s", (_why, value, expected) => {
    const rows: StoredRow[] = [{ shard: 0, value, ts: T0, shards: 1 }];
    expect(relayout(rows, bucket(10, 4, 7), 0, T0)).toStrictEqual(at(T0, expected));
  });
});
