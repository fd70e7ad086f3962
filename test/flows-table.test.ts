// The flows' edge rules as tables over an in-memory key with explicit rows, instants and draws:
// credit (which shards, in what order, what it refuses and why), getValue (which shard it reports,
// what it leaves out), the applier (when it rewrites every shard and records the terms),
// keyStatus (the key it peeks under) and withJitter (its default draw and its error messages).
import { afterEach, describe, expect, test, vi } from "vitest";
import { errorData } from "./error-data.js";
import { applyFlow, creditFlow, getValueFlow, type KeyRead, type KeyRow, type RowQuery, type Take } from "../src/shared/flow/flow.js";
import { keyStatus } from "../src/shared/admin/idle.js";
import { withJitter } from "../src/shared/flow/jitter.js";
import { configTerms, resolvePhase, termsHash } from "../src/shared/shards/layout.js";
import { answerRead, runPlan } from "../src/shared/shapes/rows.js";
import type { CreditArgs, RateLimitConfig } from "../src/shared/shapes/validators.js";

const TB = "token bucket" as const;
const T0 = 1_000_000;

/** The fingerprint of a config's terms that compact rows store. */
const hashOf = (config: RateLimitConfig) => termsHash(configTerms(config));
/** The write that records a config's terms for the name. */
const termsWrite = (config: RateLimitConfig) => ({ op: "terms" as const, hash: hashOf(config), terms: configTerms(config) });

/** A stored row of shard `shard` as this package writes it: state and the fingerprint of `config`'s terms. */
function compact(shard: number, value: number, config: RateLimitConfig, ts = T0): KeyRow<string> {
  return { id: `row${shard}`, shard, value, ts, h: hashOf(config) };
}

/** Answers a flow's reads from `rows`, the takes not yet applied and the terms recorded, and records the reads. */
function reader(rows: KeyRow<string>[], takes: Take[] = [], recorded: RateLimitConfig[] = []) {
  const reads: RowQuery[] = [];
  const known = new Map(recorded.map((c) => [hashOf(c), configTerms(c)] as const));
  const key = { rows: [...rows].sort((a, b) => a.shard - b.shard), pending: takes, known };
  const answer = (q: RowQuery): KeyRead<string> => (reads.push(q), answerRead(key, q));
  return { reads, answer };
}

/** Draws that replay `values` in order. */
function draws(...values: number[]): () => number {
  let i = 0;
  return () => {
    if (i >= values.length) throw new Error("drew more than expected");
    return values[i++]!;
  };
}


// Two shards of 5 (rate 10) and, for shares by capacity, of 7 and 6 (rate 13).
const even: RateLimitConfig = { kind: TB, rate: 10, period: 1000, shards: 2 };
const uneven: RateLimitConfig = { kind: TB, rate: 13, period: 1000, shards: 2 };

describe("creditFlow: the shards named, emptiest first, never above capacity", () => {
  test.each([
    // [why, config, values of shards 0 and 1, shards, count, credited, patches as [shard, value]]
    ["the emptier shard first, named last", even, [4, 1], [0, 1], 1, 1, [[1, 2]]],
    ["the emptier shard first, named first", even, [1, 4], [0, 1], 1, 1, [[0, 2]]],
    ["the emptier named first stays first", even, [4, 1], [1, 0], 1, 1, [[1, 2]]],
    ["emptiest by share of capacity: 3 of 7 before 3 of 6", uneven, [3, 3], [1, 0], 1, 1, [[0, 4]]],
    ["what the emptier can't take spills to the next", even, [4, 1], [0, 1], 5, 5, [[1, 5], [0, 5]]],
    ["beyond both capacities: only what fits", even, [4, 1], [0, 1], 7, 5, [[1, 5], [0, 5]]],
    ["shard 0 is a shard: named alone, it alone is credited", even, [1, 1], [0], 2, 2, [[0, 3]]],
  ] as [string, RateLimitConfig, number[], number[], number, number, [number, number][]][])(
    "%s",
    (_why, config, values, shards, count, credited, patches) => {
      const rows = values.map((v, i) => compact(i, v, config));
      const out = runPlan(creditFlow<string>({ name: "n", config, count, shards }, T0), reader(rows).answer);
      expect(out.credited).toBe(credited);
      expect(out.ops).toEqual(
        patches.map(([shard, value]) => ({ op: "patch", id: `row${shard}`, shard, fields: { value, ts: T0, h: hashOf(config) } })),
      );
    },
  );

  test("an unsharded limit reads its row once and credits shard 0, with shards empty or absent", () => {
    const config: RateLimitConfig = { kind: TB, rate: 10, period: 1000 };
    for (const shards of [undefined, []]) {
      const { answer, reads } = reader([compact(0, 6, config)]);
      const args: CreditArgs = { name: "n", config, count: 3, ...(shards ? { shards } : {}) };
      const out = runPlan(creditFlow<string>(args, T0), answer);
      expect(reads).toEqual([{ read: "any" }]);
      expect(out).toEqual({ credited: 3, ops: [{ op: "patch", id: "row0", shard: 0, fields: { value: 9, ts: T0, h: hashOf(config) } }] });
    }
  });

  test("a sharded limit reads only the shards named, each once", () => {
    const { answer, reads } = reader([compact(0, 1, even), compact(1, 1, even)]);
    runPlan(creditFlow<string>({ name: "n", config: even, count: 1, shards: [1] }, T0), answer);
    expect(reads).toEqual([{ read: "shard", shard: 1 }]);
  });

  test("a later shard of another layout migrates the key: the earlier shard is credited as migrated", () => {
    // Shard 0 is written under the current terms (1 of 6), shard 1 under rate 8 (full, 4): reading
    // shard 1 carries the key's 5 over to 3 + 2 of 6 each. Shard 1 is then the emptier; the key
    // ends at the 5 it held plus the 1 credited (3 + 3), never with a stale shard 0 written over its 3.
    const old: RateLimitConfig = { kind: TB, rate: 8, period: 1000, shards: 2 };
    const config: RateLimitConfig = { kind: TB, rate: 12, period: 1000, shards: 2 };
    const out = runPlan(
      creditFlow<string>({ name: "n", config, count: 1, shards: [0, 1] }, T0),
      reader([compact(0, 1, config), compact(1, 4, old)], [], [old]).answer,
    );
    expect(out.credited).toBe(1);
    expect(out.ops).toEqual([
      termsWrite(config),
      { op: "patch", id: "row1", shard: 1, fields: { value: 3, ts: T0, h: hashOf(config) }, replace: true },
      { op: "patch", id: "row0", shard: 0, fields: { value: 3, ts: T0, h: hashOf(config) } },
    ]);
  });

  test.each([
    // [why, config, count, shards, field, value, message]
    ["a count of 0", even, 0, [0], "count", "0", /count = 0: must be a finite number > 0/],
    ["a negative shard", even, 1, [-1], "shards", "-1", /shards = -1: must be a shard of the limit's 2/],
    ["a fractional shard", even, 1, [0.5], "shards", "0.5", /shards = 0.5: must be a shard of the limit's 2/],
    ["shard 2 of 2", even, 1, [2], "shards", "2", /shards = 2: must be a shard of the limit's 2/],
    ["a sharded limit told no shards", even, 1, [], "shards", '"(none)"', /a credit to a sharded limit needs the shards the tokens came from/],
    ["a sharded limit not told shards", even, 1, undefined, "shards", '"(none)"', /pass the limit result's details.shards/],
  ] as [string, RateLimitConfig, number, number[] | undefined, string, string, RegExp][])(
    "refuses %s before any read, naming the field, the value and the rule",
    (_why, config, count, shards, field, value, message) => {
      const args: CreditArgs = { name: "n", config, count, ...(shards ? { shards } : {}) };
      const noReads = () => {
        throw new Error("read");
      };
      const data = errorData(() => runPlan(creditFlow<string>(args, T0), noReads));
      expect(data).toMatchObject({ kind: "InvalidRateLimit", field, value });
      expect((data as { message: string }).message).toMatch(message);
    },
  );
});

describe("getValueFlow: the emptiest shard read, ties to the smallest share, then to the first read", () => {
  // Rate 9 over 2 shards: shard 0's share is 5, shard 1's 4.
  const nine: RateLimitConfig = { kind: TB, rate: 9, period: 1000, shards: 2 };
  test.each([
    // [why, config, values of shards 0 and 1, draws (read order), reported shard]
    ["the emptier, read first: the later one's smaller share doesn't count", nine, [1, 3], [0, 0], 0], // reads 0 then 1
    ["the emptier, read last", nine, [3, 1], [0, 0], 1],
    ["the emptier, read last, though its share is the larger", nine, [1, 2], [0.75, 0], 0], // reads 1 then 0
    ["a tie in tokens: the smaller share, read last", nine, [2, 2], [0, 0], 1],
    ["a tie in tokens: the smaller share, read first", nine, [2, 2], [0.75, 0], 1],
    ["an exact tie (tokens and share) keeps the first read", even, [3, 3], [0.75, 0], 1],
    ["an exact tie keeps the first read, in the other order too", even, [3, 3], [0, 0], 0],
  ] as [string, RateLimitConfig, number[], number[], number][])("%s", (_why, config, values, order, shard) => {
    const rows = values.map((v, i) => compact(i, v, config));
    const out = runPlan(getValueFlow<string>({ name: "n", config, sampleShards: 2 }, T0, draws(...order)), reader(rows).answer);
    expect({ shard: out.shard, value: out.value }).toEqual({ shard, value: values[shard] });
  });

  test("without details, no total; a token bucket's report has no prev field at all", () => {
    const config: RateLimitConfig = { kind: TB, rate: 10, period: 1000 };
    const ask = (details: boolean) =>
      runPlan(getValueFlow<string>({ name: "n", config, details }, T0, draws(0)), reader([compact(0, 4, config)]).answer);
    const plain = { value: 4, ts: T0, shard: 0, config: { kind: TB, rate: 10, period: 1000, capacity: 10, shards: 1 } };
    expect(ask(false)).toStrictEqual(plain);
    // The row was written at the instant read: as if a ms ago, 1,000 writes a second (test/heat.test.ts).
    const heat = { writesPerShard: 1000, samples: 1, mutationMs: 25, maxWritesPerShard: 8, hot: true, recommend: { applyUpdates: "asynchronously", shards: 1 } };
    expect(ask(true)).toStrictEqual({ ...plain, total: { value: 4, capacity: 10, exact: true }, heat });
  });
});

describe("applyFlow: every shard is rewritten, and the terms recorded, exactly when the rules say", () => {
  const config: RateLimitConfig = { kind: TB, rate: 8, period: 8000, shards: 2, applyUpdates: "asynchronously" };
  const run = (cfg: RateLimitConfig, rows: KeyRow<string>[], takes: Take[], recorded: RateLimitConfig[] = []) =>
    runPlan(applyFlow<string>({ name: "n", config: cfg }, takes, T0), reader(rows, [], recorded).answer);
  const patch = (cfg: RateLimitConfig, shard: number, value: number, replace = false) => ({
    op: "patch",
    id: `row${shard}`,
    shard,
    fields: { value, ts: T0, h: hashOf(cfg) },
    ...(replace ? { replace: true } : {}),
  });

  test("uneven shares, rows of the current terms: only the shard taken from is patched", () => {
    // Rate 9 over 2: shares 5 and 4; each row is compared with its own shard's share.
    const nine: RateLimitConfig = { ...config, rate: 9 };
    const ops = run(nine, [compact(0, 5, nine), compact(1, 4, nine)], [{ shard: 0, count: 1, ts: T0 }]);
    expect(ops).toEqual([patch(nine, 0, 4)]);
  });

  test("one take under other terms, one under the current: every shard rewritten, the terms recorded", () => {
    // Capacity 16 (8 a shard) at first: the take under it counts under those terms (settle), and
    // the key's 8 less the 2 taken is laid out again over both shards.
    const old: RateLimitConfig = { ...config, capacity: 16 };
    const takes = [
      { shard: 0, count: 1, ts: T0, config: old },
      { shard: 0, count: 1, ts: T0 },
    ];
    const ops = run(config, [compact(0, 4, config), compact(1, 4, config)], takes);
    expect(ops).toEqual([termsWrite(config), patch(config, 0, 3), patch(config, 1, 3)]);
  });

  test("one row of other terms among current ones: every shard rewritten", () => {
    // Shard 1 holds 3 under rate 6 (3 a shard): the key's 4 + 3, less the 1 taken, over both.
    const old: RateLimitConfig = { ...config, rate: 6 };
    const ops = run(config, [compact(0, 4, config), compact(1, 3, old)], [{ shard: 0, count: 1, ts: T0 }], [old]);
    expect(ops).toEqual([termsWrite(config), patch(config, 0, 3), patch(config, 1, 3, true)]);
  });

  test("a row in full of the current layout beside a compact one: rewritten compact, the terms recorded", () => {
    // An earlier version's row: the layout in full, no fingerprint; it means what the current terms do.
    const full: KeyRow<string> = { id: "row1", shard: 1, value: 4, ts: T0, shards: 2, kind: TB };
    const ops = run(config, [compact(0, 4, config), full], [{ shard: 1, count: 1, ts: T0 }]);
    expect(ops).toEqual([termsWrite(config), patch(config, 1, 3, true)]);
  });

  test.each([2, -1, 0.5])("a row at shard %d, even of the current terms: deleted, every shard rewritten", (stray) => {
    // Corrupt data (no write of ours leaves one): a third row, at no shard of a 2-shard layout. It
    // holds no share of the limit: the two shards keep their 4 each, less the 1 taken from shard 0.
    const rows = [compact(0, 4, config), compact(1, 4, config), { ...compact(2, 4, config), shard: stray }];
    const ops = run(config, rows, [{ shard: 0, count: 1, ts: T0 }]);
    expect(ops).toEqual([termsWrite(config), { op: "delete", id: "row2", shard: stray }, patch(config, 0, 3), patch(config, 1, 4)]);
  });

  test("a missing shard beside a patched one: inserted, the terms recorded", () => {
    const ops = run(config, [compact(0, 4, config)], [{ shard: 0, count: 1, ts: T0 }]);
    expect(ops).toEqual([termsWrite(config), patch(config, 0, 3), { op: "insert", shard: 1, fields: { value: 4, ts: T0, h: hashOf(config) } }]);
  });
});

describe("keyStatus: peeks under the key given", () => {
  // A fixed window without `start`: each key's windows start at a phase of its own.
  const config: RateLimitConfig = { kind: "fixed window", rate: 10, period: 60_000 };

  test("a key's fixed window is its own phase: 3 left, full at the end of the key's window", () => {
    const start = resolvePhase(config, "n", "k") + 1_000 * 60_000; // a window start of the key "k"
    const status = keyStatus("n", "k", { rows: [{ id: "r0", shard: 0, value: 3, ts: start, h: hashOf(config) }], pending: [] }, config, start + 10_000);
    expect(status).toStrictEqual({ key: "k", value: 3, capacity: 10, fullIn: 50_000, idle: false, rows: 1, pending: 0 });
  });

  test("no key: the status has no key field at all", () => {
    const bucket: RateLimitConfig = { kind: TB, rate: 10, period: 60_000 };
    const status = keyStatus("n", undefined, { rows: [compact(0, 10, bucket)], pending: [] }, bucket, T0);
    expect(status).toStrictEqual({ value: 10, capacity: 10, fullIn: 0, idle: true, rows: 1, pending: 0 });
  });
});

describe("withJitter: Math.random by default, and errors that say what is wrong", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  test("without options: draws from Math.random, up to the default second", () => {
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    expect(withJitter(1_500)).toBe(2_000); // floor(0.5 × 1001) = 500
  });

  test.each([
    ["retryAfter", -1, {}, /retryAfter = -1: must be a finite number of ms ≥ 0/],
    ["maxJitterMs", 1_000, { maxJitterMs: -1 }, /maxJitterMs = -1: must be a finite number of ms ≥ 0/],
    ["random", 1_000, { random: () => 1.5 }, /random = 1.5: must return a number from 0 to 1/],
  ] as const)("a bad %s: the message names the rule", (field, retryAfter, options, message) => {
    expect(() => withJitter(retryAfter, options)).toThrow(message);
    expect(errorData(() => withJitter(retryAfter, options))).toMatchObject({ field });
  });
});
