// Pure edges of the metrics counters (addEvent's override and block flags, its guard on an unknown outcome) and of the clean-up's tier reads (cleanupFlow), at explicit instants.
import { describe, expect, test } from "vitest";
import { cleanupFlow, type AddressedRow, type CleanupQuery, type CleanupRead } from "../src/shared/admin/cleanup.js";
import { addEvent, type MetricCounts, type MetricEvent, type MetricOutcome } from "../src/shared/metrics/metrics.js";
import { mergeOverride } from "../src/shared/overrides/overrides.js";
import { configHash, expandUnder, resolvePhase, shardParams } from "../src/shared/shards/layout.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

describe("addEvent: a request decided under an override, or refused by a block, is counted as such", () => {
  // Counts already under way (not zero), so a flag subtracted or added twice shows.
  const before: MetricCounts = { admitted: 4, admittedTokens: 9, reserved: 2, reservedTokens: 5, refused: 3, refusedTokens: 7, overridden: 6, blocked: 1 };
  type Event = Pick<MetricEvent, "outcome" | "count" | "by" | "blocked" | "waited">;
  test.each<{ why: string; event: Event; after: MetricCounts }>([
    {
      why: "admitted under the key's own override: overridden, not blocked",
      event: { outcome: "admitted", count: 3, by: "key" },
      after: { ...before, admitted: 5, admittedTokens: 12, overridden: 7 },
    },
    {
      why: "reserved under its tier's config: overridden, not blocked",
      event: { outcome: "reserved", count: 2, by: "tier", blocked: false },
      after: { ...before, reserved: 3, reservedTokens: 7, overridden: 7 },
    },
    {
      why: "refused by a lockout (no override decided): blocked, not overridden",
      event: { outcome: "refused", count: 2, blocked: true },
      after: { ...before, refused: 4, refusedTokens: 9, blocked: 2 },
    },
    {
      why: "refused by a network's block: both",
      event: { outcome: "refused", count: 1, by: "network", blocked: true },
      after: { ...before, refused: 4, refusedTokens: 8, overridden: 7, blocked: 2 },
    },
    {
      why: "refused by the named config, blocked: false said outright: neither",
      event: { outcome: "refused", count: 5, blocked: false },
      after: { ...before, refused: 4, refusedTokens: 12 },
    },
    {
      why: "admitted by the named config: neither",
      event: { outcome: "admitted", count: 1 },
      after: { ...before, admitted: 5, admittedTokens: 10 },
    },
  ])("$why", ({ event, after }) => {
    expect(addEvent(before, event)).toEqual(after);
  });

  test("an outcome the validator doesn't know is refused loudly, never counted as nothing", () => {
    // The events table's validator (metricOutcome) keeps such an event out; the guard is for a caller that bypasses it.
    expect(() => addEvent(before, { outcome: "lost" as MetricOutcome, count: 1 })).toThrow(new Error('unknown outcome "lost"'));
  });
});

describe("cleanupFlow: the tier overrides are read for keys written under other terms, and only for them", () => {
  const NOW = 1_000_000;
  const named: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000, shards: 2 };
  const pro = mergeOverride(named, { kind: "token bucket", rate: 100, period: 1000 });
  /** Row `shard` of key `key` of limit "m", compact (fingerprinted) under `config`: full a second ago, or one short now. */
  const compact = (key: string, shard: number, config: RateLimitConfig, full = true): AddressedRow<string> => {
    const p = shardParams(config, resolvePhase(config, "m", key), shard);
    return { id: `m/${key}/${shard}`, key, shard, value: full ? p.capacity : p.capacity - 1, ts: full ? NOW - 1000 : NOW, h: configHash(config) };
  };
  /** The same row with its terms written out and no fingerprint, as rows were stored before fingerprints. */
  const spelled = (row: AddressedRow<string>, config: RateLimitConfig): AddressedRow<string> => {
    const { h: _h, ...rest } = expandUnder(row, config, resolvePhase(config, "m", row.key));
    return rest;
  };
  /** Answers the reads from `rows` (one limit "m", in index order) as admin.cleanup does, and records them. */
  function plan(rows: AddressedRow<string>[], tiers: RateLimitConfig[] | undefined) {
    const reads: CleanupQuery[] = [];
    const answer = (q: CleanupQuery): CleanupRead<string> => {
      reads.push(q);
      if (q.read === "page") return { rows: rows.slice(0, q.take), pending: [] };
      if (q.read === "key") return { rows: q.rows ? rows.filter((r) => r.key === q.key) : [], pending: [] };
      return { rows: [], pending: [], ...(tiers === undefined ? {} : { tiers }) };
    };
    return { plan: runPlan(cleanupFlow<string>([{ name: "m", config: named }], undefined, undefined, NOW), answer), reads };
  }

  test("a key under the named config's own terms, one short, is kept without reading the tiers", () => {
    const { plan: p, reads } = plan([compact("a", 0, named, false), compact("a", 1, named)], [pro]);
    expect(p).toEqual({ deletes: [], result: { rowsRead: 2, keysRead: 1, keysDeleted: 0, rowsDeleted: 0, done: true } });
    expect(reads).toEqual([
      { read: "page", name: "m", take: 500 },
      { read: "key", name: "m", key: "a", rows: false },
    ]);
  });

  test("a key with one row fingerprinted under its tier and one spelled out under it, both full, is idle under the tier and deleted", () => {
    const rows = [spelled(compact("a", 0, pro), pro), compact("a", 1, pro)];
    const { plan: p, reads } = plan(rows, [pro]);
    expect(p).toEqual({ deletes: ["m/a/0", "m/a/1"], result: { rowsRead: 2, keysRead: 1, keysDeleted: 1, rowsDeleted: 2, done: true } });
    expect(reads).toEqual([
      { read: "page", name: "m", take: 500 },
      { read: "key", name: "m", key: "a", rows: false },
      { read: "tiers", name: "m" },
    ]);
  });

  test("a tiers read answered without configs (no tier) keeps a key under other terms", () => {
    const { plan: p, reads } = plan([compact("a", 0, pro), compact("a", 1, pro)], undefined);
    expect(p).toEqual({ deletes: [], result: { rowsRead: 2, keysRead: 1, keysDeleted: 0, rowsDeleted: 0, done: true } });
    expect(reads.map((q) => q.read)).toEqual(["page", "key", "tiers"]);
  });
});
