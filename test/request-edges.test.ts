// requestFlow's verdict at its edges (src/shared/flow/request.ts), pure with explicit instants: the take of a key's last whole token writes a lockout's end (`u`) with the take, while a take leaving a whole token, a limit without lockout and a peek write none; an empty tier is bad input; a dry run that admits says nothing would be refused; a refusal that records no metric event is thrown by the component; a calendar quota's result says when its period ends (resetsAt), admitted or refused, and no other kind's does; a stale asynchronous decision inside the margin, while others take, sheds a refusal with its own event and error; under a key's override the details name the config in force, and a malformed stored override is bad input; a sharded limit's details count each shard read as it stands after the take, also across a change of shard count.
import { describe, expect, test } from "vitest";
import { requestFlow, type RequestOutcome } from "../src/shared/flow/request.js";
import { answerRead, runPlan, type KeyRow, type RowOp } from "../src/shared/shapes/rows.js";
import type { RateLimitArgs, RateLimitConfig } from "../src/shared/shapes/validators.js";
import { calendarWindow } from "../src/shared/validation/validate-config.js";
import { errorData } from "./error-data.js";

const T0 = 1_000_000;
const LOCKOUT = 60_000;
const plain: RateLimitConfig = { kind: "token bucket", rate: 2, period: 2000 };
const locking: RateLimitConfig = { ...plain, lockout: LOCKOUT };

/** Decides `args` at T0 over a key whose one row holds `value` tokens at T0. */
function decide(args: RateLimitArgs, value: number): RequestOutcome<string> {
  const rows: KeyRow<string>[] = [{ id: "r", shard: 0, value, ts: T0, shards: 1, kind: "token bucket" }];
  return runPlan(requestFlow<string>(args, T0, () => 0), (q) => answerRead({ rows, pending: [] }, q));
}
const opsOf = (args: RateLimitArgs, value: number): RowOp<string>[] => decide(args, value).ops;
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

describe("requestFlow's verdict", () => {
  test("an empty tier is bad input, naming it", () => {
    expect(errorData(() => decide({ name: "n", tier: "", config: plain }, 2))).toMatchObject({ kind: "InvalidRateLimit", field: "tier", value: '""' });
  });

  test("a dry run that admits: ok, and nothing it would have refused", () => {
    const outcome = decide({ name: "n", config: { ...plain, dryRun: true } }, 2);
    expect(outcome.result).toStrictEqual({ ok: true });
    expect("wouldRefuse" in outcome).toBe(false);
  });

  test("a dry run that would refuse: ok now, and the wait it would have given (1000 ms to a token at 1 per 1000 ms)", () => {
    const outcome = decide({ name: "n", config: { ...plain, dryRun: true } }, 0);
    expect(outcome.result).toStrictEqual({ ok: true });
    expect(outcome.wouldRefuse).toStrictEqual({ retryAfter: 1000 });
  });

  test("refused with throws, the caller offering to throw, but no metric event to keep: the component throws", () => {
    const outcome = decide({ name: "n", config: plain, throws: true, raiseInCaller: true }, 0);
    expect(outcome.raise).toStrictEqual({ error: { kind: "RateLimited", name: "n", retryAfter: 1000 }, inCaller: false });
  });
});

describe("resetsAt: when a calendar quota's period ends", () => {
  // 10:00 UTC on 15 January 2026: the day ends at midnight, 14 hours on.
  const at = Date.UTC(2026, 0, 15, 10);
  const midnight = Date.UTC(2026, 0, 16);
  const daily = calendarWindow({ kind: "calendar", rate: 3, period: "day" });
  const run = (config: RateLimitConfig, rows: KeyRow<string>[]) =>
    runPlan(requestFlow<string>({ name: "n", config }, at, () => 0), (q) => answerRead({ rows, pending: [] }, q)).result;

  test.each([
    // [why, rows, result]
    ["a key never used: admitted, the period ends at midnight", [], { ok: true, resetsAt: midnight }],
    [
      "a key whose day's 3 are taken: refused until midnight, when the period ends",
      [{ id: "r", shard: 0, value: 0, ts: at - 1000, shards: 1, kind: "fixed window" }],
      { ok: false, retryAfter: midnight - at, resetsAt: midnight },
    ],
  ] as [string, KeyRow<string>[], unknown][])("%s", (_why, rows, result) => {
    expect(run(daily, rows)).toStrictEqual(result);
  });

  test("a row stamped in the next period (another server's clock ran ahead): its period's end, the next day's midnight", () => {
    const rows: KeyRow<string>[] = [{ id: "r", shard: 0, value: 2, ts: midnight + 1000, shards: 1, kind: "fixed window" }];
    expect(run(daily, rows)).toStrictEqual({ ok: true, resetsAt: midnight + 86_400_000 });
  });

  test("a fixed window of a day that is no calendar quota says no resetsAt", () => {
    expect(run({ kind: "fixed window", rate: 3, period: 86_400_000 }, [])).toStrictEqual({ ok: true });
  });
});

describe("shed: an asynchronous decision inside the margin while others take", () => {
  // 8 tokens, 1 back per 1000 ms; the margin is a quarter, 2 tokens. The row held 3 at T0 - 10
  // (3.01 at T0); another request's take of 1 at T0 - 5 is still pending (so the key is busy): 2.01
  // left. Taking 1 would leave 1.01, inside the margin: refused until 1 + 2 are back, 990 ms.
  const config: RateLimitConfig = { kind: "token bucket", rate: 8, period: 8000, applyUpdates: "asynchronously" };
  const shed = (config: RateLimitConfig, args: Partial<RateLimitArgs>) => {
    const rows: KeyRow<string>[] = [{ id: "r", shard: 0, value: 3, ts: T0 - 10, shards: 1, kind: "token bucket" }];
    const pending = [{ shard: 0, count: 1, ts: T0 - 5, config }];
    return runPlan(requestFlow<string>({ name: "n", config, ...args }, T0, () => 0), (q) => answerRead({ rows, pending }, q)).shed;
  };
  const error = { kind: "RateLimited", name: "n", retryAfter: 990 };

  test.each([
    // [why, config, args, shed]
    ["no metrics, no throws: the refusal alone", config, {}, { result: { ok: false, retryAfter: 990 } }],
    ["with metrics: its refused event", { ...config, metrics: true }, {}, { result: { ok: false, retryAfter: 990 }, event: { outcome: "refused", count: 1 } }],
    [
      "with metrics and throws, the caller offering: thrown by the caller, keeping the event",
      { ...config, metrics: true },
      { throws: true, raiseInCaller: true },
      { result: { ok: false, retryAfter: 990 }, event: { outcome: "refused", count: 1 }, raise: { error, inCaller: true } },
    ],
    ["throws without metrics: thrown by the component", config, { throws: true, raiseInCaller: true }, { result: { ok: false, retryAfter: 990 }, raise: { error, inCaller: false } }],
  ] as [string, RateLimitConfig, Partial<RateLimitArgs>, unknown][])("%s", (_why, config, args, expected) => {
    expect(shed(config, args)).toStrictEqual(expected);
  });
});

describe("under a key's own override (carried on its rows)", () => {
  const run = (o: KeyRow<string>["o"], args: Partial<RateLimitArgs> = {}) => {
    const rows: KeyRow<string>[] = [{ id: "r", shard: 0, value: 2, ts: T0, shards: 1, kind: "token bucket", o }];
    return runPlan(requestFlow<string>({ name: "n", config: plain, ...args }, T0, () => 0), (q) => answerRead({ rows, pending: [] }, q));
  };

  test("the details name the config in force: 1 of 4 left after the take, full in 1500 ms at 4 per 2000 ms", () => {
    const override: RateLimitConfig = { kind: "token bucket", rate: 4, period: 2000 };
    expect(run({ config: override }, { details: true }).result).toStrictEqual({
      ok: true,
      details: { shards: [0], remaining: 1, capacity: 4, resetAfter: 1500, exact: true, config: override },
    });
  });

  test("a stored override whose config is malformed is bad input naming its field, never decided on", () => {
    expect(errorData(() => run({ config: { kind: "token bucket", rate: -1, period: 2000 } }))).toStrictEqual({
      kind: "InvalidRateLimit",
      field: "config.rate",
      value: "-1",
      message: "config.rate = -1: must be a finite number > 0",
    });
  });
});

describe("details of a sharded limit", () => {
  // 8 tokens over 2 shards of 4, each refilling 1 per 2000 ms; draws of 0 read shard 0, then shard 1.
  const sharded: RateLimitConfig = { kind: "token bucket", rate: 8, period: 8000, shards: 2 };
  const run = (rows: KeyRow<string>[]) =>
    runPlan(requestFlow<string>({ name: "n", config: sharded, details: true }, T0, () => 0), (q) => answerRead({ rows, pending: [] }, q)).result;

  test("shard 0 holds 1 (near empty), shard 1 holds 3 and serves: 1 + 2 left, shard 0 full again in 6000 ms", () => {
    const rows: KeyRow<string>[] = [
      { id: "a", shard: 0, value: 1, ts: T0, shards: 2, kind: "token bucket" },
      { id: "b", shard: 1, value: 3, ts: T0, shards: 2, kind: "token bucket" },
    ];
    expect(run(rows)).toStrictEqual({ ok: true, details: { shards: [1], remaining: 3, capacity: 8, resetAfter: 6000, exact: true } });
  });

  test("a row of one shard holding 5 of 8, now 2 shards: carried over, 1 taken, 4 left, full in 4000 ms", () => {
    const rows: KeyRow<string>[] = [{ id: "a", shard: 0, value: 5, ts: T0, shards: 1, kind: "token bucket" }];
    expect(run(rows)).toStrictEqual({ ok: true, details: { shards: [0], remaining: 4, capacity: 8, resetAfter: 4000, exact: true } });
  });
});
