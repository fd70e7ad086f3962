// Exact cases for a key's view (src/shared/flow/view.ts), the writes of a plan (writes.ts) and asynchronous takes (takes.ts), pure with explicit instants.
import { ConvexError } from "convex/values";
import { describe, expect, test } from "vitest";
import { checkStored, expanded, newView, shardOf, type View } from "../src/shared/flow/view.js";
import { carry, fieldsOf, opsOf } from "../src/shared/flow/writes.js";
import { takesOf } from "../src/shared/flow/takes.js";
import { configHash, configTerms, termsHash } from "../src/shared/shards/layout.js";
import { answerRead, runPlan, type KeyRow, type RowQuery } from "../src/shared/shapes/rows.js";
import type { Plan } from "../src/shared/shards/shard.js";
import type { Take } from "../src/shared/shapes/stored.js";
import type { Override } from "../src/shared/shapes/override-validators.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const T0 = 1_000_000;
const DAY = 86_400_000;
const NAME = "n";
const tb1: RateLimitConfig = { kind: "token bucket", rate: 10, period: DAY, capacity: 10 };
const tb2: RateLimitConfig = { ...tb1, shards: 2 };
const tb3: RateLimitConfig = { ...tb1, shards: 3 };
const async1: RateLimitConfig = { ...tb1, applyUpdates: "asynchronously" };
const async2: RateLimitConfig = { ...tb2, applyUpdates: "asynchronously" };
const async3: RateLimitConfig = { ...tb3, applyUpdates: "asynchronously" };
const approx: RateLimitConfig = { kind: "sliding window", exact: false, rate: 10, period: DAY };
const exact: RateLimitConfig = { kind: "sliding window", rate: 10, period: DAY };

/** A compact row of shard `shard` written under `config` (its fingerprint), with extra fields. */
function rowOf(config: RateLimitConfig, shard: number, value: number, extra: Partial<KeyRow<string>> = {}): KeyRow<string> {
  return { id: `row${shard}`, shard, value, ts: T0, h: configHash(config), ...extra };
}

/** The terms the store recorded for each config's fingerprint. */
function knownOf(...configs: RateLimitConfig[]): Map<number, string> {
  return new Map(configs.map((c) => [termsHash(configTerms(c)), configTerms(c)]));
}

/** Reads shard `shard` into `view` from `rows` and `pending`, recording the reads. */
function read(view: View<string>, shard: number, rows: KeyRow<string>[], pending: Take[] = [], known = new Map<number, string>()) {
  const reads: RowQuery[] = [];
  const key = { rows: [...rows].sort((a, b) => a.shard - b.shard), pending, known };
  const found = runPlan(shardOf(view, shard), (q) => {
    reads.push(q);
    return answerRead(key, q);
  });
  return { found, reads };
}

const viewOf = (config: RateLimitConfig, now = T0) => newView<string>({ name: NAME, config }, now);
const plan = (...writes: { shard: number; value: number; ts?: number }[]): Plan => ({
  ok: true,
  writes: writes.map(({ shard, value, ts }) => ({ shard, state: { value, ts: ts ?? T0 } })),
  shards: writes.map((w) => w.shard),
});

describe("fieldsOf: exactly the fields a row under its terms keeps", () => {
  test("a token bucket writes value, ts and h only", () => {
    expect(fieldsOf({ value: 3, ts: T0 }, tb1, 7)).toStrictEqual({ value: 3, ts: T0, h: 7 });
  });
  test("an approximate sliding window writes prev, 0 when the state has none", () => {
    expect(fieldsOf({ value: 3, ts: T0 }, approx, 7)).toStrictEqual({ value: 3, ts: T0, h: 7, prev: 0 });
    expect(fieldsOf({ value: 3, ts: T0, prev: 2 }, approx, 7)).toStrictEqual({ value: 3, ts: T0, h: 7, prev: 2 });
  });
  test("an exact sliding window writes its log, even an absent one (so a patch drops an old log), never prev", () => {
    const log = new ArrayBuffer(8);
    const withLog = fieldsOf({ value: 3, ts: T0, log, prev: 1 }, exact, 7);
    expect(withLog).toStrictEqual({ value: 3, ts: T0, h: 7, log });
    const without = fieldsOf({ value: 3, ts: T0 }, exact, 7);
    expect(Object.keys(without).sort()).toEqual(["h", "log", "ts", "value"]);
    expect(without.log).toBeUndefined();
  });
});

describe("carry: the override and the lockout every row of the key carries", () => {
  const stored = (u?: number) => ({ shard: 0, value: 1, ts: T0, ...(u === undefined ? {} : { u }) });
  const own: Override = { config: { ...tb1, rate: 3 } };
  test("no override and no lockout adds nothing, not even an undefined field", () => {
    expect(carry({ value: 1, ts: T0, h: 1 }, null, undefined, -Infinity, T0)).toStrictEqual({ value: 1, ts: T0, h: 1 });
    expect(carry({ value: 1, ts: T0, h: 1 }, stored(), undefined, T0 - 1, T0)).toStrictEqual({ value: 1, ts: T0, h: 1 });
  });
  test("the key's own override is written", () => {
    expect(carry({ value: 1, ts: T0, h: 1 }, null, own, -Infinity, T0)).toStrictEqual({ value: 1, ts: T0, h: 1, o: own });
  });
  test("a lockout still in force at now is written; one ending exactly at now is cleared from the row", () => {
    expect(carry({ value: 1, ts: T0, h: 1 }, null, undefined, T0 + 1, T0)).toStrictEqual({ value: 1, ts: T0, h: 1, u: T0 + 1 });
    const ended = carry({ value: 1, ts: T0, h: 1 }, stored(T0), undefined, T0, T0);
    expect(Object.keys(ended).sort()).toEqual(["h", "ts", "u", "value"]);
    expect(ended.u).toBeUndefined();
    const older = carry({ value: 1, ts: T0, h: 1 }, stored(T0 - 5), undefined, -Infinity, T0);
    expect("u" in older && older.u === undefined).toBe(true);
  });
});

describe("opsOf: the ops a plan writes (insert vs patch, terms recorded)", () => {
  test("a key whose rows are all current: patches only, no terms", () => {
    const view = viewOf(tb2);
    const rows = [rowOf(tb2, 0, 5), rowOf(tb2, 1, 6)];
    read(view, 0, rows);
    read(view, 1, rows);
    expect(view.rewrites).toBe(false);
    expect(opsOf(view, plan({ shard: 0, value: 4 }, { shard: 1, value: 5 }), 2)).toStrictEqual([
      { op: "patch", id: "row0", shard: 0, fields: { value: 4, ts: T0, h: configHash(tb2) } },
      { op: "patch", id: "row1", shard: 1, fields: { value: 5, ts: T0, h: configHash(tb2) } },
    ]);
  });
  test("a fresh key refused writes nothing, not its full shards", () => {
    const view = viewOf(tb2);
    read(view, 0, []);
    expect(view.fresh).toBe(true);
    expect(opsOf(view, { ok: false, retryAfter: 5, writes: [], shards: [0] }, 1)).toStrictEqual([]);
  });
  test("a fresh key taken from: the terms, then every shard inserted", () => {
    const view = viewOf(tb2);
    read(view, 1, []);
    expect(opsOf(view, plan({ shard: 1, value: 9 }), 1)).toStrictEqual([
      { op: "terms", hash: configHash(tb2), terms: configTerms(tb2) },
      { op: "insert", shard: 1, fields: { value: 9, ts: T0, h: configHash(tb2) } },
      { op: "insert", shard: 0, fields: { value: 5, ts: T0, h: configHash(tb2) } },
    ]);
  });
  test("a missing shard of a key that has rows: its sibling is read and expanded, not migrated; an insert records the terms", () => {
    const view = viewOf(tb2);
    const rows = [rowOf(tb2, 0, 5)];
    const { reads } = read(view, 1, rows);
    expect(reads).toStrictEqual([{ read: "shard", shard: 1 }, { read: "any" }]);
    expect(view.fresh).toBe(false);
    expect(view.migration).toBeUndefined();
    expect(view.rewrites).toBe(false);
    read(view, 0, rows);
    expect(opsOf(view, plan({ shard: 0, value: 4 }, { shard: 1, value: 9 }), 2)).toStrictEqual([
      { op: "terms", hash: configHash(tb2), terms: configTerms(tb2) },
      { op: "patch", id: "row0", shard: 0, fields: { value: 4, ts: T0, h: configHash(tb2) } },
      { op: "insert", shard: 1, fields: { value: 9, ts: T0, h: configHash(tb2) } },
    ]);
  });
  test("a migration read through a missing shard records the terms even when the plan only patches", () => {
    const view = viewOf(tb2);
    // The key's rows are of a 3-shard layout; shard 1's row is gone, so the view reads its sibling.
    const rows = [rowOf(tb3, 0, 3), rowOf(tb3, 2, 3)];
    read(view, 1, rows, [], knownOf(tb3));
    expect(view.rewrites).toBe(false);
    expect(view.fresh).toBe(false);
    expect(view.migration).toBeDefined();
    const ops = opsOf(view, plan({ shard: 0, value: 4 }), 0);
    expect(ops).toStrictEqual([
      { op: "terms", hash: configHash(tb2), terms: configTerms(tb2) },
      { op: "patch", id: "row0", shard: 0, fields: { value: 4, ts: T0, h: configHash(tb2) }, replace: true },
    ]);
  });
});

describe("checkStored: a corrupt row fails closed, naming state", () => {
  const data = (f: () => void) => {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(ConvexError);
      return (e as ConvexError<{ field: string; value: string; message: string }>).data;
    }
    throw new Error("did not throw");
  };
  test("a value that isn't finite", () => {
    const d = data(() => checkStored({ shard: 2, value: NaN, ts: T0 }));
    expect(d.field).toBe("state");
    expect(d.message).toContain(`shard 2's stored row (value NaN at ${T0}) is corrupt; reset the key to clear it`);
  });
  test("a time that isn't finite, with a finite value", () => {
    const d = data(() => checkStored({ shard: 0, value: 3, ts: Infinity }));
    expect(d.field).toBe("state");
    expect(d.message).toContain("shard 0's stored row (value 3 at Infinity) is corrupt; reset the key to clear it");
  });
  test("a finite row passes", () => {
    expect(() => checkStored({ shard: 0, value: 3, ts: T0 })).not.toThrow();
  });
  test("a current row read on the hot path is checked", () => {
    const view = viewOf(tb2);
    expect(() => read(view, 0, [rowOf(tb2, 0, NaN)])).toThrow(ConvexError);
  });
});

describe("newView", () => {
  test("no override: neither own nor overridden is set", () => {
    const view = viewOf(tb1);
    expect("own" in view).toBe(false);
    expect("overridden" in view).toBe(false);
    expect(view.lockedUntil).toBe(-Infinity);
  });
  test("an own override and an overriding config are recorded", () => {
    const own: Override = { config: { ...tb1, rate: 3 } };
    const view = newView<string>({ name: NAME, config: tb1 }, T0, own, true);
    expect(view.own).toBe(own);
    expect(view.overridden).toBe(true);
  });
});

describe("expanded", () => {
  test("a row whose fingerprint has no recorded terms is kept as it is", () => {
    const row = { id: "r", shard: 0, value: 2, ts: T0, h: 12345 };
    const known = new Map<number, string | undefined>();
    const out = runPlan(expanded(row, { name: NAME, config: tb1, phase: 0, hash: configHash(tb1) }, known), (q) => answerRead({ rows: [], pending: [] }, q));
    expect(out).toBe(row);
    expect(known.get(12345)).toBeUndefined();
    expect(known.has(12345)).toBe(true);
  });
});

describe("shardOf: a key's rows as the flows see them", () => {
  test("unsharded: a row of another layout's shard is a sibling, not the shard's own row", () => {
    const view = viewOf(tb1);
    read(view, 0, [rowOf(tb3, 1, 3), rowOf(tb3, 2, 3)], [], knownOf(tb3));
    expect(view.rewrites).toBe(false);
    expect(view.fresh).toBe(false);
    expect(view.migration).toBeDefined();
  });
  test("asynchronous unsharded: only the shard's own row and takes count; another layout's row is a sibling", () => {
    const view = viewOf(async1);
    read(view, 0, [rowOf(async3, 1, 3)], [], knownOf(async3));
    expect(view.rewrites).toBe(false);
    expect(view.fresh).toBe(false);
  });
  test("asynchronous unsharded: a take on another shard neither folds in nor counts as the shard's latest", () => {
    const own = [{ shard: 0, count: 1, ts: T0 + 5 }, { shard: 0, count: 1, ts: T0 + 3 }];
    const view = viewOf(async1, T0 + 10);
    const { found } = read(view, 0, [rowOf(async1, 0, 5)], [...own, { shard: 1, count: 2, ts: T0 + 8 }]);
    expect(view.migration).toBeUndefined();
    expect(view.rows.get(0)!.taken).toBe(T0 + 5);
    const alone = read(viewOf(async1, T0 + 10), 0, [rowOf(async1, 0, 5)], own).found;
    expect(found.read.state).toStrictEqual(alone.read.state);
    expect(found.read.state!.ts).toBe(T0 + 5);
    expect(view.busy).toBe(true);
  });
  test("asynchronous sharded: busy exactly when the shard has takes pending", () => {
    const rows = [rowOf(async2, 0, 5), rowOf(async2, 1, 5)];
    const idle = viewOf(async2);
    const r = read(idle, 0, rows);
    expect(idle.busy).toBe(false);
    expect(idle.rows.get(0)!.taken).toBe(-Infinity);
    expect(r.found.read.state).toStrictEqual({ value: 5, ts: T0 });
    const busy = viewOf(async2);
    const b = read(busy, 0, rows, [{ shard: 0, count: 1, ts: T0 + 1 }]);
    expect(busy.busy).toBe(true);
    expect(busy.rows.get(0)!.taken).toBe(T0 + 1);
  });
  test("asynchronous sharded, a missing row: the key's takes make it busy; its sibling is read, not fresh", () => {
    const rows = [rowOf(async2, 0, 5)];
    const quiet = viewOf(async2);
    read(quiet, 1, rows);
    expect(quiet.busy).toBe(false);
    expect(quiet.fresh).toBe(false);
    expect(quiet.migration).toBeUndefined();
    const busy = viewOf(async2);
    const { reads } = read(busy, 1, rows, [{ shard: 0, count: 1, ts: T0 + 1 }]);
    expect(reads).toStrictEqual([{ read: "shard", shard: 1, pending: true }, { read: "all", pending: true }]);
    expect(busy.busy).toBe(true);
    expect(busy.fresh).toBe(false);
  });
  test("a migration: busy exactly when the key has takes; each shard's latest take, other shards' takes ignored", () => {
    const rows = [rowOf(async3, 0, 3, { u: T0 + 100 }), rowOf(async3, 1, 3, { u: T0 + 200 }), rowOf(async3, 2, 3, { u: T0 + 50 })];
    const quiet = viewOf(async2);
    read(quiet, 0, rows, [], knownOf(async3));
    expect(quiet.busy).toBe(false);
    expect(quiet.migration!.taken).toStrictEqual([-Infinity, -Infinity]);
    expect(quiet.lockedUntil).toBe(T0 + 200);
    const view = viewOf(async2, T0 + 10);
    // A take on shard 2 is of no shard of two; shard 1's latest is T0 + 7.
    const takes = [{ shard: 1, count: 1, ts: T0 + 7 }, { shard: 1, count: 1, ts: T0 + 4 }, { shard: 2, count: 1, ts: T0 + 9 }];
    const { reads } = read(view, 0, rows, takes, knownOf(async3));
    expect(reads.at(-1)).toStrictEqual({ read: "all", pending: true });
    expect(view.busy).toBe(true);
    expect(view.migration!.taken).toStrictEqual([-Infinity, T0 + 7]);
  });
  test("a migration: a take under other terms comes before every shard's next take", () => {
    const rows = [rowOf(async2, 0, 5), rowOf(async2, 1, 5)];
    const view = viewOf(async2, T0 + 10);
    const takes = [{ shard: 0, count: 1, ts: T0 + 3, config: async3 }, { shard: 1, count: 1, ts: T0 + 6 }];
    read(view, 0, rows, takes, knownOf(async3));
    expect(view.migration!.taken).toStrictEqual([T0 + 3, T0 + 6]);
  });
});

describe("takesOf", () => {
  test("under an override's config a take names it; under the named config it doesn't", () => {
    const rows = [rowOf(async1, 0, 5)];
    const over = newView<string>({ name: NAME, config: async1 }, T0, undefined, true);
    read(over, 0, rows);
    expect(takesOf(over, plan({ shard: 0, value: 3 }))).toStrictEqual([
      { op: "record", take: { shard: 0, count: 2, ts: T0, config: async1 } },
    ]);
    const named = viewOf(async1, T0);
    read(named, 0, rows);
    expect(opsOf(named, plan({ shard: 0, value: 3 }), 2)).toStrictEqual([{ op: "record", take: { shard: 0, count: 2, ts: T0 } }]);
  });
});
