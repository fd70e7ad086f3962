// Calendar costs (src/shared/core/calendar.ts): how many formatters it builds and how often it reads a zone's clock (Intl.DateTimeFormat and formatToParts, counted by spies, never timed) — one formatter per zone, none for UTC, each period start computed once, the last period found answered from memory, the wall clock's guess landing on the period, and the two memos' bound of 4096.
import { afterEach, beforeEach, describe, expect, test, vi, type MockInstance } from "vitest";
import type { Calendar } from "../src/shared/core/calendar.js";

type CalendarModule = typeof import("../src/shared/core/calendar.js");

const Formatter = Intl.DateTimeFormat;
let built: MockInstance;
let reads: MockInstance<Intl.DateTimeFormat["formatToParts"]>;

beforeEach(() => {
  // The constructor is wrapped (not replaced) so every formatter is a real one.
  built = vi.spyOn(Intl, "DateTimeFormat").mockImplementation(function (...args: ConstructorParameters<typeof Formatter>) {
    return new Formatter(...args);
  } as never);
  reads = vi.spyOn(Formatter.prototype, "formatToParts");
});

afterEach(() => {
  vi.restoreAllMocks();
});

// Fresh copies of the module (no formatter, no memoized start, no last period: they are module
// state), one per test that counts from a cold start. They are loaded with the file, not inside a
// test: Stryker counts the code a test runs as that test's, and the module's constant tables would
// then be mutated for these tests instead of left to the validators' tests.
const copies: CalendarModule[] = [];
for (let i = 0; i < 19; i++) {
  vi.resetModules();
  copies.push(await import("../src/shared/core/calendar.js"));
}

/** A fresh copy of the module, not used by any other test. */
function fresh(): CalendarModule {
  const copy = copies.pop();
  if (copy === undefined) throw new Error("calendar-cost: more tests than fresh copies, load more");
  return copy;
}

/** The zone clock reads (formatToParts calls) `f` makes. */
function readsOf(f: () => unknown): number {
  const before = reads.mock.calls.length;
  f();
  return reads.mock.calls.length - before;
}

/** The clock reads `f` makes at `t`'s second, i.e. of `t`'s own wall clock (periodIndex's first guess). */
function readsAt(t: number, f: () => unknown): number {
  const before = reads.mock.calls.length;
  f();
  const second = Math.floor(t / 1000) * 1000;
  return reads.mock.calls.slice(before).filter((c) => c[0] === second).length;
}

const iso = (s: string) => Date.parse(s);

// Asia/Tokyo has kept +09:00 without summer time since 1951: every instant here is far from a change.
const TOKYO = "Asia/Tokyo";
const tokyoDay: Calendar = { period: "day", timeZone: TOKYO, anchor: 0 };
const utcDay = (anchor: number): Calendar => ({ period: "day", timeZone: "UTC", anchor });

// instantOf reads the clock twice a day either side of w (the offset there, then the offset where
// that places w) and once per distinct offset found: 5 where the zone has one offset all around.
const START_READS = 5;

describe("formatters: one per zone, none for UTC or an empty name", () => {
  test("a zone's formatter is built once, however many instants of it are read", () => {
    const cal = fresh();
    cal.wallClock(iso("2026-06-10T00:00:00Z"), TOKYO);
    cal.wallClock(iso("2026-06-11T07:30:00Z"), TOKYO);
    expect(cal.isTimeZone(TOKYO)).toBe(true);
    cal.periodIndex(iso("2026-06-12T00:00:00Z"), tokyoDay);
    cal.wallClock(iso("2026-06-10T00:00:00Z"), "Europe/London");
    expect(built.mock.calls.map((c) => (c[1] as Intl.DateTimeFormatOptions).timeZone)).toEqual([TOKYO, "Europe/London"]);
  });

  test("an empty zone name is refused without building a formatter", () => {
    const cal = fresh();
    expect(cal.isTimeZone("")).toBe(false);
    expect(built).not.toHaveBeenCalled();
  });

  test("UTC's wall clock is the instant itself, with no formatter and no read", () => {
    const cal = fresh();
    const t = iso("2026-06-10T12:34:56.789Z");
    expect(cal.wallClock(t, "UTC")).toBe(t);
    expect(cal.instantOf(t, "UTC")).toBe(t);
    expect(cal.periodIndex(t, utcDay(0))).toBe(20614);
    expect(cal.periodStart(2026 * 12 + 5, { period: "month", timeZone: "UTC", anchor: 1 })).toBe(iso("2026-06-01T00:00:00Z"));
    expect(built).not.toHaveBeenCalled();
    expect(reads).not.toHaveBeenCalled();
  });
});

describe("instantOf's reads", () => {
  test(`${START_READS} reads in a zone with one offset around w`, () => {
    const cal = fresh();
    let start = 0;
    expect(readsOf(() => (start = cal.instantOf(iso("2026-06-15T00:00:00Z"), TOKYO)))).toBe(START_READS);
    expect(start).toBe(iso("2026-06-14T15:00:00Z"));
  });
});

describe("periodStart: each start is computed once (a memo of 4096 starts)", () => {
  test("asking again for a start, or for the one before, reads no clock", () => {
    const cal = fresh();
    expect(readsOf(() => cal.periodStart(20_600, tokyoDay))).toBe(START_READS);
    expect(readsOf(() => cal.periodStart(20_601, tokyoDay))).toBe(START_READS);
    expect(readsOf(() => cal.periodStart(20_600, tokyoDay))).toBe(0);
    expect(readsOf(() => cal.periodStart(20_601, tokyoDay))).toBe(0);
  });

  test("the memo keeps 4096 starts, and the 4097th starts it afresh", () => {
    const cal = fresh();
    const start = cal.periodStart(20_600, tokyoDay);
    // 4095 more starts, in UTC (no reads of their own): 4096 held.
    for (let k = 0; k < 4095; k++) cal.periodStart(k, utcDay(0));
    expect(readsOf(() => expect(cal.periodStart(20_600, tokyoDay)).toBe(start))).toBe(0);
    cal.periodStart(4095, utcDay(0));
    expect(readsOf(() => expect(cal.periodStart(20_600, tokyoDay)).toBe(start))).toBe(START_READS);
  });
});

describe("periodIndex: one read of t's wall clock, whose guess lands on the period, then both its bounds checked (two starts, no third)", () => {
  // A cold module computes the period's start and the next one's, and no other: a guess low by a
  // period, or high by two, would compute a third start (and more for each period further).
  test.each([
    ["a day from 06:00, at 03:00 (the day before's period)", { period: "day", timeZone: TOKYO, anchor: 6 }, "2026-06-10T03:00:00+09:00", "2026-06-09T06:00:00+09:00"],
    ["a day from 06:00, at 20:00", { period: "day", timeZone: TOKYO, anchor: 6 }, "2026-06-10T20:00:00+09:00", "2026-06-10T06:00:00+09:00"],
    ["a day from 23:00, at 01:00 (the day before's period)", { period: "day", timeZone: TOKYO, anchor: 23 }, "2026-06-10T01:00:00+09:00", "2026-06-09T23:00:00+09:00"],
    ["a day from 06:00, at 06:00 exactly", { period: "day", timeZone: TOKYO, anchor: 6 }, "2026-06-10T06:00:00+09:00", "2026-06-10T06:00:00+09:00"],
    ["a week from Monday, on a Wednesday", { period: "week", timeZone: TOKYO, anchor: 1 }, "2026-06-10T12:00:00+09:00", "2026-06-08T00:00:00+09:00"],
    ["a week from Monday, on its Sunday", { period: "week", timeZone: TOKYO, anchor: 1 }, "2026-06-14T12:00:00+09:00", "2026-06-08T00:00:00+09:00"],
    ["a week from Monday, at Monday 00:00", { period: "week", timeZone: TOKYO, anchor: 1 }, "2026-06-08T00:00:00+09:00", "2026-06-08T00:00:00+09:00"],
    ["a month from the 15th, on the 3rd (the month before's period)", { period: "month", timeZone: TOKYO, anchor: 15 }, "2026-06-03T12:00:00+09:00", "2026-05-15T00:00:00+09:00"],
    ["a month from the 15th, on the 20th", { period: "month", timeZone: TOKYO, anchor: 15 }, "2026-06-20T12:00:00+09:00", "2026-06-15T00:00:00+09:00"],
    ["a month from the 15th, at the 15th 00:00", { period: "month", timeZone: TOKYO, anchor: 15 }, "2026-06-15T00:00:00+09:00", "2026-06-15T00:00:00+09:00"],
  ] as const)("%s", (_why, c: Calendar, at, startsAt) => {
    const cal = fresh();
    const t = iso(at);
    let k = 0;
    expect(readsOf(() => (k = cal.periodIndex(t, c)))).toBe(1 + 2 * START_READS);
    expect(readsOf(() => expect(cal.periodStart(k, c)).toBe(iso(startsAt)))).toBe(0);
    expect(readsOf(() => cal.periodStart(k + 1, c))).toBe(0);
  });
});

describe("periodIndex: the last period found, and its neighbours, are answered without reading the clock", () => {
  test("the period again, the next, the one before, and the period's first instant", () => {
    const cal = fresh();
    const day = (k: number) => cal.periodStart(k, tokyoDay);
    const k = 20_600;
    for (let j = k - 2; j <= k + 3; j++) day(j);
    expect(readsOf(() => expect(cal.periodIndex(day(k) + 5 * 3_600_000, tokyoDay)).toBe(k))).toBe(1);
    expect(readsOf(() => expect(cal.periodIndex(day(k) + 7 * 3_600_000, tokyoDay)).toBe(k))).toBe(0);
    expect(readsOf(() => expect(cal.periodIndex(day(k + 1) + 1, tokyoDay)).toBe(k + 1))).toBe(0);
    expect(readsOf(() => expect(cal.periodIndex(day(k) - 1, tokyoDay)).toBe(k - 1))).toBe(0);
    expect(readsOf(() => expect(cal.periodIndex(day(k), tokyoDay)).toBe(k))).toBe(0);
    // Two periods on is not a neighbour: found from the wall clock.
    expect(readsOf(() => expect(cal.periodIndex(day(k + 2), tokyoDay)).toBe(k + 2))).toBe(1);
  });

  test("each calendar keeps its own last period", () => {
    const cal = fresh();
    const week: Calendar = { period: "week", timeZone: TOKYO, anchor: 1 };
    const t = iso("2026-06-10T12:00:00+09:00");
    const d = cal.periodIndex(t, tokyoDay);
    const w = cal.periodIndex(t, week);
    expect(readsOf(() => expect(cal.periodIndex(t + 1, tokyoDay)).toBe(d))).toBe(0);
    expect(readsOf(() => expect(cal.periodIndex(t + 1, week)).toBe(w))).toBe(0);
  });

  test("the memo keeps 4096 calendars' last periods, and the 4097th starts it afresh", () => {
    const cal = fresh();
    const t = iso("2026-06-10T12:00:00+09:00");
    const k = cal.periodIndex(t, tokyoDay);
    // 4095 more calendars (UTC days from distinct hours, no reads of their own): 4096 held. Their
    // starts push Tokyo's out of the memo of starts, so only the read of t itself tells the paths apart.
    for (let a = 0; a < 4095; a++) cal.periodIndex(t, utcDay(a));
    expect(readsAt(t, () => expect(cal.periodIndex(t, tokyoDay)).toBe(k))).toBe(0);
    cal.periodIndex(t, utcDay(4095));
    expect(readsAt(t, () => expect(cal.periodIndex(t, tokyoDay)).toBe(k))).toBe(1);
  });
});
