// Overrides, blocks and lockouts as pure tables at explicit instants: which config is in force
// (resolveOverride, mergeOverride, sameOverride), what bad input is refused with (validateOverride,
// a lockout's config), what setting, removing and resetting write (keyOverrideOps, resetOps), and
// requestFlow over rows carrying a key's override (`o`) or a lockout (`u`), driven by runPlan and
// answerRead with every read counted.
import { describe, expect, test } from "vitest";
import { errorData } from "./error-data.js";
import { getValueFlow, requestFlow, type KeyRow, type RowQuery } from "../src/shared/flow/flow.js";
import { configHash, configTerms } from "../src/shared/shards/layout.js";
import { mergeOverride, resolveOverride, sameOverride, type InForce } from "../src/shared/overrides/overrides.js";
import type { Override, OverrideTarget } from "../src/shared/shapes/override-validators.js";
import { keyOverrideOps, MAX_NOTE_LENGTH, resetOps, validateOverride } from "../src/shared/admin/override-writes.js";
import { answerRead, runPlan, type KeyInMemory } from "../src/shared/shapes/rows.js";
import { validateConfig } from "../src/shared/validation/validate.js";
import type { RateLimitArgs, RateLimitConfig } from "../src/shared/shapes/validators.js";

const TB = "token bucket" as const;
const FW = "fixed window" as const;
const SW = "sliding window" as const;
const T0 = 1_000_000;
const SECOND = 1000;


/** The fingerprint a row written under `config` carries, and the write that records its terms. */
const hashOf = (config: RateLimitConfig) => configHash(config);
const termsWrite = (config: RateLimitConfig) => ({ op: "terms" as const, hash: hashOf(config), terms: configTerms(config) });

// The named config, a key's override config and a tier's, all distinguishable by rate.
const named: RateLimitConfig = { kind: TB, rate: 10, period: SECOND };
const keyConfig: RateLimitConfig = { kind: TB, rate: 100, period: SECOND };
const tierConfig: RateLimitConfig = { kind: FW, rate: 50, period: SECOND, start: 0 };

describe("resolveOverride: key > tier > named config; a block until its instant", () => {
  const K: Override = { config: keyConfig };
  const TC: Override = { config: tierConfig };
  const blocked = (until: number): Override => ({ blockedUntil: until });
  const asNamed: InForce = { config: named, by: "config" };
  const asKey: InForce = { config: keyConfig, by: "key" };
  const asTier: InForce = { config: tierConfig, by: "tier" };
  const cases: [string, Override | undefined, Override | undefined, InForce][] = [
    // [why, key's override, tier's override, in force at T0]
    ["nothing overridden: the named config", undefined, undefined, asNamed],
    ["only the tier's config", undefined, TC, asTier],
    ["only the tier's block, in force", undefined, blocked(T0 + 700), { ...asNamed, block: { until: T0 + 700, by: "tier" } }],
    ["only the tier's block, ended: ignored", undefined, blocked(T0 - 1), asNamed],
    ["the tier's block ending exactly now is lifted", undefined, blocked(T0), asNamed],
    ["the key's config alone", K, undefined, asKey],
    ["the key's config beats the tier's", K, TC, asKey],
    ["the key's config beats the tier's block: the key is let through", K, blocked(T0 + 700), asKey],
    ["the key's config with the tier's block ended", K, blocked(T0 - 1), asKey],
    ["the key's block: tokens counted under the named config", blocked(T0 + 500), undefined, { ...asNamed, block: { until: T0 + 500, by: "key" } }],
    ["the key's block over the tier's config: counted under the tier's", blocked(T0 + 500), TC, { ...asTier, block: { until: T0 + 500, by: "key" } }],
    ["the key's block with the tier's ended", blocked(T0 + 500), blocked(T0 - 1), { ...asNamed, block: { until: T0 + 500, by: "key" } }],
    // Both in force: the tier's decides once the key's lifts, so the key is blocked until the later.
    ["the key's block, then the tier's later one", blocked(T0 + 500), blocked(T0 + 700), { ...asNamed, block: { until: T0 + 700, by: "tier" } }],
    ["the key's block outlasting the tier's", blocked(T0 + 900), blocked(T0 + 700), { ...asNamed, block: { until: T0 + 900, by: "key" } }],
    ["the key's block ended: the tier's config decides", blocked(T0 - 1), TC, asTier],
    ["the key's block ended: the tier's block decides", blocked(T0 - 1), blocked(T0 + 700), { ...asNamed, block: { until: T0 + 700, by: "tier" } }],
    ["the key's block ended, nothing else", blocked(T0 - 1), undefined, asNamed],
    ["the key's block ending exactly now is lifted: the tier's config decides", blocked(T0), TC, asTier],
    ["the key's block ending exactly now, nothing else", blocked(T0), undefined, asNamed],
    ["both blocks ending exactly now", blocked(T0), blocked(T0), asNamed],
    ["a block a fraction of a ms from now is still in force", blocked(T0 + 0.5), undefined, { ...asNamed, block: { until: T0 + 0.5, by: "key" } }],
  ];
  test.each(cases)("%s", (_why, key, tier, expected) => {
    expect(resolveOverride(named, tier, key, T0)).toEqual(expected);
  });

  test("a block a ms before its end is in force, at its end it isn't", () => {
    expect(resolveOverride(named, undefined, blocked(T0), T0 - 1).block).toEqual({ until: T0, by: "key" });
    expect(resolveOverride(named, undefined, blocked(T0), T0).block).toBeUndefined();
  });
});

describe("mergeOverride: the override's terms, the named config's layout and behaviour", () => {
  const layout = { shards: 2, applyUpdates: "asynchronously", dryRun: true, metrics: true } as const;
  test.each([
    // [why, named, override's config, merged]
    ["no layout fields on either: the override's config as it is", named, keyConfig, keyConfig],
    ["the named config's layout and behaviour are kept", { ...named, ...layout }, keyConfig, { ...keyConfig, ...layout }],
    ["the override's own layout fields are dropped for the named config's", named, { ...keyConfig, ...layout }, keyConfig],
    ["another kind: the override's kind and start", { ...named, metrics: true }, tierConfig, { ...tierConfig, metrics: true }],
    ["the named config's lockout is a term: not kept under an override without one", { ...named, lockout: 60 * SECOND }, keyConfig, keyConfig],
    ["the override's lockout is kept", named, { ...keyConfig, lockout: 5 * SECOND }, { ...keyConfig, lockout: 5 * SECOND }],
    ["an exact sliding window's terms", { ...named, shards: 2 }, { kind: SW, rate: 7, period: SECOND }, { kind: SW, rate: 7, period: SECOND, shards: 2 }],
    ["fields set to undefined are left out", named, { ...keyConfig, capacity: undefined }, keyConfig],
  ] as [string, RateLimitConfig, RateLimitConfig, RateLimitConfig][])("%s", (_why, base, config, merged) => {
    const out = mergeOverride(base, config);
    expect(out).toEqual(merged);
    // toEqual ignores undefined fields: a field present but undefined would change the config's terms.
    expect(Object.keys(out).sort()).toEqual(Object.keys(merged).sort());
  });
});

describe("sameOverride", () => {
  test.each([
    // [why, a, b, same]
    ["both absent", undefined, undefined, true],
    ["one absent", undefined, { blockedUntil: T0 }, false],
    ["the other absent", { blockedUntil: T0 }, undefined, false],
    ["the same block", { blockedUntil: T0 }, { blockedUntil: T0 }, true],
    ["blocks to different instants", { blockedUntil: T0 }, { blockedUntil: T0 + 1 }, false],
    ["a block and a config", { blockedUntil: T0 }, { config: named }, false],
    ["the same config, fields in another order", { config: { kind: TB, rate: 10, period: SECOND } }, { config: { period: SECOND, rate: 10, kind: TB } }, true],
    ["configs differing in one field", { config: named }, { config: { ...named, capacity: 5 } }, false],
    ["an undefined field is no field", { config: { ...named, capacity: undefined } }, { config: named }, true],
    ["a capacity of 0 is a field", { config: { ...named, capacity: 0 } }, { config: named }, false],
  ] as [string, Override | undefined, Override | undefined, boolean][])("%s", (_why, a, b, same) => {
    expect(sameOverride(a, b)).toBe(same);
    expect(sameOverride(b, a)).toBe(same);
  });
});

describe("validateOverride: bad input names the field, word for word", () => {
  const longNote = "n".repeat(MAX_NOTE_LENGTH + 1);
  const cases: [string, OverrideTarget, Override, RateLimitConfig, string | undefined, string, string][] = [
    // [why, target, override, named config, note, field, message]
    ["a negative rate", { key: "a" }, { config: { kind: TB, rate: -1, period: SECOND } }, named, undefined, "override.config.rate", "override.config.rate = -1: must be a finite number > 0"],
    ["a NaN rate", { key: "a" }, { config: { kind: TB, rate: NaN, period: SECOND } }, named, undefined, "override.config.rate", "override.config.rate = NaN: must be a finite number > 0"],
    ["a period under a ms", { tier: "pro" }, { config: { kind: TB, rate: 1, period: 0.5 } }, named, undefined, "override.config.period", "override.config.period = 0.5: must be a finite number of ms ≥ 1"],
    [
      "shards: the layout is the named config's",
      { key: "a" },
      { config: { kind: TB, rate: 10, period: SECOND, shards: 2 } },
      named,
      undefined,
      "override.config.shards",
      "override.config.shards = 2: an override keeps the limit's own shards; leave it out (it follows the named config)",
    ],
    [
      "applyUpdates",
      { key: "a" },
      { config: { kind: TB, rate: 10, period: SECOND, applyUpdates: "transactionally" } },
      named,
      undefined,
      "override.config.applyUpdates",
      "override.config.applyUpdates = \"transactionally\": an override keeps the limit's own applyUpdates; leave it out (it follows the named config)",
    ],
    [
      "dryRun",
      { key: "a" },
      { config: { kind: TB, rate: 10, period: SECOND, dryRun: false } },
      named,
      undefined,
      "override.config.dryRun",
      "override.config.dryRun = false: an override keeps the limit's own dryRun; leave it out (it follows the named config)",
    ],
    [
      "metrics",
      { tier: "pro" },
      { config: { kind: TB, rate: 10, period: SECOND, metrics: true } },
      named,
      undefined,
      "override.config.metrics",
      "override.config.metrics = true: an override keeps the limit's own metrics; leave it out (it follows the named config)",
    ],
    [
      "a field of another kind",
      { key: "a" },
      { config: { kind: TB, rate: 10, period: SECOND, start: 0 } as unknown as RateLimitConfig },
      named,
      undefined,
      "override.config.start",
      "override.config.start = 0: a token bucket has no start (its tokens refill continuously); leave it out",
    ],
    [
      "checked as it would be in force: a rate too small for the named config's shards",
      { key: "a" },
      { config: { kind: TB, rate: 1, period: SECOND } },
      { ...named, shards: 2 },
      undefined,
      "override.config.shards",
      "override.config.shards = 2: rate 1 can't give each of 2 shards a whole token; use 1 shard",
    ],
    ["a NaN block", { key: "a" }, { blockedUntil: NaN }, named, undefined, "override.blockedUntil", "override.blockedUntil = NaN: must be a finite instant (UTC ms); for a block with no end, use a far one"],
    ["a block with no end", { key: "a" }, { blockedUntil: Infinity }, named, undefined, "override.blockedUntil", "override.blockedUntil = Infinity: must be a finite instant (UTC ms); for a block with no end, use a far one"],
    ["a block ending before time began", { tier: "x" }, { blockedUntil: -Infinity }, named, undefined, "override.blockedUntil", "override.blockedUntil = -Infinity: must be a finite instant (UTC ms); for a block with no end, use a far one"],
    ["an empty tier", { tier: "" }, { blockedUntil: T0 }, named, undefined, "target.tier", 'target.tier = "": must not be empty; leave it out for no tier'],
    [
      "a key too long",
      { key: "k".repeat(1025) },
      { blockedUntil: T0 },
      named,
      undefined,
      "key",
      `key = "${"k".repeat(76)}...: is 1025 characters; at most 1024 are allowed`,
    ],
    ["a note too long", { key: "a" }, { blockedUntil: T0 }, named, longNote, "note", `note = "${"n".repeat(76)}...: is 1001 characters; at most 1000 are allowed`],
    ["a malformed named config is the named config's error", { key: "a" }, { blockedUntil: T0 }, { kind: TB, rate: 0, period: SECOND }, undefined, "config.rate", "config.rate = 0: must be a finite number > 0"],
  ];
  test.each(cases)("%s", (_why, target, override, base, note, field, message) => {
    expect(errorData(() => validateOverride("llm", target, override, base, note))).toEqual({
      kind: "InvalidRateLimit",
      field,
      value: expect.any(String),
      message,
    });
  });

  test.each([
    ["a config", { key: "a" }, { config: keyConfig }, undefined],
    ["a block in the past (lifted already, harmless)", { key: "a" }, { blockedUntil: 0 }, undefined],
    ["the keyless limit", {}, { blockedUntil: T0 }, undefined],
    ["a tier", { tier: "pro" }, { config: tierConfig }, undefined],
    ["a note of exactly the most characters", { key: "a" }, { blockedUntil: T0 }, "n".repeat(MAX_NOTE_LENGTH)],
  ] as [string, OverrideTarget, Override, string | undefined][])("accepts %s", (_why, target, override, note) => {
    expect(() => validateOverride("llm", target, override, named, note)).not.toThrow();
  });
});

describe("lockout: a whole number of ms on one shard, written transactionally", () => {
  const locking = (lockout: number, more: Partial<RateLimitConfig> = {}) => ({ ...named, lockout, ...more }) as RateLimitConfig;
  test.each([
    // [why, config, field, message]
    ["a fraction of a ms", locking(1.5), "config.lockout", "config.lockout = 1.5: must be a whole number of ms ≥ 1"],
    ["0 ms would lock nothing", locking(0), "config.lockout", "config.lockout = 0: must be a whole number of ms ≥ 1"],
    ["negative", locking(-1000), "config.lockout", "config.lockout = -1000: must be a whole number of ms ≥ 1"],
    ["NaN", locking(NaN), "config.lockout", "config.lockout = NaN: must be a whole number of ms ≥ 1"],
    ["forever", locking(Infinity), "config.lockout", "config.lockout = Infinity: must be a whole number of ms ≥ 1"],
    ["on 2 shards: the lock is on one row", locking(1000, { shards: 2 }), "config.shards", "config.shards = 2: a limit with lockout locks the key's one row; use 1 shard"],
    [
      "asynchronously: no row written on the hot path",
      locking(1000, { applyUpdates: "asynchronously" }),
      "config.applyUpdates",
      'config.applyUpdates = "asynchronously": a limit with lockout writes its lock with the take; use "transactionally"',
    ],
  ] as [string, RateLimitConfig, string, string][])("%s", (_why, config, field, message) => {
    expect(errorData(() => validateConfig(config))).toMatchObject({ kind: "InvalidRateLimit", field, message });
  });

  test("a lockout of 1 ms on one shard, transactionally, on every kind, is accepted", () => {
    for (const config of [locking(1), { ...tierConfig, lockout: 1 }, { kind: SW, rate: 3, period: SECOND, lockout: 1, applyUpdates: "transactionally" }] as RateLimitConfig[]) {
      expect(() => validateConfig(config)).not.toThrow();
    }
  });

  test("an override's lockout is checked under the named config's layout", () => {
    const lockout = { config: { ...keyConfig, lockout: 1000 } };
    expect(errorData(() => validateOverride("llm", { key: "a" }, lockout, { ...named, shards: 2 }))).toMatchObject({
      field: "override.config.shards",
      message: "override.config.shards = 2: a limit with lockout locks the key's one row; use 1 shard",
    });
    expect(errorData(() => validateOverride("llm", { tier: "t" }, lockout, { ...named, applyUpdates: "asynchronously" }))).toMatchObject({
      field: "override.config.applyUpdates",
      message: 'override.config.applyUpdates = "asynchronously": a limit with lockout writes its lock with the take; use "transactionally"',
    });
    expect(errorData(() => validateOverride("llm", { key: "a" }, { config: { ...keyConfig, lockout: 0.5 } }, named))).toMatchObject({
      field: "override.config.lockout",
    });
    expect(() => validateOverride("llm", { key: "a" }, lockout, named)).not.toThrow();
  });
});

/** A stored row of shard `shard` as a request writes it under `config`, plus any carried fields. */
function stored(shard: number, value: number, ts: number, config: RateLimitConfig, carried: { o?: Override; u?: number } = {}): KeyRow<string> {
  return { id: `row${shard}`, shard, value, ts, h: hashOf(config), ...carried };
}

describe("keyOverrideOps: a key's override goes on every row, its state left as it is", () => {
  const at = { name: "llm", key: "a", config: named };
  const K: Override = { config: keyConfig };
  const rows = [stored(0, 3, T0 - 5, named), stored(1, 1, T0 - 9, named, { o: { blockedUntil: T0 } })];

  test("every row gets it, and nothing else is written", () => {
    expect(keyOverrideOps(rows, at, K, T0)).toEqual([
      { op: "override", id: "row0", shard: 0, o: K },
      { op: "override", id: "row1", shard: 1, o: K },
    ]);
  });

  test("removed: every row loses it (no `o` in the write)", () => {
    const ops = keyOverrideOps(rows, at, undefined, T0);
    expect(ops).toEqual([
      { op: "override", id: "row0", shard: 0 },
      { op: "override", id: "row1", shard: 1 },
    ]);
    expect(ops.every((op) => !("o" in op))).toBe(true);
  });

  test("removed from a key with no rows: nothing to write", () => {
    expect(keyOverrideOps([], at, undefined, T0)).toEqual([]);
  });

  test("a key with no rows gets them full under its override's config, carrying it", () => {
    expect(keyOverrideOps([], at, K, T0)).toEqual([termsWrite(keyConfig), { op: "insert", shard: 0, fields: { value: 100, ts: T0, h: hashOf(keyConfig), o: K } }]);
  });

  test("on the named config's shards: every shard full, with its share", () => {
    const sharded = { ...named, shards: 2 };
    const merged = { ...keyConfig, shards: 2 };
    expect(keyOverrideOps([], { ...at, config: sharded }, K, T0)).toEqual([
      termsWrite(merged),
      { op: "insert", shard: 0, fields: { value: 50, ts: T0, h: hashOf(merged), o: K } },
      { op: "insert", shard: 1, fields: { value: 50, ts: T0, h: hashOf(merged), o: K } },
    ]);
  });

  test("a fixed window's full row starts at its window", () => {
    const window: Override = { config: tierConfig };
    // Windows of a second from 0: T0 + 400 is in the window of T0.
    expect(keyOverrideOps([], at, window, T0 + 400)).toEqual([termsWrite(tierConfig), { op: "insert", shard: 0, fields: { value: 50, ts: T0, h: hashOf(tierConfig), o: window } }]);
  });

  test("a block on a key with no rows: full rows under the named config, carrying the block", () => {
    const block: Override = { blockedUntil: T0 + SECOND };
    expect(keyOverrideOps([], at, block, T0)).toEqual([termsWrite(named), { op: "insert", shard: 0, fields: { value: 10, ts: T0, h: hashOf(named), o: block } }]);
  });
});

describe("resetOps: every row deleted; a key with its own override gets full rows carrying it", () => {
  const K: Override = { config: keyConfig };

  test("no override: the rows are deleted, and nothing else", () => {
    const rows = [stored(0, 3, T0 - 5, named, { u: T0 + SECOND }), stored(1, 1, T0 - 9, named)];
    expect(resetOps(rows, { name: "llm", key: "a" }, T0)).toEqual([
      { op: "delete", id: "row0", shard: 0 },
      { op: "delete", id: "row1", shard: 1 },
    ]);
  });

  test("no rows: nothing to write", () => {
    expect(resetOps([], { name: "llm", key: "a" }, T0)).toEqual([]);
  });

  test("its own override: deleted, then full under the override, carrying it and no lockout", () => {
    const locked = { ...named, lockout: 60 * SECOND };
    const rows = [stored(0, 0.2, T0 - 5, locked, { o: K, u: T0 + 60 * SECOND })];
    expect(resetOps(rows, { name: "llm", key: "a", config: locked }, T0)).toEqual([
      { op: "delete", id: "row0", shard: 0 },
      termsWrite(keyConfig),
      { op: "insert", shard: 0, fields: { value: 100, ts: T0, h: hashOf(keyConfig), o: K } },
    ]);
  });

  test("its own block: full under the named config, still blocked", () => {
    const block: Override = { blockedUntil: T0 + SECOND };
    const rows = [stored(0, 2, T0 - 5, named, { o: block })];
    expect(resetOps(rows, { name: "llm", key: "a", config: named }, T0)).toEqual([
      { op: "delete", id: "row0", shard: 0 },
      termsWrite(named),
      { op: "insert", shard: 0, fields: { value: 10, ts: T0, h: hashOf(named), o: block } },
    ]);
  });

  test("its own override but no config: an error naming config", () => {
    const rows = [stored(0, 3, T0 - 5, named, { o: K })];
    expect(errorData(() => resetOps(rows, { name: "llm", key: "a" }, T0))).toEqual({
      kind: "InvalidRateLimit",
      field: "config",
      value: "undefined",
      message: "config = undefined: resetting a key with its own override takes the limit's config, to write its rows full (RateLimiter.reset passes it)",
    });
  });

  test("its own override and a malformed config: the config's error", () => {
    const rows = [stored(0, 3, T0 - 5, named, { o: K })];
    expect(errorData(() => resetOps(rows, { name: "llm", key: "a", config: { kind: TB, rate: 10, period: 0 } }, T0))).toMatchObject({ field: "config.period" });
  });
});

/** Answers a flow's reads from `key` (rows, the terms recorded and the tiers' overrides), recording each read. */
function reader(key: KeyInMemory<string>) {
  const reads: RowQuery[] = [];
  const answer = (q: RowQuery) => (reads.push(q), answerRead(key, q));
  return { reads, answer };
}

/** The terms recorded for each of `configs`, by fingerprint. */
const recorded = (...configs: RateLimitConfig[]) => new Map(configs.map((c) => [hashOf(c), configTerms(c)] as const));

describe("requestFlow over rows carrying a key's override or a lockout", () => {
  const K: Override = { config: keyConfig };
  const request: RateLimitArgs = { name: "llm", key: "a", config: named };

  test("a key's override on its row: decided under it, the row read once, the override's terms once", () => {
    // The row holds 4 of the named config's 10 (written under it); the override carries it over.
    const { reads, answer } = reader({ rows: [stored(0, 4, T0, named, { o: K })], pending: [], known: recorded(named) });
    const out = runPlan(requestFlow<string>({ ...request, count: 4 }, T0, () => 0), answer);
    expect(out.result).toEqual({ ok: true });
    // Its terms changed (the named config's to the override's), so the whole key is read to carry it over.
    expect(reads).toEqual([{ read: "any" }, { read: "terms", hash: hashOf(named) }, { read: "all" }]);
    // Written under the override's terms, still carrying it.
    expect(out.ops).toEqual([termsWrite(keyConfig), { op: "patch", id: "row0", shard: 0, fields: { value: 0, ts: T0, h: hashOf(keyConfig), o: K }, replace: true }]);
  });

  test("with a tier: its override read first, then the row once, though the flow ran under the tier and then the key", () => {
    const key: KeyInMemory<string> = { rows: [stored(0, 4, T0, keyConfig, { o: K })], pending: [], tiers: new Map([["pro", { config: tierConfig }]]) };
    const { reads, answer } = reader(key);
    const out = runPlan(requestFlow<string>({ ...request, tier: "pro", count: 5 }, T0, () => 0), answer);
    // Under the key's 100 a second, the row (written under them) holds 4 plus a ms's 0.1: refused.
    expect(out.result).toEqual({ ok: false, retryAfter: 10 });
    expect(reads).toEqual([{ read: "tier", tier: "pro" }, { read: "any" }]);
  });

  test("a sharded key: the flow re-run under the key's override reads the shards a tier's override would, each once", () => {
    const sharded: RateLimitConfig = { ...named, shards: 4 };
    const merged: RateLimitConfig = { ...keyConfig, shards: 4 };
    // Every shard empty under the override's terms: a request reads a first shard and, refused
    // there, a second, each drawn at random.
    const rows = (o?: Override) => [0, 1, 2, 3].map((shard) => stored(shard, 0, T0, merged, o ? { o } : {}));
    const run = (key: KeyInMemory<string>, tier?: string) => {
      const { reads, answer } = reader(key);
      let drawn = 0;
      const random = () => [0.6, 0.9, 0.1, 0.4][drawn++ % 4]!;
      const out = runPlan(requestFlow<string>({ ...request, config: sharded, ...(tier ? { tier } : {}) }, T0, random), answer);
      return { out, reads, drawn };
    };
    // The key's own override, found on the first row read; the same override as a tier's, known
    // before any row is read.
    const own = run({ rows: rows(K), pending: [] });
    const asTier = run({ rows: rows(), pending: [], tiers: new Map([["pro", K]]) }, "pro");
    expect(asTier.reads[0]).toEqual({ read: "tier", tier: "pro" });
    const shardReads = asTier.reads.slice(1);
    expect(shardReads.length).toBe(2);
    expect(own.reads).toEqual(shardReads);
    expect(own.out.result).toEqual(asTier.out.result);
    expect(own.out.result.ok).toBe(false);
    // The draws were replayed, not drawn again.
    expect(own.drawn).toBe(asTier.drawn);
  });

  test("rows carrying two different overrides, read one by one, are corrupt: an error, never a decision", () => {
    const sharded: RateLimitConfig = { ...named, shards: 2 };
    const merged: RateLimitConfig = { ...keyConfig, shards: 2 };
    // Shard 0 empty under the key's override, so the request reads shard 1 too.
    const rows = [stored(0, 0, T0, merged, { o: K }), stored(1, 50, T0, merged, { o: { blockedUntil: T0 + 1 } })];
    expect(errorData(() => runPlan(requestFlow<string>({ ...request, config: sharded }, T0, () => 0), reader({ rows, pending: [] }).answer))).toMatchObject({
      field: "override",
    });
  });

  test("rows carrying two different overrides, read together (a change of terms reads the whole key), are corrupt too", () => {
    const sharded: RateLimitConfig = { ...named, shards: 2 };
    const rows = [stored(0, 4, T0, sharded, { o: K }), stored(1, 4, T0, sharded, { o: { blockedUntil: T0 + 1 } })];
    expect(errorData(() => runPlan(requestFlow<string>({ ...request, config: sharded, count: 0 }, T0, () => 0), reader({ rows, pending: [], known: recorded(sharded) }).answer))).toMatchObject({
      field: "override",
    });
  });

  test("a key's block on its row: refused for the whole ms to its end, writing nothing", () => {
    const block: Override = { blockedUntil: T0 + 1500.5 };
    const { reads, answer } = reader({ rows: [stored(0, 10, T0, named, { o: block })], pending: [], known: recorded(named) });
    const out = runPlan(requestFlow<string>(request, T0, () => 0), answer);
    expect(out.result).toEqual({ ok: false, retryAfter: 1501 });
    expect(out.ops).toEqual([]);
    expect(reads).toEqual([{ read: "any" }]);
  });

  test("a key's block and its tier's later one: refused until the tier's ends, and admitted then", () => {
    const key = (now: number) => reader({ rows: [stored(0, 10, now, named, { o: { blockedUntil: T0 + 500 } })], pending: [], tiers: new Map([["pro", { blockedUntil: T0 + 700 }]]) });
    const args = { ...request, tier: "pro" };
    expect(runPlan(requestFlow<string>(args, T0, () => 0), key(T0).answer).result).toEqual({ ok: false, retryAfter: 700 });
    expect(runPlan(requestFlow<string>(args, T0 + 699, () => 0), key(T0).answer).result).toEqual({ ok: false, retryAfter: 1 });
    expect(runPlan(requestFlow<string>(args, T0 + 700, () => 0), key(T0).answer).result).toEqual({ ok: true });
  });

  // A block's refusal writes nothing, not even the carry-over of rows written under other terms
  // than those in force (here the named config's, under a tier's config), which a refused plan
  // otherwise writes (it was a write, and a conflict, on a blocked key's first request).
  test("a block's refusal writes nothing, even over rows of other terms", () => {
    const key: KeyInMemory<string> = { rows: [stored(0, 4, T0, named, { o: { blockedUntil: T0 + 500 } })], pending: [], tiers: new Map([["pro", { config: tierConfig }]]) };
    const out = runPlan(requestFlow<string>({ ...request, tier: "pro" }, T0, () => 0), reader(key).answer);
    expect(out.result).toEqual({ ok: false, retryAfter: 500 });
    expect(out.ops).toEqual([]);
  });

  test("a block shorter than the plan's own wait: the plan's wait", () => {
    const block: Override = { blockedUntil: T0 + 100 };
    // Empty at T0: a token of the named 10 a second comes in 100 ms, 5 in 500 ms.
    const out = runPlan(requestFlow<string>({ ...request, count: 5 }, T0, () => 0), reader({ rows: [stored(0, 0, T0, named, { o: block })], pending: [] }).answer);
    expect(out.result).toEqual({ ok: false, retryAfter: 500 });
  });

  test("a block that ended: decided under the named config, the block kept on the row", () => {
    const block: Override = { blockedUntil: T0 };
    const out = runPlan(requestFlow<string>(request, T0, () => 0), reader({ rows: [stored(0, 10, T0, named, { o: block })], pending: [] }).answer);
    expect(out.result).toEqual({ ok: true });
    expect(out.ops).toEqual([{ op: "patch", id: "row0", shard: 0, fields: { value: 9, ts: T0, h: hashOf(named), o: block } }]);
  });

  test("a block in a dry run: admitted, writing nothing, and the wait it would have made reported", () => {
    const dry: RateLimitConfig = { ...named, dryRun: true };
    const block: Override = { blockedUntil: T0 + 2000 };
    const out = runPlan(requestFlow<string>({ ...request, config: dry }, T0, () => 0), reader({ rows: [stored(0, 10, T0, dry, { o: block })], pending: [] }).answer);
    expect(out.result).toEqual({ ok: true });
    expect(out.ops).toEqual([]);
    expect(out.wouldRefuse).toEqual({ retryAfter: 2000 });
  });

  test("a block refuses with a metric event of a refusal (metrics: true), and throws with throws", () => {
    const metered: RateLimitConfig = { ...named, metrics: true };
    const block: Override = { blockedUntil: T0 + 2000 };
    const key = { rows: [stored(0, 10, T0, metered, { o: block })], pending: [] };
    const out = runPlan(requestFlow<string>({ ...request, config: metered, count: 2 }, T0, () => 0), reader(key).answer);
    expect(out.event).toMatchObject({ outcome: "refused", count: 2 });
    const thrown = runPlan(requestFlow<string>({ ...request, config: metered, throws: true }, T0, () => 0), reader(key).answer);
    expect(thrown.raise?.error).toEqual({ kind: "RateLimited", name: "llm", retryAfter: 2000 });
  });

  const locked: RateLimitConfig = { kind: TB, rate: 3, period: 60 * SECOND, lockout: 10 * SECOND };

  test.each([
    // [why, row's value, row's u, now, count, result, the row's u written (null: no write)]
    ["the take that leaves less than a token locks the key from now", 1, undefined, T0, 1, { ok: true }, T0 + 10 * SECOND],
    ["a take leaving a whole token doesn't lock", 2, undefined, T0, 1, { ok: true }, undefined],
    ["a take leaving 0.5 locks (less than 1)", 1.5, undefined, T0, 1, { ok: true }, T0 + 10 * SECOND],
    ["a peek (count 0) of an empty key doesn't lock", 0.5, undefined, T0, 0, { ok: true }, null],
    ["a refusal doesn't lock", 0.5, undefined, T0, 1, { ok: false, retryAfter: 10_000 }, null],
    ["while locked, refused to the lock's end though tokens are back, writing nothing", 3, T0 + 4000, T0, 1, { ok: false, retryAfter: 4000 }, null],
    ["a lock ending in a fraction of a ms: the whole ms", 3, T0 + 0.25, T0, 1, { ok: false, retryAfter: 1 }, null],
    ["at the lock's end it is lifted, and cleared from the row", 3, T0, T0, 1, { ok: true }, undefined],
    ["a lock that ended is cleared by the next take, which may lock again", 1, T0 - 1, T0, 1, { ok: true }, T0 + 10 * SECOND],
    ["the plan's own wait, when longer than the lock", 0, T0 + 1000, T0, 1, { ok: false, retryAfter: 20_000 }, null],
  ] as [string, number, number | undefined, number, number, object, number | undefined | null][])("lockout: %s", (_why, value, u, now, count, result, written) => {
    const row = stored(0, value, T0, locked, u === undefined ? {} : { u });
    const out = runPlan(requestFlow<string>({ ...request, config: locked, count }, now, () => 0), reader({ rows: [row], pending: [] }).answer);
    expect(out.result).toEqual(result);
    if (written === null) {
      expect(out.ops).toEqual([]);
      return;
    }
    expect(out.ops).toHaveLength(1);
    const op = out.ops[0]!;
    if (op.op !== "patch") throw new Error(`expected a patch, got ${JSON.stringify(op)}`);
    expect(op.fields.u).toBe(written);
    // A lock lifted is cleared: the field is written (as undefined), so the patch removes it.
    if (written === undefined && u !== undefined) expect("u" in op.fields).toBe(true);
  });

  test("a new key's first take can lock it: the inserted row carries the lock", () => {
    const one: RateLimitConfig = { kind: TB, rate: 1, period: 60 * SECOND, lockout: 10 * SECOND };
    const out = runPlan(requestFlow<string>({ ...request, config: one }, T0, () => 0), reader({ rows: [], pending: [] }).answer);
    expect(out.result).toEqual({ ok: true });
    expect(out.ops).toContainEqual({ op: "insert", shard: 0, fields: { value: 0, ts: T0, h: hashOf(one), u: T0 + 10 * SECOND } });
  });

  test("a lock and a block: refused until the later", () => {
    const row = stored(0, 3, T0, locked, { u: T0 + 4000, o: { blockedUntil: T0 + 3000 } });
    const out = runPlan(requestFlow<string>({ ...request, config: locked }, T0, () => 0), reader({ rows: [row], pending: [] }).answer);
    expect(out.result).toEqual({ ok: false, retryAfter: 4000 });
    const later = stored(0, 3, T0, locked, { u: T0 + 4000, o: { blockedUntil: T0 + 7000 } });
    expect(runPlan(requestFlow<string>({ ...request, config: locked }, T0, () => 0), reader({ rows: [later], pending: [] }).answer).result).toEqual({ ok: false, retryAfter: 7000 });
  });

  test("a key's override with a lockout locks under it; the named config has none", () => {
    const K2: Override = { config: { kind: TB, rate: 2, period: 60 * SECOND, lockout: 5 * SECOND } };
    const merged: RateLimitConfig = { kind: TB, rate: 2, period: 60 * SECOND, lockout: 5 * SECOND };
    const out = runPlan(requestFlow<string>(request, T0, () => 0), reader({ rows: [stored(0, 1, T0, merged, { o: K2 })], pending: [] }).answer);
    expect(out.result).toEqual({ ok: true });
    expect(out.ops).toEqual([{ op: "patch", id: "row0", shard: 0, fields: { value: 0, ts: T0, h: hashOf(merged), o: K2, u: T0 + 5 * SECOND } }]);
  });

  test("getValue reports the key's override (by) and a lock in force (blockedUntil), the row read once", () => {
    const row = stored(0, 1, T0, keyConfig, { o: K, u: T0 + 3000 });
    const { reads, answer } = reader({ rows: [row], pending: [] });
    const value = runPlan(getValueFlow<string>(request, T0, () => 0), answer);
    expect(value).toMatchObject({ value: 1, by: "key", blockedUntil: T0 + 3000, config: { rate: 100 } });
    expect(reads).toEqual([{ read: "any" }]);
    // At the lock's end: no blockedUntil.
    expect(runPlan(getValueFlow<string>(request, T0 + 3000, () => 0), reader({ rows: [row], pending: [] }).answer)).not.toHaveProperty("blockedUntil");
  });
});

describe("a count the named config can never serve, for a key whose own override could", () => {
  const K: Override = { config: keyConfig };
  // A count above the named config's capacity is checked against the key's own override, which
  // the key's first row carries: requestFlow reads it before refusing (one read, only then).
  test("a key overridden to a capacity of 100 can take 50 at once", () => {
    const out = runPlan(requestFlow<string>({ name: "llm", key: "a", config: named, count: 50 }, T0, () => 0), reader({ rows: [stored(0, 100, T0, keyConfig, { o: K })], pending: [] }).answer);
    expect(out.result).toEqual({ ok: true });
  });

  test("without an override the count is refused, after that one look at the key's first row (and none for a count it can serve)", () => {
    const key = reader({ rows: [stored(0, 10, T0, named)], pending: [] });
    expect(errorData(() => runPlan(requestFlow<string>({ name: "llm", key: "a", config: named, count: 50 }, T0, () => 0), key.answer))).toMatchObject({ kind: "InvalidRateLimit", field: "count" });
    expect(key.reads).toEqual([{ read: "any" }]);
    // A count that is no number at all is refused before any read.
    const none = reader({ rows: [], pending: [] });
    expect(errorData(() => runPlan(requestFlow<string>({ name: "llm", key: "a", config: named, count: -1 }, T0, () => 0), none.answer))).toMatchObject({ field: "count" });
    expect(none.reads).toEqual([]);
  });

  test("the same count through a tier's override is admitted", () => {
    const key: KeyInMemory<string> = { rows: [], pending: [], tiers: new Map([["pro", K]]) };
    const out = runPlan(requestFlow<string>({ name: "llm", key: "a", tier: "pro", config: named, count: 50 }, T0, () => 0), reader(key).answer);
    expect(out.result).toEqual({ ok: true });
  });
});

describe("instants before 1970 (a clock that ran backwards past 0)", () => {
  // Found by DEEP=1 whole-flow properties: "no block" and "no lockout" were instant 0, which a
  // negative `now` is before, so getValue failed and a request was refused until 0.
  test("no block and no lockout: admitted, and getValue reports none", () => {
    const request: RateLimitArgs = { name: "llm", key: "a", config: named };
    const key = { rows: [stored(0, 10, -5000, named)], pending: [] };
    expect(runPlan(requestFlow<string>(request, -3000, () => 0), reader(key).answer).result).toEqual({ ok: true });
    const value = runPlan(getValueFlow<string>(request, -3000, () => 0), reader(key).answer);
    expect(value).not.toHaveProperty("blockedUntil");
    expect(value).not.toHaveProperty("blockedBy");
  });
});


describe("a blocked request of an asynchronous limit with metrics, while others' takes are pending", () => {
  // Found by review: the refusal a stale decision sheds instead carried no `blocked` in its event.
  test("both the decision's event and the refusal it may shed say blocked", () => {
    const hot: RateLimitConfig = { ...named, applyUpdates: "asynchronously", metrics: true };
    const block: Override = { blockedUntil: T0 + 1000 };
    const key: KeyInMemory<string> = { rows: [stored(0, 5, T0 - 10, hot, { o: block })], pending: [{ shard: 0, count: 1, ts: T0 - 5, config: hot }] };
    const out = runPlan(requestFlow<string>({ name: "llm", key: "a", config: hot }, T0, () => 0), reader(key).answer);
    expect(out.result).toEqual({ ok: false, retryAfter: 1000 });
    expect(out.event).toEqual({ outcome: "refused", count: 1, blocked: true });
    expect(out.shed?.event).toEqual({ outcome: "refused", count: 1, blocked: true });
  });
});
