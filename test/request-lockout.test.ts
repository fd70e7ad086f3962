// A lockout as requestFlow writes it (src/shared/flow/request.ts), pure with explicit instants: the take of a key's last whole token writes the lock (its end, `u`) with the take; a take leaving a whole token, a limit without lockout, and a peek write none.
import { describe, expect, test } from "vitest";
import { requestFlow } from "../src/shared/flow/request.js";
import { answerRead, runPlan, type KeyRow, type RowOp } from "../src/shared/shapes/rows.js";
import type { RateLimitArgs, RateLimitConfig } from "../src/shared/shapes/validators.js";

const T0 = 1_000_000;
const LOCKOUT = 60_000;
const plain: RateLimitConfig = { kind: "token bucket", rate: 2, period: 2000 };
const locking: RateLimitConfig = { ...plain, lockout: LOCKOUT };

/** The ops deciding `args` at T0 writes, over a key whose one row holds `value` tokens at T0. */
function opsOf(args: RateLimitArgs, value: number): RowOp<string>[] {
  const rows: KeyRow<string>[] = [{ id: "r", shard: 0, value, ts: T0, shards: 1, kind: "token bucket" }];
  return runPlan(requestFlow<string>(args, T0, () => 0), (q) => answerRead({ rows, pending: [] }, q)).ops;
}
/** The row patch's fields among `ops`, if any. */
const patched = (ops: RowOp<string>[]) => ops.flatMap((o) => (o.op === "patch" ? [o.fields] : []));

describe("lockout", () => {
  test.each([
    // [why, config, count, tokens held, the fields patched]
    ["the last whole token taken (1 → 0): locked for LOCKOUT from now, written with the take", locking, 1, 1, [{ u: T0 + LOCKOUT, value: 0 }]],
    ["a take leaving a whole token (2 → 1): no lock", locking, 1, 2, [{ value: 1 }]],
    ["no lockout configured: the last token taken writes no lock", plain, 1, 1, [{ value: 0 }]],
    ["a peek holding under a token: writes nothing, locks nothing", locking, 0, 0.5, []],
  ] as [string, RateLimitConfig, number, number, Record<string, unknown>[]][])("%s", (_why, config, count, value, fields) => {
    const got = patched(opsOf({ name: "n", config, count }, value));
    expect(got.map((f) => ({ value: f.value, ...("u" in f ? { u: f.u } : {}) }))).toStrictEqual(fields);
  });
});
