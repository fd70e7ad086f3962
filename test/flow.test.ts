// The key-level flows (src/shared/flow/flow.ts): the exact reads and writes of a request and the exact
// report of getValue, as tables over an in-memory key with explicit rows, instants and draws.
import { describe, expect, test } from "vitest";
import { applyFlow, fold, getValueFlow, requestFlow, type KeyRead, type KeyRow, type RowQuery, type Take } from "../src/shared/flow/flow.js";
import { configHash, configTerms, shardParams, termsConfig, termsHash } from "../src/shared/shards/layout.js";
import { sampleDistinct } from "../src/shared/shards/plan.js";
import { answerRead, runPlan } from "../src/shared/shapes/rows.js";
import { scaledTotal } from "../src/shared/flow/details.js";
import type { RateLimitArgs, RateLimitConfig } from "../src/shared/shapes/validators.js";

/** The whole limit's terms a row of `config` records (a token bucket's phase is 0). */
const termsOf = (config: RateLimitConfig) => shardParams(config, 0, 0).terms;
/** The fingerprint of a config's terms that compact rows store. */
const hashOf = (config: RateLimitConfig) => termsHash(configTerms(config));
/** The write that records a config's terms for the name. */
const termsWrite = (config: RateLimitConfig) => ({ op: "terms" as const, hash: hashOf(config), terms: configTerms(config) });


const TB = "token bucket" as const;
const T0 = 1_000_000;

/** Answers a flow's reads from `rows` and the takes not yet applied, as the store does, and records the reads. */
function reader(rows: KeyRow<string>[], takes: Take[] = []) {
  const reads: RowQuery[] = [];
  const key = { rows: [...rows].sort((a, b) => a.shard - b.shard), pending: takes };
  const answer = (q: RowQuery): KeyRead<string> => {
    reads.push(q);
    return answerRead(key, q);
  };
  return { reads, answer };
}

/** A stored row of shard `shard`, written under `shards` shards of a token bucket. */
function row(shard: number, value: number, shards: number, ts = T0): KeyRow<string> {
  return { id: `row${shard}`, shard, value, ts, shards, kind: TB };
}

/** A stored row of shard `shard` as this package writes it now: state and the fingerprint of `config`'s terms. */
function compact(shard: number, value: number, config: RateLimitConfig, ts = T0): KeyRow<string> {
  return { id: `row${shard}`, shard, value, ts, h: hashOf(config) };
}

/** Draws that replay `values` in order. */
function draws(...values: number[]): () => number {
  let i = 0;
  return () => {
    if (i >= values.length) throw new Error("drew more than expected");
    return values[i++]!;
  };
}

function request(config: RateLimitConfig, extra: Partial<RateLimitArgs> = {}): RateLimitArgs {
  return { name: "n", config, ...extra };
}

describe("requestFlow: the exact writes", () => {
  test("a layout that shrinks from 4 shards to 2 deletes rows 2 and 3 and rewrites 0 and 1", () => {
    const config: RateLimitConfig = { kind: TB, rate: 8, period: 1000, shards: 2 };
    // Under 4 shards each holds 2 of 8; all full, so the key holds 8, split 4 + 4 over 2 shards.
    const { answer } = reader([row(0, 2, 4), row(1, 2, 4), row(2, 2, 4), row(3, 2, 4)]);
    const out = runPlan(requestFlow<string>(request(config), T0, draws(0, 0)), answer);
    expect(out.result.ok).toBe(true);
    expect(out.ops.filter((o) => o.op === "delete")).toEqual([
      { op: "delete", id: "row2", shard: 2 },
      { op: "delete", id: "row3", shard: 3 },
    ]);
    const patches = out.ops.filter((o) => o.op === "patch");
    expect(patches.map((o) => o.shard).sort()).toEqual([0, 1]);
    // One token taken from shard 0; nothing gained or lost overall.
    const total = patches.reduce((sum, o) => sum + (o.op === "patch" ? o.fields.value : 0), 0);
    expect(total).toBe(7);
    for (const o of patches) expect(o.op === "patch" && o.fields.h).toBe(termsHash(configTerms(config)));
  });

  test("a layout change deletes a row at a negative shard too (none we write): it is no shard of any layout", () => {
    const config: RateLimitConfig = { kind: TB, rate: 8, period: 1000, shards: 2 };
    const stray = { ...row(3, 2, 4), id: "stray", shard: -1 };
    const { answer } = reader([stray, row(0, 2, 4), row(1, 2, 4), row(2, 2, 4), row(3, 2, 4)]);
    const out = runPlan(requestFlow<string>(request(config), T0, draws(0, 0)), answer);
    expect(out.ops.filter((o) => o.op === "delete").map((o) => o.shard)).toEqual([-1, 2, 3]);
  });

  test("a peek (count 0) after a layout change reads every row but writes nothing", () => {
    const config: RateLimitConfig = { kind: TB, rate: 8, period: 1000, shards: 2 };
    const { answer, reads } = reader([row(0, 2, 4), row(1, 2, 4), row(2, 2, 4), row(3, 2, 4)]);
    const out = runPlan(requestFlow<string>(request(config, { count: 0 }), T0, draws(0, 0)), answer);
    expect(out.ops).toEqual([]);
    expect(reads).toContainEqual({ read: "all" });
  });

  test("a key's first write creates every shard: the one taken from, and full ones", () => {
    const config: RateLimitConfig = { kind: TB, rate: 10, period: 1000, shards: 3 };
    const { answer, reads } = reader([]);
    // Draws 0.5 and 0: first pick shard 1 (comfortable: 3 of 3... 4 - 1 = 3 ≥ 1), second pick unused.
    const out = runPlan(requestFlow<string>(request(config), T0, draws(0.5, 0)), answer);
    expect(reads).toEqual([{ read: "shard", shard: 1 }, { read: "any" }]);
    // Rows store their state and the fingerprint of the terms, which the name records once.
    expect(out.ops).toEqual([
      termsWrite(config),
      { op: "insert", shard: 1, fields: { value: 2, ts: T0, h: hashOf(config) } },
      { op: "insert", shard: 0, fields: { value: 4, ts: T0, h: hashOf(config) } },
      { op: "insert", shard: 2, fields: { value: 3, ts: T0, h: hashOf(config) } },
    ]);
  });

  test("a refused request writes nothing to a key of the current layout", () => {
    const config: RateLimitConfig = { kind: TB, rate: 2, period: 1000 };
    const { answer } = reader([row(0, 0, 1)]);
    const out = runPlan(requestFlow<string>(request(config), T0, draws(0, 0)), answer);
    expect(out.result).toEqual({ ok: false, retryAfter: 500 });
    expect(out.ops).toEqual([]);
  });

  test("a sharded key's comfortable shard: one read of that shard, one patch", () => {
    const config: RateLimitConfig = { kind: TB, rate: 10, period: 1000, shards: 2 };
    const { answer, reads } = reader([compact(0, 5, config), compact(1, 5, config)]);
    const out = runPlan(requestFlow<string>(request(config), T0, draws(0.5, 0)), answer);
    expect(reads).toEqual([{ read: "shard", shard: 1 }]);
    expect(out.ops).toEqual([{ op: "patch", id: "row1", shard: 1, fields: { value: 4, ts: T0, h: hashOf(config) } }]);
  });

  test("an existing row is patched in place, one read, nothing else written", () => {
    const config: RateLimitConfig = { kind: TB, rate: 2, period: 1000 };
    const { answer, reads } = reader([compact(0, 2, config)]);
    const out = runPlan(requestFlow<string>(request(config), T0, draws(0, 0)), answer);
    expect(reads).toEqual([{ read: "any" }]);
    expect(out.ops).toEqual([{ op: "patch", id: "row0", shard: 0, fields: { value: 1, ts: T0, h: hashOf(config) } }]);
  });

  test("a row an earlier version wrote in full is rewritten compact, and its terms recorded", () => {
    const config: RateLimitConfig = { kind: TB, rate: 2, period: 1000 };
    const full = { ...row(0, 2, 1), rate: 2, period: 1000, capacity: 2, terms: termsOf(config)! };
    const { answer, reads } = reader([full]);
    const out = runPlan(requestFlow<string>(request(config), T0, draws(0, 0)), answer);
    expect(reads).toEqual([{ read: "any" }]);
    expect(out.ops).toEqual([termsWrite(config), { op: "patch", id: "row0", shard: 0, fields: { value: 1, ts: T0, h: hashOf(config) }, replace: true }]);
  });

  test("a compact row of other terms is carried over from the terms its name recorded (one read)", () => {
    const before: RateLimitConfig = { kind: TB, rate: 4, period: 1000 };
    const after: RateLimitConfig = { ...before, capacity: 2 };
    const reads: RowQuery[] = [];
    const key = { rows: [compact(0, 3, before)], pending: [], known: new Map([[hashOf(before), configTerms(before)]]) };
    const answer = (q: RowQuery) => (reads.push(q), answerRead(key, q));
    const out = runPlan(requestFlow<string>(request(after), T0, draws(0, 0)), answer);
    // 3 held, clamped to the new capacity 2, one taken: 1 left.
    expect(out.ops).toEqual([termsWrite(after), { op: "patch", id: "row0", shard: 0, fields: { value: 1, ts: T0, h: hashOf(after) }, replace: true }]);
    expect(reads).toEqual([{ read: "any" }, { read: "terms", hash: hashOf(before) }, { read: "all" }]);
  });

  test("a compact row whose terms are unknown is carried over as a row of unknown layout, never as full", () => {
    const before: RateLimitConfig = { kind: TB, rate: 4, period: 1000 };
    const after: RateLimitConfig = { ...before, rate: 8 };
    const { answer } = reader([compact(0, 0, before)]);
    // Drained at T0, unknown terms: nothing at T0, as for a row @convex-dev/rate-limiter wrote.
    const out = runPlan(requestFlow<string>(request(after), T0, draws(0, 0)), answer);
    expect(out.result.ok).toBe(false);
  });
});

describe("sampleDistinct: the sample follows the draws", () => {
  test.each([
    // [why, n, k, draws, expected]
    ["draw 0 keeps the first shard in place", 5, 1, [0], [0]],
    ["a draw just below 1 picks the last shard", 5, 1, [1 - 2 ** -53], [4]],
    ["draw 0.5 of 5 picks shard 2", 5, 1, [0.5], [2]],
    ["the second pick comes from the shards left: shard 0, swapped to the end", 5, 2, [0.99, 0.99], [4, 0]],
    ["k above n picks every shard", 3, 7, [0, 0, 0], [0, 1, 2]],
  ] as [string, number, number, number[], number[]][])("%s", (_why, n, k, values, expected) => {
    expect(sampleDistinct(n, k, draws(...values))).toEqual(expected);
  });

  test("every shard is sampled equally often over a uniform grid of draws", () => {
    const n = 6;
    const counts = Array.from({ length: n }, () => 0);
    for (let i = 0; i < 600; i++) counts[sampleDistinct(n, 1, () => (i + 0.5) / 600)[0]!]! += 1;
    expect(counts).toEqual(Array.from({ length: n }, () => 100));
  });
});

describe("getValueFlow: the exact report", () => {
  const config: RateLimitConfig = { kind: TB, rate: 10, period: 1000, shards: 2 };
  // Shard 0 holds 1 of its 5, shard 1 all 5 of its 5.
  const rows = [row(0, 1, 2), row(1, 5, 2)];

  test.each([
    // [why, draw, expected shard and value]
    ["draw 0 samples shard 0", 0, { shard: 0, value: 1 }],
    ["draw 0.75 samples shard 1", 0.75, { shard: 1, value: 5 }],
  ] as [string, number, { shard: number; value: number }][])("%s", (_why, draw, expected) => {
    const out = runPlan(getValueFlow<string>({ name: "n", config, details: true }, T0, draws(draw)), reader(rows).answer);
    expect({ shard: out.shard, value: out.value }).toEqual(expected);
    expect(out.total).toEqual({ value: expected.value * 2, capacity: 10, exact: false });
  });

  test("reading every shard reports the emptiest and the exact total", () => {
    const out = runPlan(getValueFlow<string>({ name: "n", config, sampleShards: 2, details: true }, T0, draws(0.75, 0)), reader(rows).answer);
    expect(out).toEqual({
      value: 1,
      ts: T0,
      shard: 0,
      config: { kind: TB, rate: 5, period: 1000, capacity: 5, shards: 1 },
      total: { value: 6, capacity: 10, exact: true },
      // Both rows written at the instant read: as if a ms ago, 1,000 writes a second each, too hot
      // for any shards of this 10-token limit (see test/heat.test.ts).
      heat: { writesPerShard: 1000, samples: 2, mutationMs: 25, maxWritesPerShard: 8, hot: true, recommend: { applyUpdates: "asynchronously", shards: 1 } },
    });
  });
});

describe("asynchronous mode: decisions count pending takes, and stand on a stale snapshot only with a margin", () => {
  const config: RateLimitConfig = { kind: TB, rate: 8, period: 8000, applyUpdates: "asynchronously" };

  test.each([
    // [why, pending takes, count, ok, stands on a stale snapshot]
    ["a full row, one token: far from the limit", [], 1, true, true],
    ["6 taken: 1 left after this one is below a quarter of 8", [{ shard: 0, count: 6, ts: T0 }], 1, true, false],
    ["5 taken: 2 left after this one is exactly a quarter", [{ shard: 0, count: 5, ts: T0 }], 1, true, true],
    ["8 taken: refused, which stands on its own only as a shed refusal (see below)", [{ shard: 0, count: 8, ts: T0 }], 1, false, false],
    ["a take made 4 s ago has refilled 4 tokens since", [{ shard: 0, count: 8, ts: T0 - 4000 }], 2, true, true],
  ] as [string, Take[], number, boolean, boolean][])("%s", (_why, takes, count, ok, safe) => {
    const { answer, reads } = reader([], takes);
    const out = runPlan(requestFlow<string>(request(config, { count }), T0, draws(0, 0)), answer);
    // Unsharded: one read finds the row and every take pending on the key, of whatever layout.
    expect(reads).toEqual([{ read: "all", pending: true }]);
    expect(out.result.ok).toBe(ok);
    expect(out.safeOnStale).toBe(safe);
    // Rows are never written on the hot path: only takes are recorded.
    expect(out.ops).toEqual(ok ? [{ op: "record", take: { shard: 0, count, ts: T0 } }] : []);
  });

  test.each([
    // [why, config, pending takes, count, shed]
    ["6 of 8 taken and others' takes pending: inside the margin, shed until 1 + 2 are back (1000 ms)", config, [{ shard: 0, count: 6, ts: T0 }], 1, { ok: false, retryAfter: 1000 }],
    ["8 taken: the refusal on the snapshot is what is shed", config, [{ shard: 0, count: 8, ts: T0 }], 1, { ok: false, retryAfter: 1000 }],
    ["5 taken: the decision stands on its own, nothing to shed", config, [{ shard: 0, count: 5, ts: T0 }], 1, undefined],
    ["a dry run is decided again exactly, to log what it would refuse", { ...config, dryRun: true }, [{ shard: 0, count: 8, ts: T0 }], 1, undefined],
    ["a transactional limit never sheds", { kind: TB, rate: 8, period: 8000 }, [], 1, undefined],
  ] as [string, RateLimitConfig, Take[], number, unknown][])("shed: %s", (_why, cfg, takes, count, shed) => {
    const rows = cfg.applyUpdates === undefined ? [row(0, 0, 1)] : [];
    const out = runPlan(requestFlow<string>(request(cfg, { count }), T0, draws(0, 0)), reader(rows, takes).answer);
    expect(out.shed?.result).toEqual(shed);
  });

  test("shed: a row with no take pending (the applier has caught up) is decided again exactly, not shed", () => {
    const out = runPlan(requestFlow<string>(request(config), T0, draws(0, 0)), reader([row(0, 2, 1)]).answer);
    expect(out.result.ok).toBe(true);
    expect(out.safeOnStale).toBe(false);
    expect(out.shed).toBeUndefined();
  });

  test("shed: a sharded limit sheds on shards of SHED_SHARD_COUNTS requests' worth or more, as an unsharded one does", () => {
    const sharded: RateLimitConfig = { ...config, rate: 16, shards: 2 };
    const takes = [{ shard: 0, count: 7, ts: T0 }, { shard: 1, count: 7, ts: T0 }];
    const out = runPlan(requestFlow<string>(request(sharded), T0, draws(0, 0)), reader([], takes).answer);
    expect(out.safeOnStale).toBe(false);
    // Each shard of 8 holds 1: refused until one holds 1 plus its margin of 2, 2 s at 1 a second.
    expect(out.shed?.result).toEqual({ ok: false, retryAfter: 2000 });
  });

  test("shed: on smaller shards nothing is shed (one pair near its margin says little of the others)", () => {
    const sharded: RateLimitConfig = { ...config, rate: 16, shards: 2 };
    // Requests of 2 tokens: each shard of 8 holds 4 requests' worth.
    const takes = [{ shard: 0, count: 6, ts: T0 }, { shard: 1, count: 6, ts: T0 }];
    const out = runPlan(requestFlow<string>(request(sharded, { count: 2 }), T0, draws(0, 0)), reader([], takes).answer);
    expect(out.safeOnStale).toBe(false);
    expect(out.shed).toBeUndefined();
  });

  test("a sharded asynchronous limit keeps the pair near empty (its stale reads race for nothing)", () => {
    // 2 shards of 10: shard 0 holds 2 (8 pending), uncomfortable but able to serve; shard 1 is full.
    const sharded: RateLimitConfig = { kind: TB, rate: 20, period: 20_000, shards: 2, applyUpdates: "asynchronously" };
    const out = runPlan(
      requestFlow<string>(request(sharded), T0, draws(0, 0)),
      reader([row(0, 10, 2), row(1, 10, 2)], [{ shard: 0, count: 8, ts: T0 }]).answer,
    );
    expect(out.plan.shards).toEqual([1]);
    expect(out.safeOnStale).toBe(true);
  });

  test("shed: with details, the shed refusal carries the details of what was read", () => {
    const out = runPlan(
      requestFlow<string>(request(config, { details: true }), T0, draws(0, 0)),
      reader([], [{ shard: 0, count: 6, ts: T0 }]).answer,
    );
    expect(out.shed?.result).toEqual({ ok: false, retryAfter: 1000, details: { shards: [0], remaining: 2, capacity: 8, resetAfter: 6000, exact: true } });
  });

  test("reserving into debt is decided on the current state", () => {
    const reserve: RateLimitConfig = { ...config, maxReserved: 8 };
    const { answer } = reader([], [{ shard: 0, count: 8, ts: T0 }]);
    const out = runPlan(requestFlow<string>(request(reserve, { count: 2, reserve: true }), T0, draws(0, 0)), answer);
    expect(out.result).toEqual({ ok: true, retryAfter: 2000 });
    expect(out.safeOnStale).toBe(false);
  });

  test("a transactional config never asks for pending takes", () => {
    const { answer, reads } = reader([row(0, 8, 1)]);
    runPlan(requestFlow<string>(request({ kind: TB, rate: 8, period: 8000 }), T0, draws(0, 0)), answer);
    expect(reads).toEqual([{ read: "any" }]);
  });
});

describe("fold: pending takes applied in order of time, each at its own instant", () => {
  const p = { kind: TB, rate: 10, period: 10_000, capacity: 10, maxReserved: Infinity, phase: 0 } as const;
  test.each([
    // [why, state, takes, expected]
    ["no takes leaves a missing row missing", null, [], null],
    ["a missing row is full when the first take lands", null, [{ shard: 0, count: 3, ts: 5 }], { value: 7, ts: 5 }],
    ["takes out of order are sorted: 3 at t=0, refill 2 by t=2000, take 4", { value: 10, ts: 0 }, [
      { shard: 0, count: 4, ts: 2000 },
      { shard: 0, count: 3, ts: 0 },
    ], { value: 5, ts: 2000 }],
    ["a take older than the row lands at the row's time, gaining nothing", { value: 5, ts: 1000 }, [{ shard: 0, count: 2, ts: 0 }], { value: 3, ts: 1000 }],
    ["a negative take (given back) never lifts a row above capacity", { value: 9, ts: 0 }, [{ shard: 0, count: -3, ts: 0 }], { value: 10, ts: 0 }],
  ] as [string, { value: number; ts: number } | null, Take[], { value: number; ts: number } | null][])("%s", (_why, state, takes, expected) => {
    expect(fold(state, takes, p)).toEqual(expected);
  });
});

describe("applyFlow: the applier's exact writes", () => {
  const config: RateLimitConfig = { kind: TB, rate: 8, period: 8000, shards: 2, applyUpdates: "asynchronously" };

  test("a fresh key gets every shard, the takes folded in", () => {
    const { answer, reads } = reader([]);
    const ops = runPlan(applyFlow<string>({ name: "n", config }, [{ shard: 1, count: 3, ts: T0 }], T0 + 10), answer);
    expect(reads).toEqual([{ read: "all" }]);
    expect(ops).toEqual([
      termsWrite(config),
      { op: "insert", shard: 0, fields: { value: 4, ts: T0 + 10, h: hashOf(config) } },
      { op: "insert", shard: 1, fields: { value: 1, ts: T0, h: hashOf(config) } },
    ]);
  });

  test("only the shards with takes are patched", () => {
    const ops = runPlan(
      applyFlow<string>({ name: "n", config }, [{ shard: 0, count: 1, ts: T0 }], T0),
      reader([compact(0, 4, config), compact(1, 4, config)]).answer,
    );
    expect(ops).toEqual([{ op: "patch", id: "row0", shard: 0, fields: { value: 3, ts: T0, h: hashOf(config) } }]);
  });

  test("a layout that shrank is carried over, the extra rows deleted, and the takes folded", () => {
    const one: RateLimitConfig = { ...config, shards: 1 };
    // Two full shards of 4 under the old layout become one row of 8; then 3 are taken.
    const ops = runPlan(applyFlow<string>({ name: "n", config: one }, [{ shard: 0, count: 3, ts: T0 }], T0), reader([row(0, 4, 2), row(1, 4, 2)]).answer);
    expect(ops).toEqual([
      termsWrite(one),
      { op: "delete", id: "row1", shard: 1 },
      { op: "patch", id: "row0", shard: 0, fields: { value: 5, ts: T0, h: hashOf(one) }, replace: true },
    ]);
  });

  test("a batch of takes under two configs: each folded under its own, the rows written under the newest", () => {
    // Capacity 5 then 20, refilled over a day: 4 of 5 taken, 1 carried over into 20, then 1 taken.
    const small: RateLimitConfig = { kind: TB, rate: 5, period: 86_400_000, capacity: 5, applyUpdates: "asynchronously" };
    const big: RateLimitConfig = { ...small, capacity: 20 };
    const takes = [
      { shard: 0, count: 4, ts: T0, config: small },
      { shard: 0, count: 1, ts: T0, config: big },
    ];
    const ops = runPlan(applyFlow<string>({ name: "n", config: big }, takes, T0), reader([]).answer);
    expect(ops).toEqual([termsWrite(big), { op: "insert", shard: 0, fields: { value: 0, ts: T0, h: hashOf(big) } }]);
  });
});

describe("terms: the whole limit's terms every row records", () => {
  test("name kind, rate, period, capacity, shards and phase, and differ when any of them does", () => {
    const config: RateLimitConfig = { kind: "fixed window", rate: 3, period: 1000, shards: 2 };
    expect(shardParams(config, 250, 0).terms).toBe('["fixed window",3,1000,3,2,250]');
    // Every shard records the same whole-limit terms, though their own shares differ.
    expect(shardParams(config, 250, 1).terms).toBe(shardParams(config, 250, 0).terms);
    // A rate of 3 raised to 4 leaves shard 0's share (2) as it was, but not its terms.
    const four = { ...config, rate: 4 };
    expect(shardParams(four, 250, 0).rate).toBe(shardParams(config, 250, 0).rate);
    expect(shardParams(four, 250, 0).terms).not.toBe(shardParams(config, 250, 0).terms);
    // maxReserved doesn't change what a row means.
    expect(shardParams({ ...config, maxReserved: 5 }, 250, 0).terms).toBe(shardParams(config, 250, 0).terms);
  });
});

describe("scaledTotal: the whole limit's tokens from the shards read", () => {
  test.each([
    // [why, sum, read capacity, capacity, exact, total]
    ["every shard read: their sum, as it stands", 7, 10, 10, true, 7],
    ["some read: scaled by capacity", 3, 5, 20, false, 12],
    ["debt scales too", -1, 5, 20, false, -4],
    ["a sample of zero capacity (reserve-only shards) can't be scaled: its sum", -2, 0, 0, false, -2],
  ] as const)("%s", (_why, sum, readCapacity, capacity, exact, total) => {
    expect(scaledTotal(sum, readCapacity, capacity, exact)).toBe(total);
  });
});

describe("configHash: the fingerprint of a config's terms, remembered for the last terms", () => {
  test("equals termsHash(configTerms(config)) when consecutive configs differ in any one term, or in none", () => {
    const base: RateLimitConfig = { kind: "fixed window", rate: 10, period: 1000, capacity: 12, shards: 2, start: 250 };
    const variants: RateLimitConfig[] = [
      base,
      base,
      { ...base },
      { ...base, kind: "sliding window", capacity: 10 },
      { ...base, kind: "sliding window", capacity: 10, exact: false },
      { ...base, kind: "sliding window", capacity: 10, exact: true, start: undefined },
      { ...base, kind: "sliding window", capacity: 10, start: undefined },
      { ...base, kind: "token bucket", start: undefined },
      { ...base, rate: 11 },
      { ...base, period: 2000 },
      { ...base, capacity: 13 },
      { ...base, capacity: undefined },
      { ...base, capacity: 10 },
      { ...base, shards: 1 },
      { ...base, shards: undefined },
      { ...base, start: 1250 },
      { ...base, start: undefined },
      { ...base, start: 0 },
      { ...base, start: -0 },
      { ...base, maxReserved: 5 },
      { kind: "token bucket", rate: 10, period: 1000 },
      { kind: "token bucket", rate: 10, period: 1000, start: null },
    ];
    // Each variant after each other one: the remembered terms never answer for different ones.
    for (const a of variants) {
      for (const b of variants) {
        expect(configHash(a)).toBe(hashOf(a));
        expect(configHash(b)).toBe(hashOf(b));
      }
    }
    // Terms that differ in a field give different fingerprints; fields that don't change terms don't.
    expect(configHash({ ...base, rate: 11 })).not.toBe(configHash(base));
    expect(configHash({ ...base, maxReserved: 5 })).toBe(configHash(base));
    expect(configHash({ ...base, start: 1250 })).toBe(configHash(base));
    const sliding: RateLimitConfig = { kind: "sliding window", rate: 10, period: 1000 };
    expect(configHash({ ...sliding, exact: false })).not.toBe(configHash(sliding));
    expect(configHash({ ...sliding, exact: true })).toBe(configHash(sliding));
  });
});

describe("termsConfig: the config a name's recorded terms stand for", () => {
  test("reads back what configTerms wrote, start as its phase", () => {
    expect(termsConfig(configTerms({ kind: "token bucket", rate: 10, period: 1000, capacity: 20, shards: 2, maxReserved: 5 }))).toEqual({
      kind: "token bucket",
      rate: 10,
      period: 1000,
      capacity: 20,
      shards: 2,
    });
    expect(termsConfig(configTerms({ kind: "fixed window", rate: 10, period: 1000, start: 1250 }))).toEqual({
      kind: "fixed window",
      rate: 10,
      period: 1000,
      capacity: 10,
      shards: 1,
      start: 250,
    });
    expect(termsConfig(configTerms({ kind: "sliding window", exact: false, rate: 3, period: 60_000, start: 5 }))).toEqual({
      kind: "sliding window",
      exact: false,
      rate: 3,
      period: 60_000,
      capacity: 3,
      shards: 1,
      start: 5,
    });
    // An exact window's terms name its rows' kind, and it has no phase.
    expect(configTerms({ kind: "sliding window", rate: 3, period: 60_000 })).toBe('["exact sliding window",3,60000,3,1,null]');
    expect(termsConfig(configTerms({ kind: "sliding window", rate: 3, period: 60_000 }))).toEqual({ kind: "sliding window", exact: true, rate: 3, period: 60_000, capacity: 3, shards: 1 });
  });

  test("terms an earlier version recorded as \"sliding window\" are the approximate window's", () => {
    expect(termsConfig('["sliding window",3,60000,3,1,null]')).toEqual({ kind: "sliding window", exact: false, rate: 3, period: 60_000, capacity: 3, shards: 1 });
  });

  test.each([
    ["not JSON", "[token bucket"],
    ["not an array", '{"kind":"token bucket"}'],
    ["an object with a length", '{"length":6}'],
    ["five terms", '["token bucket",10,1000,10,1]'],
    ["seven terms", '["token bucket",10,1000,10,1,null,0]'],
    ["an unknown kind", '["leaky bucket",10,1000,10,1,null]'],
    ["a rate in text", '["token bucket","10",1000,10,1,null]'],
    ["a period in text", '["token bucket",10,"1000",10,1,null]'],
    ["a capacity in text", '["token bucket",10,1000,"10",1,null]'],
    ["a shard count in text", '["token bucket",10,1000,10,"1",null]'],
    ["a start in text", '["fixed window",10,1000,10,1,"250"]'],
    ["a rate of 0", '["token bucket",0,1000,10,1,null]'],
    ["more shards than tokens", '["token bucket",2,1000,2,3,null]'],
  ])("is undefined for terms that aren't a valid config's: %s", (_, text) => {
    expect(termsConfig(text)).toBeUndefined();
  });
});

