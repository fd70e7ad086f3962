// The override a key's rows carry (src/shared/overrides/overrides.ts, inForce), pure with explicit
// instants: rows read together (a change of terms reads the whole key) that carry two different
// overrides are corrupt, an InvalidRateLimit error naming override, never a decision; rows that
// carry equal overrides (equal field by field, not the same object) are one override in force;
// a key target with no key is stored with no target string.
import { describe, expect, test } from "vitest";
import { errorData } from "./error-data.js";
import { requestFlow, type KeyRow, type RowQuery } from "../src/shared/flow/flow.js";
import { configHash, configTerms } from "../src/shared/shards/layout.js";
import { scopeOf } from "../src/shared/overrides/overrides.js";
import { answerRead, runPlan, type KeyInMemory } from "../src/shared/shapes/rows.js";
import type { Override } from "../src/shared/shapes/override-validators.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const T0 = 1_000_000;
/** The limit as named now, and as its rows were written (another rate: other terms, so the flow reads every row to carry them over). */
const named: RateLimitConfig = { kind: "token bucket", rate: 10, period: 1000, shards: 3 };
const before: RateLimitConfig = { kind: "token bucket", rate: 20, period: 1000, shards: 3 };
const known = new Map([before, named].map((c) => [configHash(c), configTerms(c)] as const));

const row = (shard: number, o: Override): KeyRow<string> => ({ id: `row${shard}`, shard, value: 5, ts: T0, h: configHash(before), o });

/** Runs a request of `count` over `rows`, returning the result or the error's data, and the reads made. */
function run(rows: KeyRow<string>[], count = 1) {
  const key: KeyInMemory<string> = { rows, pending: [], known };
  const reads: RowQuery[] = [];
  const flow = requestFlow<string>({ name: "llm", key: "a", config: named, count }, T0, () => 0);
  try {
    return { out: runPlan(flow, (q) => (reads.push(q), answerRead(key, q))).result, reads };
  } catch (e) {
    return { error: errorData(() => { throw e; }), reads };
  }
}

describe("rows read together, after a change of terms", () => {
  // The first and last rows agree, so only a check of every row read, not of the first or the
  // last against the override in force, finds the middle one.
  test("carrying two different overrides: corrupt, an error naming override, never a decision", () => {
    const { error, reads } = run([row(0, { blockedUntil: T0 + 900 }), row(1, { blockedUntil: T0 + 500 }), row(2, { blockedUntil: T0 + 900 })]);
    expect(reads.some((q) => q.read === "all")).toBe(true);
    expect(error).toEqual({
      kind: "InvalidRateLimit",
      field: "override",
      value: JSON.stringify(JSON.stringify({ blockedUntil: T0 + 500 })),
      message: `override = ${JSON.stringify(JSON.stringify({ blockedUntil: T0 + 500 }))}: the key's rows carry different overrides; set the key's override again to repair them`,
    });
  });

  test("carrying equal overrides (separate objects): one override in force, the block decides", () => {
    const { out, error } = run([row(0, { blockedUntil: T0 + 500 }), row(1, { blockedUntil: T0 + 500 }), row(2, { blockedUntil: T0 + 500 })]);
    expect(error).toBeUndefined();
    expect(out).toEqual({ ok: false, retryAfter: 500 });
  });
});

test("a key target without a key is stored with no target string at all", () => {
  expect(scopeOf({})).toStrictEqual({ scope: "key" });
  expect(scopeOf({ key: "a" })).toStrictEqual({ scope: "key", target: "a" });
});
