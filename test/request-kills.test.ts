// requestFlow's, waitFlow's and settle's edges, pure with explicit instants: a count the config in force can't serve (read first for an override, never read again under one), waiting (reserving, behind queued work, an override that can't wait), waits past Number.MAX_SAFE_INTEGER, the margin of a stale asynchronous decision, a sharded calendar quota's resetsAt, a shed calendar refusal, a refusal that carries rows over, a block's and an allow's plans writing nothing, and takenUnder's fast paths.
import { describe, expect, test, vi } from "vitest";
import { requestFlow, type RequestOutcome } from "../src/shared/flow/request.js";
import { waitFlow, type WaitArgs, type WaitOutcome } from "../src/shared/flow/wait.js";
import { takenUnder } from "../src/shared/flow/settle.js";
import { answerRead, runPlan, type KeyInMemory, type KeyRead, type KeyRow, type RowOp, type RowQuery } from "../src/shared/shapes/rows.js";
import type { Take } from "../src/shared/shapes/stored.js";
import type { RateLimitArgs, RateLimitConfig } from "../src/shared/shapes/validators.js";
import { calendarWindow } from "../src/shared/validation/validate-config.js";
import { resolvePhase } from "../src/shared/shards/layout.js";
import { configTerms, termsHash } from "../src/shared/shards/terms.js";
import { decodeLog } from "../src/shared/kinds/window-log.js";
import { addressHex } from "../src/shared/overrides/overrides.js";
import { errorData } from "./error-data.js";

const T0 = 1_000_000;
const TB = "token bucket" as const;
const plain: RateLimitConfig = { kind: TB, rate: 2, period: 2000 };

/** Runs a flow over a key held in memory (`rows`, `pending` takes), recording the reads it makes. */
function drive<R>(flow: Generator<RowQuery, R, KeyRead<string>>, rows: KeyRow<string>[], pending: Take[] = []) {
  const reads: RowQuery[] = [];
  const run = () =>
    runPlan(flow, (q) => {
      reads.push(q);
      return answerRead({ rows, pending }, q);
    });
  return { reads, run };
}
const decide = (args: RateLimitArgs, rows: KeyRow<string>[], now = T0, draw = 0, pending: Take[] = []): RequestOutcome<string> =>
  drive(requestFlow<string>(args, now, () => draw), rows, pending).run();
const waitFor = (args: WaitArgs, rows: KeyRow<string>[], queuedUntil?: number): WaitOutcome<string> =>
  drive(waitFlow<string>(args, T0, () => 0, queuedUntil), rows).run();
/** A token bucket's row, shard 0 of 1, holding `value` at T0 (`extra` sets other fields). */
const tbRow = (value: number, extra: Partial<KeyRow<string>> = {}): KeyRow<string> => ({ id: "r", shard: 0, value, ts: T0, shards: 1, kind: TB, ...extra });

describe("a count the config in force can't serve", () => {
  const overCapacity = { kind: "InvalidRateLimit", field: "count", value: "5", message: "count = 5: can never succeed: it exceeds the capacity (2)" };

  test("5 of a capacity of 2, and no override on the key: bad input, once its first row is read (it would carry one)", () => {
    const { reads, run } = drive(requestFlow<string>({ name: "n", config: plain, count: 5 }, T0, () => 0), [tbRow(2)]);
    expect(errorData(run)).toStrictEqual(overCapacity);
    expect(reads).toStrictEqual([{ read: "any" }]);
  });

  test("5 of a capacity of 2, but the key's own override holds 10: decided under it, 5 left", () => {
    const own: RateLimitConfig = { ...plain, capacity: 10 };
    const outcome = decide({ name: "n", config: plain, count: 5 }, [tbRow(10, { o: { config: own } })]);
    expect(outcome.result).toStrictEqual({ ok: true });
    expect(outcome.plan.writes.map((w) => w.state.value)).toStrictEqual([5]);
  });

  test("5 of the named 10, but the key's own override (asynchronous reads: every row and take) holds 2: bad input, with no read after the one that found it", () => {
    const named: RateLimitConfig = { ...plain, capacity: 10, applyUpdates: "asynchronously" };
    const { reads, run } = drive(requestFlow<string>({ name: "n", config: named, count: 5 }, T0, () => 0), [tbRow(2, { o: { config: plain } })]);
    expect(errorData(run)).toStrictEqual(overCapacity);
    expect(reads).toStrictEqual([{ read: "all", pending: true }]);
  });
});

describe("waiting until allowed (waitFlow through decideUnder)", () => {
  test("an empty token bucket reserves: the work runs when the token is back, 1000 ms on, the row 1 in debt", () => {
    const outcome = waitFor({ name: "n", config: plain, maxWait: 10_000 }, [tbRow(0)]);
    expect(outcome.result).toStrictEqual({ ok: true, runAt: T0 + 1000 });
    expect(outcome.ops.flatMap((o) => (o.op === "patch" ? [o.fields.value] : []))).toStrictEqual([-1]);
  });

  test("an exact sliding window with room now, behind work queued until T0 + 500: its take is logged at T0 + 500", () => {
    const exact: RateLimitConfig = { kind: "sliding window", rate: 2, period: 2000 };
    const outcome = waitFor({ name: "n", config: exact, maxWait: 10_000 }, [], T0 + 500);
    expect(outcome.result).toStrictEqual({ ok: true, runAt: T0 + 500 });
    const logs = outcome.ops.flatMap((o) => (o.op === "insert" && o.fields.log ? [decodeLog(o.fields.log)] : []));
    expect(logs).toStrictEqual([[{ at: T0 + 500, count: 1 }]]);
  });

  test("the named config can wait, the key's own override has a lockout: bad input naming it, nothing reserved", () => {
    const own: RateLimitConfig = { ...plain, lockout: 1000 };
    expect(errorData(() => waitFor({ name: "n", config: plain, maxWait: 10_000 }, [tbRow(0, { o: { config: own } })]))).toStrictEqual({
      kind: "InvalidRateLimit",
      field: "config.lockout",
      value: "1000",
      message: "config.lockout = 1000: a limit with a lockout can't wait: the take of the last token locks the key, so queued work could never follow; use a limit without lockout",
    });
  });
});

describe("a wait past Number.MAX_SAFE_INTEGER ms (1 token of capacity, 0.01 back per 1e15 ms, none held)", () => {
  const slow: RateLimitConfig = { kind: TB, rate: 0.01, period: 1e15, capacity: 1 };
  // 1 token at 0.01 per 1e15 ms is 1e17 ms away (as the float arithmetic lands, 99999999999990020).
  const WAIT = 99999999999990020;

  test("can't be told to the ms: bad input naming the count", () => {
    expect(errorData(() => decide({ name: "n", config: slow }, [tbRow(0)]))).toStrictEqual({
      kind: "InvalidRateLimit",
      field: "count",
      value: "1",
      message: `count = 1: can never succeed in time that can be told: at rate 0.01 per 1000000000000000 ms its wait (${WAIT} ms) runs past Number.MAX_SAFE_INTEGER ms, where instants are not whole ms apart`,
    });
  });

  test("a dry run admits and reports the wait it would have given, whatever its size", () => {
    const outcome = decide({ name: "n", config: { ...slow, dryRun: true } }, [tbRow(0)]);
    expect(outcome.result).toStrictEqual({ ok: true });
    expect(outcome.wouldRefuse).toStrictEqual({ retryAfter: WAIT });
  });
});

describe("safeOnStale: every shard a decision used keeps a quarter of its capacity", () => {
  const rows = (a: number, b: number): KeyRow<string>[] => [tbRow(a, { id: "a", shards: 2 }), tbRow(b, { id: "b", shard: 1, shards: 2 })];

  test.each([
    // [why, tokens of shard 0, of shard 1, safe]
    ["a peek over 2 shards of 4 holding 4 and 1 (the margin, 1): both keep it", 4, 1, true],
    ["a peek over 2 shards of 4 holding 4 and 0.5: shard 1 is inside the margin", 4, 0.5, false],
  ] as [string, number, number, boolean][])("%s", (_why, a, b, safe) => {
    const config: RateLimitConfig = { kind: TB, rate: 8, period: 8000, shards: 2, applyUpdates: "asynchronously" };
    const outcome = decide({ name: "n", config, count: 0 }, rows(a, b));
    expect(outcome.plan).toStrictEqual({ ok: true, writes: [], shards: [0, 1] });
    expect(outcome.safeOnStale).toBe(safe);
  });

  test("3 taken from shards of 4 and 3 holding 2 each: 1 and 0 left, shard 1 under its margin (0.75), so not safe", () => {
    const config: RateLimitConfig = { kind: TB, rate: 7, period: 7000, shards: 2, applyUpdates: "asynchronously" };
    const outcome = decide({ name: "n", config, count: 3 }, rows(2, 2));
    expect(outcome.plan.writes.map((w) => [w.shard, w.state.value])).toStrictEqual([
      [0, 1],
      [1, 0],
    ]);
    expect(outcome.safeOnStale).toBe(false);
  });
});

describe("resetsAt of a calendar quota", () => {
  // 10:00 UTC on 15 January 2026: the day ends at midnight, 14 hours on.
  const at = Date.UTC(2026, 0, 15, 10);
  const midnight = Date.UTC(2026, 0, 16);
  const DAY = 86_400_000;

  test("2 shards of 3 a day, shard 0 emptied in the next day (a clock ahead), shard 1 full today and taken from: the later period's end", () => {
    const daily = calendarWindow({ kind: "calendar", rate: 6, period: "day", shards: 2 });
    const h = termsHash(configTerms(daily));
    const rows: KeyRow<string>[] = [
      { id: "a", shard: 0, value: 0, ts: midnight + 1000, h },
      { id: "b", shard: 1, value: 3, ts: at - 1000, h },
    ];
    const outcome = decide({ name: "n", config: daily }, rows, at);
    expect(outcome.plan.shards).toStrictEqual([1]);
    expect(outcome.result).toStrictEqual({ ok: true, resetsAt: midnight + DAY });
  });

  test("asynchronous, 8 a day, 2 left and another take pending: the refusal it sheds resets at midnight too", () => {
    const daily = calendarWindow({ kind: "calendar", rate: 8, period: "day", applyUpdates: "asynchronously" });
    const row: KeyRow<string> = { id: "r", shard: 0, value: 3, ts: at - 10, shards: 1, kind: "fixed window" };
    const outcome = decide({ name: "n", config: daily }, [row], at, 0, [{ shard: 0, count: 1, ts: at - 5, config: daily }]);
    expect(outcome.result).toStrictEqual({ ok: true, resetsAt: midnight });
    expect(outcome.shed).toStrictEqual({ result: { ok: false, retryAfter: midnight - at, resetsAt: midnight } });
  });
});

describe("a refusal that carries rows of other terms over", () => {
  // The row was written at 4 per 4000 ms and holds none; now 2 per 2000 ms: carried over, refused for 1000 ms.
  const rows = [tbRow(0, { rate: 4, period: 4000, capacity: 4 })];
  const config: RateLimitConfig = { ...plain, metrics: true };

  test("writes the carried-over row", () => {
    const outcome = decide({ name: "n", config }, rows);
    expect(outcome.result).toStrictEqual({ ok: false, retryAfter: 1000 });
    expect(outcome.ops.map((o: RowOp<string>) => o.op)).toStrictEqual(["terms", "patch"]);
  });

  test("so with throws it is thrown by the component, which keeps nothing, even when the caller offers to throw it", () => {
    const outcome = decide({ name: "n", config, throws: true, raiseInCaller: true }, rows);
    expect(outcome.raise).toStrictEqual({ error: { kind: "RateLimited", name: "n", retryAfter: 1000 }, inCaller: false });
    expect(outcome.ops).toStrictEqual([]);
  });
});

describe("a block and a network's allow decide writing nothing: the plan says so too", () => {
  const run = (key: KeyInMemory<string>, args: RateLimitArgs) => runPlan(requestFlow<string>(args, T0, () => 0), (q) => answerRead(key, q));

  test("a key blocked until T0 + 700, 2 tokens held: refused for 700 ms, no write planned", () => {
    const outcome = run({ rows: [tbRow(2, { o: { blockedUntil: T0 + 700 } })], pending: [] }, { name: "n", config: plain });
    expect(outcome.plan).toStrictEqual({ ok: false, retryAfter: 700, writes: [], shards: [0] });
    expect(outcome.ops).toStrictEqual([]);
  });

  test("an empty key in a network allowed without limit: admitted, no write planned", () => {
    const networks = [{ start: addressHex("203.0.113.0"), end: addressHex("203.0.113.255"), network: "203.0.113.0/24", override: { allow: true as const } }];
    const outcome = run({ rows: [tbRow(0)], pending: [], networks }, { name: "n", config: { ...plain, networks: true }, ip: "203.0.113.7" });
    expect(outcome.plan).toStrictEqual({ ok: true, writes: [], shards: [0] });
    expect(outcome.result).toStrictEqual({ ok: true });
    expect(outcome.ops).toStrictEqual([]);
  });
});

describe("takenUnder's fast paths: a take under the same terms is recognised without building them", () => {
  const phases = () => vi.fn((c: RateLimitConfig) => resolvePhase(c, "n", undefined));
  const take = (config: RateLimitConfig): Take => ({ shard: 0, count: 1, ts: T0, config });

  test.each([
    // [why, the take's config, the config]
    ["a fixed window, field for field", { kind: "fixed window", rate: 5, period: 1000, start: 0 }, { kind: "fixed window", rate: 5, period: 1000, start: 0 }],
    ["a token bucket given start: null, against one without (a token bucket has no phase)", { kind: TB, rate: 5, period: 1000, start: null }, { kind: TB, rate: 5, period: 1000 }],
  ] as [string, RateLimitConfig, RateLimitConfig][])("%s", (_why, taken, config) => {
    const phaseOf = phases();
    expect(takenUnder(take(taken), config, phaseOf)).toBe(true);
    expect(phaseOf).toHaveBeenCalledTimes(0);
  });

  test("two fixed windows of other starts (phases 0 and 500): their terms are built, and differ", () => {
    const phaseOf = phases();
    expect(takenUnder(take({ kind: "fixed window", rate: 5, period: 1000, start: 500 }), { kind: "fixed window", rate: 5, period: 1000, start: 0 }, phaseOf)).toBe(false);
    expect(phaseOf).toHaveBeenCalledTimes(2);
  });

  test("the very config the take records: not one of its fields read", () => {
    const read: PropertyKey[] = [];
    const config = new Proxy<RateLimitConfig>({ kind: "fixed window", rate: 5, period: 1000 }, {
      get(target, key, receiver) {
        read.push(key);
        return Reflect.get(target, key, receiver);
      },
    });
    const phaseOf = phases();
    expect(takenUnder(take(config), config, phaseOf)).toBe(true);
    expect(read).toStrictEqual([]);
  });
});
