// The clean-up's plan (cleanupFlow, src/shared/admin/cleanup.ts) as tables over rows held in memory in
// `name`-index order, driven with runPlan at explicit instants: the exact reads, deletes, result and cursor.
import { ConvexError } from "convex/values";
import { describe, expect, test } from "vitest";
import { cleanupFlow, type AddressedRow, type CleanupCursor, type CleanupPlan, type CleanupQuery, type CleanupRead } from "../src/shared/admin/cleanup.js";
import { configHash, resolvePhase, shardParams } from "../src/shared/shards/layout.js";
import { runPlan } from "../src/shared/shapes/rows.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const NOW = 1_000_000;
const one: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000 };
const two: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000, shards: 2 };

/** A stored row of limit `name`, as the `name` index holds it. */
type Doc = AddressedRow<string> & { name: string };

/**
 * The rows of one key of `name`, written under `config`: `full` ones (stamped a second before
 * NOW), or `used` ones (one token short, stamped NOW). Ids read `name/key/shard` (`-`: no key).
 */
function keyOf(name: string, key: string | undefined, config: RateLimitConfig, state: "full" | "used" = "full"): Doc[] {
  const n = config.shards ?? 1;
  return Array.from({ length: n }, (_, shard) => {
    const p = shardParams(config, resolvePhase(config, name, key), shard);
    return {
      id: `${name}/${key ?? "-"}/${shard}`,
      name,
      ...(key === undefined ? {} : { key }),
      shard,
      value: state === "full" ? p.capacity : p.capacity - 1,
      ts: state === "full" ? NOW - 1000 : NOW,
      shards: n,
      kind: p.kind,
      rate: p.rate,
      period: p.period,
      capacity: p.capacity,
      ...(p.terms === undefined ? {} : { terms: p.terms }),
    };
  });
}

/** Index order of keys: the keyless key first, then keys in string order. */
function compareKeys(a: string | undefined, b: string | undefined): number {
  if (a === b) return 0;
  if (a === undefined) return -1;
  if (b === undefined) return 1;
  return a < b ? -1 : 1;
}

/**
 * Answers the clean-up's reads as admin.cleanup does from the `name` index and `pendingTakes`,
 * from `docs` and the keys in `waiting` (each with one take recorded), and records the reads.
 */
function store(docs: Doc[], waiting: { name: string; key?: string }[] = [], tiers = new Map<string, RateLimitConfig[]>()) {
  const sorted = [...docs].sort((a, b) => a.name.localeCompare(b.name) || compareKeys(a.key, b.key) || a.shard - b.shard);
  const strip = ({ name: _name, ...row }: Doc): AddressedRow<string> => row;
  const reads: CleanupQuery[] = [];
  const answer = (q: CleanupQuery): CleanupRead<string> => {
    reads.push(q);
    switch (q.read) {
      case "page": {
        const after = q.after;
        const rows = sorted.filter((d) => d.name === q.name && (after === undefined || compareKeys(d.key, after.key) > 0));
        return { rows: rows.slice(0, q.take).map(strip), pending: [] };
      }
      case "key": {
        const same = (d: { name: string; key?: string | undefined }) => d.name === q.name && d.key === q.key;
        const rows = q.rows ? sorted.filter(same).map(strip) : [];
        return { rows, pending: waiting.filter(same).slice(0, 1).map(() => ({ shard: 0, count: 1, ts: NOW })) };
      }
      case "tiers":
        return { rows: [], pending: [], tiers: tiers.get(q.name) ?? [] };
      default: {
        const never: never = q;
        throw new Error(`unknown read ${JSON.stringify(never)}`);
      }
    }
  };
  return { reads, answer };
}

const result = (r: Partial<CleanupPlan<string>["result"]>) => ({ rowsRead: 0, keysRead: 0, keysDeleted: 0, rowsDeleted: 0, done: true, ...r });
const ids = (docs: Doc[]) => docs.map((d) => d.id);

type Row = {
  why: string;
  limits: { name: string; config: RateLimitConfig }[];
  docs: Doc[];
  waiting?: { name: string; key?: string }[];
  batchSize?: number;
  cursor?: CleanupCursor;
  reads: CleanupQuery[];
  plan: CleanupPlan<string>;
};

const m = { name: "m", config: one };
const s = { name: "s", config: two };

const rows: Row[] = [
  {
    why: "budget exactly at a key boundary: the page is full, so its last key is re-read whole and the cursor stops after it",
    limits: [s],
    docs: [...keyOf("s", "a", two), ...keyOf("s", "b", two)],
    batchSize: 4,
    reads: [
      { read: "page", name: "s", take: 4 },
      { read: "key", name: "s", key: "a", rows: false },
      { read: "key", name: "s", key: "b", rows: true },
    ],
    plan: {
      deletes: ["s/a/0", "s/a/1", "s/b/0", "s/b/1"],
      result: result({ rowsRead: 4, keysRead: 2, keysDeleted: 2, rowsDeleted: 4, done: false }),
      next: { limit: 0, after: { key: "b" } },
    },
  },
  {
    why: "the next transaction from that cursor finds no key after b: the limit, and the clean-up, are done",
    limits: [s],
    docs: [...keyOf("s", "a", two), ...keyOf("s", "b", two)],
    batchSize: 4,
    cursor: { limit: 0, after: { key: "b" } },
    reads: [{ read: "page", name: "s", after: { key: "b" }, take: 4 }],
    plan: { deletes: [], result: result({}) },
  },
  {
    why: "a full batch stopping inside key b judges b on all its rows (re-read), reading past the budget",
    limits: [s],
    docs: [...keyOf("s", "a", two), ...keyOf("s", "b", two)],
    batchSize: 3,
    reads: [
      { read: "page", name: "s", take: 3 },
      { read: "key", name: "s", key: "a", rows: false },
      { read: "key", name: "s", key: "b", rows: true },
    ],
    plan: {
      deletes: ["s/a/0", "s/a/1", "s/b/0", "s/b/1"],
      result: result({ rowsRead: 4, keysRead: 2, keysDeleted: 2, rowsDeleted: 4, done: false }),
      next: { limit: 0, after: { key: "b" } },
    },
  },
  {
    why: "b's row beyond the page is one token short: b, judged on every row, is kept whole",
    limits: [s],
    docs: [...keyOf("s", "a", two), keyOf("s", "b", two)[0]!, keyOf("s", "b", two, "used")[1]!],
    batchSize: 3,
    reads: [
      { read: "page", name: "s", take: 3 },
      { read: "key", name: "s", key: "a", rows: false },
      { read: "key", name: "s", key: "b", rows: true },
    ],
    plan: {
      deletes: ["s/a/0", "s/a/1"],
      result: result({ rowsRead: 4, keysRead: 2, keysDeleted: 1, rowsDeleted: 2, done: false }),
      next: { limit: 0, after: { key: "b" } },
    },
  },
  {
    why: "a partial page ends limit m; the cursor goes on with limit s and what is left of the budget (4 - 2)",
    limits: [m, s],
    docs: [...keyOf("m", "a", one), ...keyOf("m", "b", one), ...keyOf("s", "c", two)],
    batchSize: 4,
    reads: [
      { read: "page", name: "m", take: 4 },
      { read: "key", name: "m", key: "a", rows: false },
      { read: "key", name: "m", key: "b", rows: false },
      { read: "page", name: "s", take: 2 },
      { read: "key", name: "s", key: "c", rows: true },
    ],
    plan: {
      deletes: ["m/a/0", "m/b/0", "s/c/0", "s/c/1"],
      result: result({ rowsRead: 4, keysRead: 3, keysDeleted: 3, rowsDeleted: 4, done: false }),
      next: { limit: 1, after: { key: "c" } },
    },
  },
  {
    why: "a cursor at the second limit reads only that limit, from its first key",
    limits: [m, s],
    docs: [...keyOf("m", "a", one), ...keyOf("s", "c", two)],
    batchSize: 10,
    cursor: { limit: 1 },
    reads: [
      { read: "page", name: "s", take: 10 },
      { read: "key", name: "s", key: "c", rows: false },
    ],
    plan: { deletes: ["s/c/0", "s/c/1"], result: result({ rowsRead: 2, keysRead: 1, keysDeleted: 1, rowsDeleted: 2 }) },
  },
  {
    why: "the keyless key comes first in index order; last on a full page, it leaves the cursor at after {} (no key)",
    limits: [m],
    docs: [...keyOf("m", "a", one), ...keyOf("m", undefined, one)],
    batchSize: 1,
    reads: [
      { read: "page", name: "m", take: 1 },
      { read: "key", name: "m", key: undefined, rows: true },
    ],
    plan: {
      deletes: ["m/-/0"],
      result: result({ rowsRead: 1, keysRead: 1, keysDeleted: 1, rowsDeleted: 1, done: false }),
      next: { limit: 0, after: {} },
    },
  },
  {
    why: "from after {} the page starts past the keyless key, at the first string key (default batch: 500)",
    limits: [m],
    docs: [...keyOf("m", "a", one), ...keyOf("m", undefined, one)],
    cursor: { limit: 0, after: {} },
    reads: [
      { read: "page", name: "m", after: {}, take: 500 },
      { read: "key", name: "m", key: "a", rows: false },
    ],
    plan: { deletes: ["m/a/0"], result: result({ rowsRead: 1, keysRead: 1, keysDeleted: 1, rowsDeleted: 1 }) },
  },
  {
    why: "a full key with a take waiting for the applier is kept: the take would fold differently into a missing row",
    limits: [m],
    docs: [...keyOf("m", "a", one), ...keyOf("m", "b", one)],
    waiting: [{ name: "m", key: "a" }],
    reads: [
      { read: "page", name: "m", take: 500 },
      { read: "key", name: "m", key: "a", rows: false },
      { read: "key", name: "m", key: "b", rows: false },
    ],
    plan: { deletes: ["m/b/0"], result: result({ rowsRead: 2, keysRead: 2, keysDeleted: 1, rowsDeleted: 1 }) },
  },
  {
    why: "full rows of another layout (2 shards, the config now has 1) are kept: the next request carries them over",
    limits: [m],
    docs: [...keyOf("m", "a", two), ...keyOf("m", "b", one)],
    reads: [
      { read: "page", name: "m", take: 500 },
      { read: "key", name: "m", key: "a", rows: false },
      { read: "key", name: "m", key: "b", rows: false },
    ],
    plan: { deletes: ["m/b/0"], result: result({ rowsRead: 3, keysRead: 2, keysDeleted: 1, rowsDeleted: 1 }) },
  },
  {
    why: "a full row written under another rate (20 a second) is kept, like any other layout",
    limits: [m],
    docs: keyOf("m", "a", { ...one, rate: 20 }),
    reads: [
      { read: "page", name: "m", take: 500 },
      { read: "key", name: "m", key: "a", rows: false },
    ],
    plan: { deletes: [], result: result({ rowsRead: 1, keysRead: 1 }) },
  },
  {
    why: "rows of a name not in `limits` are never read",
    limits: [m],
    docs: [...keyOf("m", "a", one), ...keyOf("other", "a", one)],
    reads: [
      { read: "page", name: "m", take: 500 },
      { read: "key", name: "m", key: "a", rows: false },
    ],
    plan: { deletes: ["m/a/0"], result: result({ rowsRead: 1, keysRead: 1, keysDeleted: 1, rowsDeleted: 1 }) },
  },
  {
    why: "a cursor past the last limit is done without a read",
    limits: [m],
    docs: keyOf("m", "a", one),
    cursor: { limit: 1 },
    reads: [],
    plan: { deletes: [], result: result({}) },
  },
  {
    why: "batchSize 4000 is the most allowed: one page of 4000",
    limits: [m],
    docs: keyOf("m", "a", one),
    batchSize: 4000,
    reads: [
      { read: "page", name: "m", take: 4000 },
      { read: "key", name: "m", key: "a", rows: false },
    ],
    plan: { deletes: ["m/a/0"], result: result({ rowsRead: 1, keysRead: 1, keysDeleted: 1, rowsDeleted: 1 }) },
  },
];

describe("cleanupFlow: reads, deletes and cursor", () => {
  test.each(rows)("$why", ({ limits, docs, waiting, batchSize, cursor, reads, plan }) => {
    const at = store(docs, waiting);
    const out = runPlan(cleanupFlow<string>(limits, batchSize, cursor, NOW), at.answer);
    expect(out).toStrictEqual(plan);
    expect(at.reads).toEqual(reads);
  });

  test("run transaction after transaction, a batch of 3 deletes every idle key and keeps the rest", () => {
    const docs = [...keyOf("m", undefined, one), ...keyOf("m", "a", one, "used"), ...keyOf("s", "a", two), ...keyOf("s", "b", two)];
    let live = docs;
    let cursor: CleanupCursor | undefined;
    let runs = 0;
    for (;;) {
      runs += 1;
      const out = runPlan(cleanupFlow<string>([m, s], 3, cursor, NOW), store(live).answer);
      live = live.filter((d) => !out.deletes.includes(d.id));
      if (out.result.done) break;
      cursor = out.next;
    }
    expect(ids(live)).toEqual(["m/a/0"]);
    // First: m's two keys, then s's first row with a re-read of key a (4 rows); second: s after a.
    expect(runs).toBe(2);
  });
});

/** The `InvalidRateLimit` error data the flow throws, and the reads it made first. */
function failure(limits: Row["limits"], batchSize: number | undefined) {
  const at = store(keyOf("m", "a", one));
  try {
    runPlan(cleanupFlow<string>(limits, batchSize, undefined, NOW), at.answer);
  } catch (error) {
    if (!(error instanceof ConvexError)) throw error;
    return { data: error.data as { kind: string; field: string }, reads: at.reads };
  }
  throw new Error("expected an error, but the flow succeeded");
}

describe("cleanupFlow: bad arguments fail before any read", () => {
  test.each([
    { batchSize: 0, why: "a batch must read at least one row" },
    { batchSize: 4001, why: "one more than MAX_CLEANUP_BATCH" },
    { batchSize: 1.5, why: "rows come whole" },
    { batchSize: NaN, why: "NaN compares false with every bound" },
    { batchSize: -1, why: "negative" },
    { batchSize: Infinity, why: "not a whole number" },
  ])("batchSize $batchSize: $why", ({ batchSize }) => {
    const { data, reads } = failure([m], batchSize);
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field: "batchSize" });
    expect(data).toMatchObject({ message: expect.stringMatching(/must be a whole number from 1 to 4000/) as string });
    expect(reads).toEqual([]);
  });

  test.each([
    { limits: [{ name: "", config: one }], field: "name", why: "an empty name" },
    { limits: [m, { name: "x".repeat(1025), config: one }], field: "name", why: "a name too long, even after a good limit" },
    { limits: [m, { name: "z", config: { ...one, rate: 0 } }], field: "config.rate", why: "a zero rate is no config" },
    { limits: [{ name: "z", config: { ...one, period: 0.5 } }], field: "config.period", why: "a period under 1 ms" },
  ])("$why: names $field", ({ limits, field }) => {
    const { data, reads } = failure(limits, undefined);
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field });
    expect(reads).toEqual([]);
  });
});

describe("keys written under a tier's override", () => {
  const pro: RateLimitConfig = { kind: "token bucket", rate: 100, period: 1000 };
  /** One compact row of key `key` (as requests write them: a fingerprint) under `config`: full a second ago, or one short now. */
  const compact = (key: string, config: RateLimitConfig, full = true): Doc => {
    const p = shardParams(config, resolvePhase(config, "m", key), 0);
    return { id: `m/${key}/0`, name: "m", key, shard: 0, value: full ? p.capacity : p.capacity - 1, ts: full ? NOW - 1000 : NOW, h: configHash(config) };
  };

  test("a key full under its tier's config is idle; one short of it, or under terms of no tier, is kept; the tiers are read once, only when needed", () => {
    const { reads, answer } = store(
      [compact("a", one), compact("b", pro), compact("c", pro, false), compact("d", { ...pro, rate: 7 }), compact("e", pro)],
      [],
      new Map([["m", [pro]]]),
    );
    const plan = runPlan(cleanupFlow<string>([m], undefined, undefined, NOW), answer);
    expect(plan.deletes).toEqual(["m/a/0", "m/b/0", "m/e/0"]);
    expect(reads.filter((q) => q.read === "tiers")).toEqual([{ read: "tiers", name: "m" }]);
    // Key a (the named config's) was judged before any tier was read.
    expect(reads.findIndex((q) => q.read === "tiers")).toBeGreaterThan(reads.findIndex((q) => q.read === "key" && q.key === "a"));
  });

  test("with no tier overrides, a key under other terms is kept, as before", () => {
    const { answer } = store([compact("b", pro)]);
    expect(runPlan(cleanupFlow<string>([m], undefined, undefined, NOW), answer).deletes).toEqual([]);
  });
});
