// creditFlow (a plain credit and a cancelled run's: its bounds, its writes) and getValueFlow (what it reports under overrides, networks, blocks and lockouts, and a state's prev, log and resetsAt), pure at explicit instants.
import { describe, expect, test } from "vitest";
import { errorData } from "./error-data.js";
import { creditFlow, getValueFlow, type KeyRow } from "../src/shared/flow/flow.js";
import { summarize } from "../src/shared/flow/value.js";
import type { CancelledRun } from "../src/shared/flow/credit.js";
import { configHash, shardParams } from "../src/shared/shards/layout.js";
import { decodeLog, encodeLog } from "../src/shared/kinds/window-log.js";
import { answerRead, runPlan, type KeyInMemory, type RowOp } from "../src/shared/shapes/rows.js";
import { hexOf, parseAddress } from "../src/shared/overrides/address.js";
import { calendarWindow } from "../src/shared/validation/validate-config.js";
import type { Override } from "../src/shared/shapes/override-validators.js";
import type { CreditArgs, GetValueArgs, RateLimitConfig } from "../src/shared/shapes/validators.js";

const TB = "token bucket" as const;
const FW = "fixed window" as const;
const SW = "sliding window" as const;
const T0 = 1_000_000;
const HOUR = 3_600_000;

/** A stored row of shard `shard` written under `config`, with what the key carries. */
function row(shard: number, value: number, config: RateLimitConfig, extra: Partial<KeyRow<string>> = {}, ts = T0): KeyRow<string> {
  return { id: `row${shard}`, shard, value, ts, h: configHash(config), ...extra };
}

/** Answers a flow's reads from an in-memory key. */
const over = (key: KeyInMemory<string>) => (q: Parameters<typeof answerRead>[1]) => answerRead(key, q);

/** Runs a credit at `now` over `rows`, for a cancelled run when `cancel` is given. */
function credit(args: CreditArgs, now: number, rows: KeyRow<string>[], cancel?: CancelledRun) {
  return runPlan(creditFlow<string>(args, now, cancel), over({ rows, pending: [] }));
}

/** The fields of the one patch a credit wrote, its log decoded. */
function patched(ops: RowOp<string>[]) {
  expect(ops).toHaveLength(1);
  const op = ops[0]!;
  if (op.op !== "patch") throw new Error(`expected a patch, got ${op.op}`);
  const { log, ...rest } = op.fields as { log?: ArrayBuffer };
  return log === undefined ? rest : { ...rest, log: decodeLog(log) };
}

describe("bad input, before any read", () => {
  test("an empty tier is refused by credit and by getValue, naming the field", () => {
    const config: RateLimitConfig = { kind: TB, rate: 10, period: 1000 };
    expect(errorData(() => credit({ name: "n", key: "k", config, count: 1, tier: "" }, T0, []))).toMatchObject({ kind: "InvalidRateLimit", field: "tier", value: "\"\"" });
    expect(errorData(() => runPlan(getValueFlow<string>({ name: "n", key: "k", config, tier: "" }, T0, () => 0), over({ rows: [], pending: [] })))).toMatchObject({ kind: "InvalidRateLimit", field: "tier", value: "\"\"" });
  });
});

describe("a credit of an asynchronous limit records a negative take, naming an override's config", () => {
  const named: RateLimitConfig = { kind: TB, rate: 10, period: HOUR, applyUpdates: "asynchronously" };
  const own: Override = { config: { kind: TB, rate: 20, period: HOUR } };
  const merged: RateLimitConfig = { kind: TB, rate: 20, period: HOUR, applyUpdates: "asynchronously" };

  test("under the named config: the take carries no config", () => {
    const out = credit({ name: "n", key: "k", config: named, count: 3 }, T0, [row(0, 4, named)]);
    expect(out.credited).toBe(3);
    expect(out.ops).toEqual([{ op: "record", take: { shard: 0, count: -3, ts: T0 } }]);
  });

  test("under the key's own override: the take names the config it was made under", () => {
    const out = credit({ name: "n", key: "k", config: named, count: 3 }, T0, [row(0, 4, merged, { o: own })]);
    expect(out.credited).toBe(3);
    expect(out.ops).toEqual([{ op: "record", take: { shard: 0, count: -3, ts: T0, config: merged } }]);
  });
});

describe("a cancelled run's credit: bounded so the key's later runs stay within the capacity", () => {
  // 1 token a second, capacity 10; the key holds 2 at T0, so 3 at T0 + 1 s and 5 at T0 + 3 s.
  const bucket: RateLimitConfig = { kind: TB, rate: 10, period: 10_000 };
  const args: CreditArgs = { name: "n", key: "k", config: bucket, count: 8 };
  const runAt = T0 - 5000;

  test("a plain credit of 8 fills the bucket to its capacity", () => {
    const out = credit(args, T0, [row(0, 2, bucket)]);
    expect(out.credited).toBe(8);
    expect(patched(out.ops)).toEqual({ value: 10, ts: T0, h: configHash(bucket) });
  });

  test("no run queued after now: the whole credit, as a plain one", () => {
    const out = credit(args, T0, [row(0, 2, bucket)], { runAt, pending: [] });
    expect(out.credited).toBe(8);
    expect(patched(out.ops)).toEqual({ value: 10, ts: T0, h: configHash(bucket) });
  });

  test("two runs queued: the tightest of 10 - 3 - (1 + 2) = 4 and 10 - 5 - 2 = 3", () => {
    const pending = [{ runAt: T0 + 1000, count: 1 }, { runAt: T0 + 3000, count: 2 }];
    const out = credit(args, T0, [row(0, 2, bucket)], { runAt, pending });
    expect(out.credited).toBe(3);
    expect(patched(out.ops)).toEqual({ value: 5, ts: T0, h: configHash(bucket) });
  });

  test("a run at now or before has taken its tokens: it bounds nothing", () => {
    const pending = [{ runAt: T0 - 500, count: 4 }, { runAt: T0, count: 5 }, { runAt: T0 + 1000, count: 1 }, { runAt: T0 + 3000, count: 2 }];
    const out = credit(args, T0, [row(0, 2, bucket)], { runAt, pending });
    expect(out.credited).toBe(3);
  });

  test("runs that leave no room: nothing credited, nothing written", () => {
    const out = credit(args, T0, [row(0, 2, bucket)], { runAt, pending: [{ runAt: T0 + 1000, count: 9 }] });
    expect(out.credited).toBe(0);
    expect(out.ops).toEqual([]);
  });

  test("a sharded limit with a run queued gives nothing back; with none, the credit as usual", () => {
    const two: RateLimitConfig = { ...bucket, rate: 20, shards: 2 };
    const rows = [row(0, 2, two), row(1, 2, two)];
    const sharded: CreditArgs = { name: "n", key: "k", config: two, count: 3, shards: [0] };
    expect(credit(sharded, T0, rows, { runAt, pending: [{ runAt: T0 + 1000, count: 1 }] })).toEqual({ credited: 0, ops: [] });
    expect(credit(sharded, T0, rows, { runAt, pending: [] }).credited).toBe(3);
  });

  test("after a change of terms: at most the debt back (the value back to 0)", () => {
    const changed = (value: number) => credit(args, T0, [row(0, value, bucket)], { runAt, pending: [{ runAt: T0 + 1000, count: 1 }], changed: true });
    const owed = changed(-3);
    expect(owed.credited).toBe(3);
    expect(patched(owed.ops)).toEqual({ value: 0, ts: T0, h: configHash(bucket) });
    expect(changed(2).credited).toBe(0);
    // Unchanged terms: bounded by the queued run only (10 - 3 - 1 = 6).
    expect(credit(args, T0, [row(0, 2, bucket)], { runAt, pending: [{ runAt: T0 + 1000, count: 1 }], changed: false }).credited).toBe(6);
  });

  test("a fixed window: the run queued in this window bounds it, 10 - 4 - 3 = 3", () => {
    const window: RateLimitConfig = { kind: FW, rate: 10, period: 1000, start: 0 };
    const out = credit({ name: "n", key: "k", config: window, count: 5 }, T0 + 100, [row(0, 4, window, {}, T0 + 100)], { runAt, pending: [{ runAt: T0 + 500, count: 3 }] });
    expect(out.credited).toBe(3);
  });
});

describe("a cancelled run's credit to an approximate sliding window", () => {
  test("an approximate sliding window: the run's tokens added to the value, the last window's count kept", () => {
    const approx: RateLimitConfig = { kind: SW, rate: 10, period: 1000, start: 0, exact: false };
    const at = T0 + 100;
    const out = credit({ name: "n", key: "k", config: approx, count: 2 }, at, [row(0, 4, approx, { prev: 3 }, at)], { runAt: T0 - 500, pending: [] });
    expect(out.credited).toBe(2);
    expect(patched(out.ops)).toEqual({ value: 6, ts: at, h: configHash(approx), prev: 3 });
  });
});

describe("a cancelled run's credit to an exact sliding window withdraws the run's own logged take", () => {
  // 10 a second; the run's 3 were logged ahead at its runAt, T0 + 300.
  const exact: RateLimitConfig = { kind: SW, rate: 10, period: 1000, exact: true };
  const runAt = T0 + 300;
  // A queued run that would leave no room in a bucket: an exact window is not bounded by it.
  const pending = [{ runAt: T0 + 400, count: 5 }];

  test("the run's entry comes off the log, the older one stays", () => {
    const log = encodeLog([{ at: T0 - 200, count: 2 }, { at: runAt, count: 3 }]);
    const out = credit({ name: "n", key: "k", config: exact, count: 3 }, T0, [row(0, 5, exact, { log })], { runAt, pending });
    expect(out.credited).toBe(3);
    expect(patched(out.ops)).toEqual({ value: 8, ts: T0, h: configHash(exact), log: [{ at: T0 - 200, count: 2 }] });
  });

  test("the only entry withdrawn: no log left", () => {
    const log = encodeLog([{ at: runAt, count: 3 }]);
    const out = credit({ name: "n", key: "k", config: exact, count: 3 }, T0, [row(0, 7, exact, { log })], { runAt, pending });
    expect(out.credited).toBe(3);
    expect(patched(out.ops)).toEqual({ value: 10, ts: T0, h: configHash(exact) });
  });
});

describe("getValue under overrides, networks, blocks and lockouts", () => {
  const named: RateLimitConfig = { kind: TB, rate: 10, period: HOUR, networks: true, lockout: HOUR };
  const args: GetValueArgs = { name: "n", key: "k", config: named };
  const range = (override: Override | { allow: true }) => [
    { start: hexOf(parseAddress("203.0.113.0", "ip").value), end: hexOf(parseAddress("203.0.113.255", "ip").value), network: "203.0.113.0/24", override },
  ];
  const value = (a: GetValueArgs, key: KeyInMemory<string>, now = T0) => runPlan(getValueFlow<string>(a, now, () => 0), over(key));

  test("a key's override whose config is bad is refused, not reported", () => {
    const bad: Override = { config: { kind: TB, rate: -1, period: HOUR } };
    expect(errorData(() => value(args, { rows: [row(0, 1, named, { o: bad })], pending: [] }))).toMatchObject({ kind: "InvalidRateLimit", field: "config.rate" });
  });

  test("a network's config: reported with the network that set it", () => {
    const small: Override = { config: { kind: TB, rate: 1, period: HOUR } };
    const out = value({ ...args, ip: "203.0.113.9" }, { rows: [], pending: [], networks: range(small) });
    expect(out).toMatchObject({ value: 1, by: "network", network: "203.0.113.0/24", config: { rate: 1 } });
    expect(out).not.toHaveProperty("total");
  });

  test("an allow: allowed, no lockout reported, total only when details asks", () => {
    const key = { rows: [row(0, 0, named, { u: T0 + HOUR })], pending: [], networks: range({ allow: true }) };
    const plain = value({ ...args, ip: "203.0.113.9" }, key);
    expect(plain).toEqual({ value: 0, ts: T0, shard: 0, config: { kind: TB, rate: 10, period: HOUR, capacity: 10, shards: 1 }, by: "network", network: "203.0.113.0/24", allowed: true });
    const detailed = value({ ...args, ip: "203.0.113.9", details: true }, key);
    expect(detailed).toEqual({ ...plain, total: { value: 0, capacity: 10, exact: true } });
    // Outside the network, the lockout is reported.
    expect(value({ ...args, ip: "198.51.100.1" }, key)).toMatchObject({ blockedUntil: T0 + HOUR, blockedBy: "lockout" });
  });

  test.each([
    // [why, the key's block until, locked until, reported]
    ["a block and a lock ending together: the block", T0 + 500, T0 + 500, { blockedUntil: T0 + 500, blockedBy: "key" }],
    ["a block outlasting the lock: the block", T0 + 500, T0 + 400, { blockedUntil: T0 + 500, blockedBy: "key" }],
    ["a lock outlasting the block: the lockout", T0 + 500, T0 + 600, { blockedUntil: T0 + 600, blockedBy: "lockout" }],
    ["a lock alone", undefined, T0 + 1, { blockedUntil: T0 + 1, blockedBy: "lockout" }],
    ["a lock ending exactly now: nothing", undefined, T0, {}],
  ] as const)("%s", (_, blockedUntil, u, reported) => {
    const o: Override | undefined = blockedUntil === undefined ? undefined : { blockedUntil };
    const out = value(args, { rows: [row(0, 4, named, { u, ...(o ? { o } : {}) })], pending: [] }) as Record<string, unknown>;
    expect({ blockedUntil: out.blockedUntil, blockedBy: out.blockedBy }).toEqual({ blockedUntil: undefined, blockedBy: undefined, ...reported });
  });
});

describe("summarize reports the emptiest shard's prev, log and a calendar quota's resetsAt", () => {
  test("a sliding window's prev", () => {
    const config: RateLimitConfig = { kind: SW, rate: 10, period: 1000, exact: false };
    const out = summarize([{ shard: 0, state: { value: 6, ts: T0 + 100, prev: 3 }, p: shardParams(config, 0, 0) }], config, 0, T0 + 100);
    expect(out).toEqual({ value: 6, ts: T0 + 100, prev: 3, shard: 0, config: { ...config, capacity: 10, shards: 1, start: 0 }, total: { value: 6, capacity: 10, exact: true } });
  });

  test("an exact sliding window's log", () => {
    const config: RateLimitConfig = { kind: SW, rate: 10, period: 1000, exact: true };
    const log = encodeLog([{ at: T0 - 100, count: 4 }]);
    const out = summarize([{ shard: 0, state: { value: 6, ts: T0, log }, p: shardParams(config, 0, 0) }], config, 0, T0 + 200);
    expect({ ...out, log: decodeLog(out.log!) }).toEqual({ value: 6, ts: T0 + 200, log: [{ at: T0 - 100, count: 4 }], shard: 0, config: { ...config, capacity: 10, shards: 1 }, total: { value: 6, capacity: 10, exact: true } });
  });

  test("a calendar quota's resetsAt: the end of the day the shard stands in", () => {
    const config = calendarWindow({ kind: "calendar", rate: 3, period: "day", timeZone: "UTC" });
    const noon = Date.UTC(2026, 0, 15, 12);
    const out = summarize([{ shard: 0, state: { value: 1, ts: noon }, p: shardParams(config, 0, 0) }], config, 0, noon);
    expect(out.resetsAt).toBe(Date.UTC(2026, 0, 16));
    expect(out.value).toBe(1);
  });
});
