// Exact cases for isIdleKey's override and lockout rule, withJitter's edges with injected draws, and the applier's carried override and legacy rows.
import { describe, expect, test } from "vitest";
import { errorData } from "./error-data.js";
import { isIdleKey } from "../src/shared/admin/idle.js";
import { withJitter } from "../src/shared/flow/jitter.js";
import { applyFlow, type KeyRead, type KeyRow, type RowQuery, type Take } from "../src/shared/flow/flow.js";
import { configTerms, resolvePhase, termsHash } from "../src/shared/shards/layout.js";
import { answerRead, runPlan } from "../src/shared/shapes/rows.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const TB = "token bucket" as const;
const T0 = 1_000_000;

/** The fingerprint of a config's terms that compact rows store. */
const hashOf = (config: RateLimitConfig) => termsHash(configTerms(config));

/** A compact row of `config` at shard `shard` holding `value` at `ts`, with what it carries (`o`, `u`). */
function compact(shard: number, value: number, config: RateLimitConfig, carried: Pick<KeyRow<string>, "o" | "u"> = {}, ts = T0): KeyRow<string> {
  return { id: `row${shard}`, shard, value, ts, h: hashOf(config), ...carried };
}

describe("isIdleKey: a key's own override or a lockout in force keeps it", () => {
  // 10 a minute: a row of 10 is full; two shards of 5 each.
  const bucket: RateLimitConfig = { kind: TB, rate: 10, period: 60_000 };
  const sharded: RateLimitConfig = { ...bucket, shards: 2 };
  const idle = (rows: KeyRow<string>[], config: RateLimitConfig, now: number) =>
    isIdleKey({ rows, pending: [] }, config, resolvePhase(config, "n", "k"), now);

  test("a full row, nothing carried: idle (the baseline for the cases below)", () => {
    expect(idle([compact(0, 10, bucket)], bucket, T0)).toBe(true);
  });

  test("a full row carrying the key's own override: kept, the rows are where requests find it", () => {
    expect(idle([compact(0, 10, bucket, { o: { config: bucket } })], bucket, T0)).toBe(false);
    expect(idle([compact(0, 10, bucket, { o: { blockedUntil: T0 - 1 } })], bucket, T0)).toBe(false);
  });

  test.each([
    // [why, u, idle at T0]
    ["locked out 1 ms more: kept", T0 + 1, false],
    ["the lockout ends exactly now: idle", T0, true],
    ["the lockout ended 1 ms ago: idle", T0 - 1, true],
  ])("a full row, %s", (_why, u, expected) => {
    expect(idle([compact(0, 10, bucket, { u })], bucket, T0)).toBe(expected);
  });

  test("a lockout on one shard only (a request writes only the shards it took from): the key is kept", () => {
    const rows = [compact(0, 5, sharded, { u: T0 + 1 }), compact(1, 5, sharded)];
    expect(idle(rows, sharded, T0)).toBe(false);
    // The same key once the lockout has ended: both shards full, idle.
    expect(idle(rows, sharded, T0 + 1)).toBe(true);
  });
});

describe("withJitter: exact waits for given draws, and the edges of what it accepts", () => {
  /** A `random` that always draws `x`. */
  const draws = (x: number) => () => x;
  /** A `random` a call must not use. */
  const never = () => {
    throw new Error("drew a number");
  };

  test.each([
    // [retryAfter, maxJitterMs, draw, wait]
    [100, 9, 0, 100], // the lowest draw: no jitter (a draw of exactly 0 is accepted)
    [100, 9, 1, 109], // a draw of exactly 1 is accepted, as the top value
    [100, 9, 0.5, 105], // 10 whole ms 0..9: floor(0.5 × 10) = 5
    [100, 9, 0.0999, 100], // just below a tenth: still 0
    [100, 9, 0.1, 101], // a tenth: 1
    [100, 0, 1, 100], // maxJitterMs 0 is accepted and adds nothing, whatever the draw
    [100, 0, 0, 100],
    [0.5, 9, 0.3, 4], // retryAfter rounds up to 1, plus floor(0.3 × 10) = 3
  ])("retryAfter %d, maxJitterMs %d, draw %d: waits %d ms", (retryAfter, maxJitterMs, draw, wait) => {
    expect(withJitter(retryAfter, { maxJitterMs, random: draws(draw) })).toBe(wait);
  });

  test.each([undefined, 0, -0])("nothing to wait for (retryAfter %s): 0, with no draw", (retryAfter) => {
    expect(withJitter(retryAfter, { maxJitterMs: 9, random: never })).toBe(0);
    expect(withJitter(retryAfter)).toBe(0);
  });

  test.each([
    // [field, retryAfter, options, value shown, what it must be]
    ["retryAfter", -1, { random: never }, "-1", "must be a finite number of ms ≥ 0"],
    ["retryAfter", -0.001, { random: never }, "-0.001", "must be a finite number of ms ≥ 0"],
    ["maxJitterMs", 100, { maxJitterMs: -1, random: never }, "-1", "must be a finite number of ms ≥ 0"],
    ["maxJitterMs", 100, { maxJitterMs: -0.001, random: never }, "-0.001", "must be a finite number of ms ≥ 0"],
    ["random", 100, { random: draws(-0.001) }, "-0.001", "must return a number from 0 to 1"],
    ["random", 100, { random: draws(1.001) }, "1.001", "must return a number from 0 to 1"],
  ] as const)("a bad %s (retryAfter %d) is an InvalidRateLimit naming it, its value and the rule", (field, retryAfter, options, value, rule) => {
    expect(errorData(() => withJitter(retryAfter, options))).toEqual({ kind: "InvalidRateLimit", field, value, message: `${field} = ${value}: ${rule}` });
  });
});

describe("applyFlow: the key's own override on every row written, rows of another layout rewritten", () => {
  const config: RateLimitConfig = { kind: TB, rate: 8, period: 8000, shards: 2, applyUpdates: "asynchronously" };
  const h = hashOf(config);

  /** Answers the applier's reads from `rows` (no takes pending, no terms recorded). */
  function answer(rows: KeyRow<string>[]) {
    const key = { rows: [...rows].sort((a, b) => a.shard - b.shard), pending: [], known: new Map<number, string>() };
    return (q: RowQuery): KeyRead<string> => answerRead(key, q);
  }
  const take: Take = { shard: 0, count: 1, ts: T0 };

  test("a key with its own override: the patched row and the inserted one both carry it", () => {
    // The override (on every row of the key) is what a request finds there: the inserted shard 1
    // must carry it too, and the patch restates it.
    const o = { config };
    const ops = runPlan(applyFlow<string>({ name: "n", config }, [take], T0), answer([compact(0, 4, config, { o })]));
    expect(ops).toEqual([
      { op: "terms", hash: h, terms: configTerms(config) },
      { op: "patch", id: "row0", shard: 0, fields: { value: 3, ts: T0, h, o } },
      { op: "insert", shard: 1, fields: { value: 4, ts: T0, h, o } },
    ]);
  });

  test("the override carried on both rows: the shard taken from is patched with it, the other left", () => {
    const o = { blockedUntil: T0 - 1 };
    const ops = runPlan(applyFlow<string>({ name: "n", config }, [take], T0), answer([compact(0, 4, config, { o }), compact(1, 4, config, { o })]));
    expect(ops).toEqual([{ op: "patch", id: "row0", shard: 0, fields: { value: 3, ts: T0, h, o } }]);
  });

  test("rows written by @convex-dev/rate-limiter (no layout recorded): every shard rewritten, not only the one taken from", () => {
    // Without a recorded layout a row is another layout, though nothing it records differs from
    // the current terms: both shards of 4 are rewritten, shard 0 less the 1 taken.
    const legacy = (shard: number): KeyRow<string> => ({ id: `row${shard}`, shard, value: 4, ts: T0 });
    const ops = runPlan(applyFlow<string>({ name: "n", config }, [take], T0), answer([legacy(0), legacy(1)]));
    expect(ops).toEqual([
      { op: "terms", hash: h, terms: configTerms(config) },
      { op: "patch", id: "row0", shard: 0, fields: { value: 3, ts: T0, h }, replace: true },
      { op: "patch", id: "row1", shard: 1, fields: { value: 4, ts: T0, h }, replace: true },
    ]);
  });
});
