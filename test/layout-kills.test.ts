// Carrying a key's rows over to other terms (src/shared/shards/layout.ts), pure with explicit rows and instants: a debt's promise under a change of rate, period or phase, calendar quotas' shard configs and window ends, exact windows' logs kept or shared out over another shard count, and the rows no write of ours makes (upstream's, a log that isn't one).
import { describe, expect, test } from "vitest";
import { DAY, HOUR, MINUTE } from "../src/shared/kinds/algebra.js";
import { relayout, resolvePhase, shardConfig, shardParams } from "../src/shared/shards/layout.js";
import { decodeLog, encodeLog, type Entry } from "../src/shared/kinds/window-log.js";
import { calendarWindow } from "../src/shared/validation/validate-config.js";
import type { StoredRow } from "../src/shared/shapes/stored.js";
import type { RateLimitConfig } from "../src/shared/shapes/validators.js";

const T = 10 * HOUR;
const FW = "fixed window" as const;
const TB = "token bucket" as const;
const EX = "exact sliding window" as const;
/** Bytes no log encodes (a varint that never ends): a row carrying them has no log we can read. */
const NOT_A_LOG = new Uint8Array([255, 255, 255, 255, 255, 255, 255, 255, 255]).buffer;

/** A state as plain data: its log decoded, so tables compare takes, not bytes. */
type Plain = { value: number; ts: number; prev?: number; log?: readonly Entry[] };
function plain(states: { value: number; ts: number; prev?: number; log?: ArrayBuffer }[]): Plain[] {
  return states.map(({ log, ...rest }) => (log === undefined ? rest : { ...rest, log: decodeLog(log) }));
}

/** A fixed window's row of one shard recording its layout, written at `ts`. */
function fw(value: number, ts: number, rate: number, period: number, extra: Partial<StoredRow> = {}): StoredRow {
  return { shard: 0, value, ts, shards: 1, kind: FW, rate, period, capacity: rate, ...extra };
}

/** An exact window's row of shard `shard` of `shards`, written at T with log `log` (none: no log stored). */
function ex(shard: number, shards: number, value: number, log: Entry[] | undefined, rate: number, extra: Partial<StoredRow> = {}): StoredRow {
  return { shard, value, ts: T, shards, kind: EX, rate, period: HOUR, capacity: rate, ...(log ? { log: encodeLog(log) } : {}), ...extra };
}

function sw(rate: number, period: number, extra: Partial<RateLimitConfig> = {}): RateLimitConfig {
  return { kind: "sliding window", rate, period, ...extra } as RateLimitConfig;
}

describe("calendar quotas and exact windows: phase, shard params and shard configs", () => {
  const day = calendarWindow({ kind: "calendar", rate: 10, period: "day" });

  test("a calendar quota's phase is 0 for every key: the calendar places its windows (no hash, no start)", () => {
    expect(resolvePhase(day, "login", "alice")).toBe(0);
    // The same numbers without the calendar take the key's hashed phase.
    const { calendar: _c, ...plainDay } = day as RateLimitConfig & { calendar?: unknown };
    expect(resolvePhase(plainDay as RateLimitConfig, "login", "alice")).toBe(1_152_422);
  });

  test("a calendar quota's shard reserves nothing ahead and carries the calendar; another kind's reserves its share", () => {
    const p = shardParams({ ...day, shards: 2 }, 0, 1);
    expect([p.maxReserved, p.rate, p.capacity, p.cal]).toEqual([0, 5, 5, { period: "day", timeZone: "UTC", anchor: 0 }]);
    expect(shardParams({ kind: TB, rate: 10, period: MINUTE, maxReserved: 4, shards: 2 }, 0, 0).maxReserved).toBe(2);
  });

  test("a calendar quota's shard config: its calendar, no start and no maxReserved", () => {
    expect(shardConfig({ ...day, shards: 2 }, 0, 1)).toStrictEqual({ kind: FW, rate: 5, period: DAY, capacity: 5, shards: 1, calendar: { period: "day", timeZone: "UTC", anchor: 0 } });
  });

  test("an exact sliding window's shard config stays exact, with no start", () => {
    expect(shardConfig(sw(10, MINUTE, { shards: 2, maxReserved: 5 }), 1_234, 1)).toStrictEqual({ kind: "sliding window", rate: 5, period: MINUTE, capacity: 5, shards: 1, maxReserved: 2, exact: true });
    expect(shardConfig(sw(10, MINUTE, { exact: true }), 1_234, 0)).toStrictEqual({ kind: "sliding window", rate: 10, period: MINUTE, capacity: 10, shards: 1, exact: true });
  });
});

describe("a fixed window's debt carried into other terms keeps its promise (owedUntil)", () => {
  // -25 under 10 an hour (windows on the hour) is repaid at 13:00 (-15, -5, then 5 left): the new
  // terms hold nothing before 13:00, and what the old left (at most the new rate) from then on.
  test.each<[string, StoredRow, RateLimitConfig, number, Plain]>([
    ["raised to 20: -55 at 10:00, so 13:00 holds the old terms' 5", fw(-25, T, 10, HOUR), { kind: FW, rate: 20, period: HOUR, start: 0 }, 0, { value: -55, ts: T }],
    ["lowered to 4: 13:00 holds 4 (the new rate caps the 5 left)", fw(-25, T, 10, HOUR), { kind: FW, rate: 4, period: HOUR, start: 0 }, 0, { value: -8, ts: T }],
    ["lowered to 5, repaid to 0 at 12:00: 12:00 holds 0", fw(-20, T, 10, HOUR), { kind: FW, rate: 5, period: HOUR }, 0, { value: -10, ts: T }],
    ["capacity 15 under 10: -30 repaid at 13:00 with 0 left", fw(-30, T, 10, HOUR, { capacity: 15 }), { kind: FW, rate: 20, period: HOUR }, 0, { value: -60, ts: T }],
    ["period halved: nothing before 14:00 (the end of the window repaying it), 10 from then on", fw(-25, T, 10, HOUR), { kind: FW, rate: 10, period: 30 * MINUTE, start: 0 }, 0, { value: -70, ts: T }],
    ["phase moved 10 minutes: the first new window from 14:00 on starts at 14:10", fw(-25, T, 10, HOUR), { kind: FW, rate: 10, period: HOUR, start: 10 * MINUTE }, 10 * MINUTE, { value: -40, ts: T - 50 * MINUTE }],
    ["phase moved and 20 an hour: -80 at 09:10", fw(-25, T, 10, HOUR), { kind: FW, rate: 20, period: HOUR, start: 10 * MINUTE }, 10 * MINUTE, { value: -80, ts: T - 50 * MINUTE }],
    ["written at 10:30 (its own windows start at :30): repaid in the window from 12:30, so nothing before 14:00", fw(-15, T + 30 * MINUTE, 10, HOUR), { kind: FW, rate: 10, period: HOUR, start: 0 }, 0, { value: -30, ts: T }],
    ["a debt a tenth's float quotient overestimates (0.30000000000000004 / 0.1 > 3) is repaid in 3 windows, with nothing left", fw(-0.30000000000000004, T, 0.1, HOUR), { kind: FW, rate: 0.2, period: HOUR }, 0, { value: -0.6, ts: T }],
    ["1.2000000000000002 / 0.1 > 12: repaid in 12 windows, with nothing left", fw(-1.2000000000000002, T, 0.1, HOUR), { kind: FW, rate: 1, period: HOUR }, 0, { value: -12, ts: T }],
    ["repaid past 2^53 ms: the debt scaled by the rates per ms, never below -MAX_VALUE", fw(-1e300, T, 1, HOUR), { kind: FW, rate: 2, period: HOUR }, 0, { value: -2e300, ts: T }],
    ["scaled past -MAX_VALUE: held at -MAX_VALUE", fw(-1e308, T, 1, HOUR), { kind: FW, rate: 10, period: HOUR / 2 }, 0, { value: -Number.MAX_VALUE, ts: T }],
    ["its last window just past 2^53 ms: scaled (half the debt a 2-hour window)", fw(-2_501_999_782, T, 1, HOUR), { kind: FW, rate: 1, period: 2 * HOUR }, 0, { value: -1_250_999_891, ts: T }],
    // 2,501,999,792 hours end past 2^53 ms, one fewer doesn't: carried as scaled, 1 less than its last window would owe (the new windows start at :10).
    ["repaid in the hour from 2,501,999,792 h, which ends past 2^53 ms: scaled, with the phase moved", fw(-2_501_999_782, T, 1, HOUR), { kind: FW, rate: 1, period: HOUR, start: 10 * MINUTE }, 10 * MINUTE, { value: -2_501_999_782, ts: T - 50 * MINUTE }],
    // 2 ms windows at odd instants (written at T + 1): the window repaying it ends at 2^53 - 1 exactly, still exact, so scheduled.
    ["repaid in the 2 ms window ending at 2^53 - 1 exactly: scheduled, not scaled", fw(-(4_503_599_627_370_495 - 18_000_000 - 1), T + 1, 1, 2), { kind: FW, rate: 1, period: 2, start: 0 }, 0, { value: -4_503_599_609_370_495, ts: T }],
    // 3 × 0.3 falls 1.1e-16 short of 0.9 in floats, as the window algebra adds them: repaid at 14:00, not 13:00.
    ["0.9 owed at 0.3 an hour, which 3 windows leave 1.1e-16 short of: repaid at 14:00", fw(-0.9, T, 0.3, HOUR), { kind: FW, rate: 0.6, period: HOUR, start: 0 }, 0, { value: -2.1, ts: T }],
  ])("%s", (_why, row, config, phase, state) => {
    expect(plain(relayout([row], config, phase, T + 7))).toEqual([state]);
  });

  test.each<[string, StoredRow, RateLimitConfig, Plain]>([
    ["old rate 0 (never repaid): held as it is to its window's end", fw(-5, T, 0, HOUR), { kind: FW, rate: 2, period: HOUR }, { value: -5, ts: T }],
    ["new rate 0 (grants nothing): held as it is", fw(-5, T, 10, HOUR), { kind: FW, rate: 0, period: HOUR }, { value: -5, ts: T }],
    ["a token bucket's old rate 0", { shard: 0, value: -5, ts: T, shards: 1, kind: TB, rate: 0, period: HOUR, capacity: 10 }, { kind: TB, rate: 2, period: HOUR }, { value: -5, ts: T }],
    ["a token bucket's new rate 0", { shard: 0, value: -5, ts: T, shards: 1, kind: TB, rate: 10, period: HOUR, capacity: 10 }, { kind: TB, rate: 0, period: HOUR, capacity: 10 }, { value: -5, ts: T }],
    ["an approximate sliding window owes: carried as it is (no promise to scale)", { shard: 0, value: -5, ts: T, prev: 3, shards: 1, kind: "sliding window", rate: 10, period: HOUR, capacity: 10 }, sw(20, HOUR, { exact: false, start: 0 }), { value: -5, ts: T }],
    ["a calendar day's debt: held to the day's end, not scheduled as a fixed window's", fw(-3, 0, 10, DAY, { terms: JSON.stringify([FW, 10, DAY, 10, 1, null, ["day", "UTC", 1]]) }), { ...calendarWindow({ kind: "calendar", rate: 20, period: "day" }) }, { value: -3, ts: 0 }],
    ["an hourly window's debt carried into a calendar day: held to the hour's end, in the day's window", fw(-3, T, 10, HOUR), calendarWindow({ kind: "calendar", rate: 10, period: "day" }), { value: -3, ts: 0 }],
    ["a calendar day's debt carried into hourly windows: held to the day's end, so nothing before 24:00", fw(-3, 0, 10, DAY, { terms: JSON.stringify([FW, 10, DAY, 10, 1, null, ["day", "UTC", 0]]) }), { kind: FW, rate: 20, period: HOUR, start: 0 }, { value: -3, ts: DAY - HOUR }],
  ])("%s", (_why, row, config, state) => {
    expect(plain(relayout([row], config, 0, T + 7))).toEqual([state]);
  });
});

describe("rows carried into another kind, and the window a row's own terms end", () => {
  test.each<[string, StoredRow, RateLimitConfig, Plain]>([
    ["an exact window's row (with a log) carried into a token bucket: its value, no log", ex(0, 1, 5, [{ at: T - 20 * MINUTE, count: 3 }, { at: T - 5 * MINUTE, count: 2 }], 10), { kind: TB, rate: 20, period: HOUR }, { value: 5, ts: T }],
    ["an exact window's row (5 of 10 left) carried into a token bucket of capacity 4: 4, not what its takes leave of 4 (-1)", ex(0, 1, 5, [{ at: T - 20 * MINUTE, count: 3 }, { at: T - 5 * MINUTE, count: 2 }], 10), { kind: TB, rate: 20, period: HOUR, capacity: 4 }, { value: 4, ts: T }],
    ["a token bucket's row carrying a log's bytes (no write of ours makes it) into an exact window: its 6 used taken at its ts, the bytes ignored", { shard: 0, value: 4, ts: T, shards: 1, kind: TB, rate: 10, period: HOUR, capacity: 10, log: encodeLog([{ at: T - 20 * MINUTE, count: 3 }]) }, sw(10, HOUR), { value: 4, ts: T, log: [{ at: T, count: 6 }] }],
    // Only whole terms of 7 members record a calendar: an 8th member makes them some other terms.
    ["a row whose terms have 8 members, the 7th a day's calendar: an hourly row (held to 01:00), not a calendar day's", fw(3, 0, 10, HOUR, { terms: JSON.stringify([FW, 10, HOUR, 10, 1, 0, ["day", "UTC", 0], 0]) }), { kind: FW, rate: 20, period: HOUR, start: 0 }, { value: 3, ts: 0 }],
    ["a 2-day window's row carried into a calendar day: held to its own end (day 2), not the calendar day's", fw(3, 0, 10, 2 * DAY), calendarWindow({ kind: "calendar", rate: 10, period: "day" }), { value: 3, ts: DAY }],
  ])("%s", (_why, row, config, state) => {
    expect(plain(relayout([row], config, 0, T + 7))).toEqual([state]);
  });
});

describe("rows without a recorded layout (upstream's), and recorded windows of other lengths, carried into a fixed window", () => {
  test.each<[string, StoredRow, RateLimitConfig, Plain]>([
    ["a debt off the window start: held to ts + period (11:00 and 5 ms), in the window from 11:00: no promise to keep", { shard: 0, value: -3, ts: T + 5 }, { kind: FW, rate: 10, period: HOUR, start: 0 }, { value: -3, ts: T + HOUR }],
    ["tokens off the window start: held to the end of a window from ts, in the window before 11:00 + 5 ms", { shard: 0, value: 3, ts: T + 5 }, { kind: FW, rate: 10, period: HOUR, start: 0 }, { value: 3, ts: T + HOUR }],
    ["into a calendar day: held to the end of the day holding ts", { shard: 0, value: 3, ts: T + 5 }, calendarWindow({ kind: "calendar", rate: 10, period: "day" }), { value: 3, ts: 0 }],
    ["a recorded hourly row into a calendar day: to the hour's end, in the day's window", fw(3, T, 10, HOUR), calendarWindow({ kind: "calendar", rate: 10, period: "day" }), { value: 3, ts: 0 }],
  ])("%s", (_why, row, config, state) => {
    expect(plain(relayout([row], config, 0, T + 7))).toEqual([state]);
  });

  test("a day's window row carried into an hour: the hour from the day's end, not from 11:00", () => {
    // Held to 24:00 (its own period): the new hourly windows open at 24:00, so the state sits in the window before.
    expect(plain(relayout([fw(4, 0, 10, DAY)], { kind: FW, rate: 10, period: HOUR, start: 0 }, 0, T + 7))).toEqual([{ value: 4, ts: DAY - HOUR }]);
  });
});

describe("an exact window's log carried into other terms at the same shard count (keptLog)", () => {
  // 3 taken at 09:40 and 2 at 09:55 under 10 an hour; the row written at 10:00 holds 5.
  const L: Entry[] = [
    { at: T - 20 * MINUTE, count: 3 },
    { at: T - 5 * MINUTE, count: 2 },
  ];
  test.each<[string, StoredRow, RateLimitConfig, Plain]>([
    ["capacity raised to 15: the 5 extra taken at 10:00, so it holds 5, not 10", ex(0, 1, 5, L, 10), sw(10, HOUR, { capacity: 15 }), { value: 5, ts: T, log: [...L, { at: T, count: 5 }] }],
    ["capacity lowered to 4: the takes kept, and it owes 1", ex(0, 1, 5, L, 10), sw(10, HOUR, { capacity: 4 }), { value: -1, ts: T, log: L }],
    ["rate raised to 20 (capacity with it): 10 extra taken at 10:00", ex(0, 1, 5, L, 10), sw(20, HOUR), { value: 5, ts: T, log: [...L, { at: T, count: 10 }] }],
    ["period halved: each take moved 30 minutes later, leaving when it would have", ex(0, 1, 5, L, 10), sw(10, 30 * MINUTE), { value: 5, ts: T, log: L.map((e) => ({ at: e.at + 30 * MINUTE, count: e.count })) }],
    ["period doubled: the takes stay where they were", ex(0, 1, 5, L, 10), sw(10, 2 * HOUR), { value: 5, ts: T, log: L }],
    ["bytes that aren't a log: its 5 used taken at its ts", ex(0, 1, 5, undefined, 10, { log: NOT_A_LOG }), sw(10, 2 * HOUR), { value: 5, ts: T, log: [{ at: T, count: 5 }] }],
    ["a row recording its kind and terms but not its numbers (no write of ours makes it): its log kept as it is, nothing extra taken", { shard: 0, value: 5, ts: T, kind: EX, terms: "[]", log: encodeLog(L) }, sw(15, 30 * MINUTE), { value: 10, ts: T, log: L }],
    ["no log and full: full, with no log", ex(0, 1, 10, undefined, 10), sw(10, 2 * HOUR), { value: 10, ts: T }],
    ["no log, 4 used: taken at its ts", ex(0, 1, 6, undefined, 10), sw(10, 2 * HOUR), { value: 6, ts: T, log: [{ at: T, count: 4 }] }],
    ["a token bucket's row: its 6 used taken at its ts", { shard: 0, value: 4, ts: T, shards: 1, kind: TB, rate: 10, period: HOUR, capacity: 10 }, sw(10, HOUR), { value: 4, ts: T, log: [{ at: T, count: 6 }] }],
  ])("%s", (_why, row, config, state) => {
    expect(plain(relayout([row], config, 0, T + 7))).toEqual([state]);
  });
});

describe("an exact window's logs shared out over another shard count (hasLog, carriedLogs)", () => {
  const L: Entry[] = [
    { at: T - 20 * MINUTE, count: 3 },
    { at: T - 5 * MINUTE, count: 2 },
  ];
  const first: Entry[] = [{ at: T - 20 * MINUTE, count: 3 }];
  test.each<[string, StoredRow[], RateLimitConfig, Plain[]]>([
    ["1 → 2: the takes shared in proportion to capacities, each at its instant", [ex(0, 1, 5, L, 10)], sw(10, HOUR, { shards: 2 }), [
      { value: 2, ts: T, log: [{ at: T - 20 * MINUTE, count: 2 }, { at: T - 5 * MINUTE, count: 1 }] },
      { value: 3, ts: T, log: [{ at: T - 20 * MINUTE, count: 1 }, { at: T - 5 * MINUTE, count: 1 }] },
    ]],
    ["1 → 2 with capacity 14: the 4 extra taken at 10:00", [ex(0, 1, 5, L, 10)], sw(10, HOUR, { shards: 2, capacity: 14 }), [
      { value: 2, ts: T, log: [{ at: T - 20 * MINUTE, count: 2 }, { at: T - 5 * MINUTE, count: 1 }, { at: T, count: 2 }] },
      { value: 3, ts: T, log: [{ at: T - 20 * MINUTE, count: 1 }, { at: T - 5 * MINUTE, count: 1 }, { at: T, count: 2 }] },
    ]],
    ["1 → 2 with capacity 4: the takes kept, the shards owe", [ex(0, 1, 5, L, 10)], sw(10, HOUR, { shards: 2, capacity: 4 }), [
      { value: -1, ts: T, log: [{ at: T - 20 * MINUTE, count: 2 }, { at: T - 5 * MINUTE, count: 1 }] },
      { value: 0, ts: T, log: [{ at: T - 20 * MINUTE, count: 1 }, { at: T - 5 * MINUTE, count: 1 }] },
    ]],
    ["2 → 1: the logs merged", [ex(0, 2, 2, first, 5), ex(1, 2, 3, [{ at: T - 5 * MINUTE, count: 2 }], 5)], sw(10, HOUR), [{ value: 5, ts: T, log: L }]],
    ["2 → 1, shard 1 never written: it counts full", [ex(0, 2, 2, first, 5)], sw(10, HOUR), [{ value: 7, ts: T, log: first }]],
    ["2 → 3, shard 1 full without a log: the log of shard 0 shared out", [ex(0, 2, 2, first, 5), ex(1, 2, 5, undefined, 5)], sw(10, HOUR, { shards: 3 }), [
      { value: 3, ts: T, log: [{ at: T - 20 * MINUTE, count: 1 }] },
      { value: 2, ts: T, log: [{ at: T - 20 * MINUTE, count: 1 }] },
      { value: 2, ts: T, log: [{ at: T - 20 * MINUTE, count: 1 }] },
    ]],
    ["2 → 3, shard 1 used without a log: no log carried, the total split", [ex(0, 2, 2, first, 5), ex(1, 2, 4, undefined, 5)], sw(10, HOUR, { shards: 3 }), [{ value: 2, ts: T }, { value: 2, ts: T }, { value: 2, ts: T }]],
    ["2 → 3, shard 1 a token bucket's: no log carried", [ex(0, 2, 2, first, 5), { shard: 1, value: 4, ts: T, shards: 2, kind: TB, rate: 5, period: HOUR, capacity: 5 }], sw(10, HOUR, { shards: 3 }), [{ value: 2, ts: T }, { value: 2, ts: T }, { value: 2, ts: T }]],
    ["2 → 3, shard 1 a full token bucket's: no log carried (a token bucket's row keeps none)", [ex(0, 2, 2, first, 5), { shard: 1, value: 5, ts: T, shards: 2, kind: TB, rate: 5, period: HOUR, capacity: 5 }], sw(10, HOUR, { shards: 3 }), [{ value: 3, ts: T }, { value: 2, ts: T }, { value: 2, ts: T }]],
    ["2 → 3, shard 1 upstream's and full (no kind: taken to be the current one's): the log of shard 0 shared out", [ex(0, 2, 2, first, 5), { shard: 1, value: 5, ts: T }], sw(10, HOUR, { shards: 3 }), [
      { value: 3, ts: T, log: [{ at: T - 20 * MINUTE, count: 1 }] },
      { value: 2, ts: T, log: [{ at: T - 20 * MINUTE, count: 1 }] },
      { value: 2, ts: T, log: [{ at: T - 20 * MINUTE, count: 1 }] },
    ]],
    ["2 → 3, shard 1's bytes aren't a log: no log carried", [ex(0, 2, 2, first, 5), ex(1, 2, 4, undefined, 5, { log: NOT_A_LOG })], sw(10, HOUR, { shards: 3 }), [{ value: 2, ts: T }, { value: 2, ts: T }, { value: 2, ts: T }]],
    ["1 → 2, the take left the window: both shards full, no log", [ex(0, 1, 5, [{ at: T - 2 * HOUR, count: 5 }], 10)], sw(10, HOUR, { shards: 2 }), [{ value: 5, ts: T }, { value: 5, ts: T }]],
    ["upstream's rows (no kind, no log) 2 → 1: counted as tokens", [{ shard: 0, value: 3, ts: T }, { shard: 1, value: 5, ts: T }], sw(10, HOUR), [{ value: 8, ts: T }]],
  ])("%s", (_why, rows, config, states) => {
    expect(plain(relayout(rows, config, 0, T + 7))).toEqual(states);
  });

  test("3 → 1 at a rate of 1: shards 1 and 2 had no rate under 3 shards, so no log is carried", () => {
    const rows = [ex(0, 3, 0, [{ at: T - 20 * MINUTE, count: 1 }], 1), ex(1, 3, 0, undefined, 0), ex(2, 3, 0, undefined, 0, { capacity: 0 })];
    expect(plain(relayout(rows, sw(1, HOUR), 0, T + 7))).toEqual([{ value: 0, ts: T }]);
  });
});

describe("relayout's sums (lowered capacity, a rate of 0, a fixed window's promise)", () => {
  test("3 full shards of 10 into 2 of capacity 15 (a total of 30 over 15): each shard full at 15, the rest lost", () => {
    const rows = [0, 1, 2].map((i): StoredRow => ({ shard: i, value: 10, ts: T, shards: 3, kind: TB, rate: 10, period: HOUR, capacity: 10 }));
    expect(relayout(rows, { kind: TB, rate: 30, period: HOUR, capacity: 15, shards: 2 }, 0, T + 7)).toEqual([
      { value: 8, ts: T },
      { value: 7, ts: T },
    ]);
  });

  test("a rate of 0 over 2 shards with nothing left: both shards hold 0, not NaN", () => {
    const row: StoredRow = { shard: 0, value: 0, ts: T, shards: 1, kind: TB, rate: 10, period: HOUR, capacity: 10 };
    expect(relayout([row], { kind: TB, rate: 0, period: HOUR, capacity: 10, shards: 2 }, 0, T + 7)).toEqual([
      { value: 0, ts: T },
      { value: 0, ts: T },
    ]);
  });

  test("a fixed window's rows count at the earlier of their stamp and their carried window's start", () => {
    // Shard 1 written at 10:30 under hourly windows, into 2-hour windows (start 0): its promise ends at 11:30, in the window from 10:00.
    const rows = [fw(2, T, 10, HOUR, { shards: 2 }), fw(2, T + 30 * MINUTE, 10, HOUR, { shard: 1, shards: 2 })];
    expect(relayout(rows, { kind: FW, rate: 10, period: 2 * HOUR, start: 0, shards: 2 }, 0, T + 7)).toEqual([
      { value: 2, ts: T },
      { value: 2, ts: T },
    ]);
  });
});
