// Calendar edges that calendar-algebra.test.ts leaves open (src/shared/core/calendar.ts, pure, explicit values): each period's nominal length, which zone names are known, wallClock's seconds in a zone with an offset, ±Infinity (no instant), a day whose anchor hour a clock change repeats (Chatham), UTC's instantOf, an unknown period, where week 0 starts, and months at the ends of the Date range.
import { describe, expect, test } from "vitest";
import { instantOf, isTimeZone, nominalLength, periodIndex, periodStart, wallClock, type Calendar } from "../src/shared/core/calendar.js";

const iso = (s: string) => Date.parse(s);

describe("nominalLength: a period's usual length, for estimates", () => {
  test.each([
    ["day", 86_400_000],
    ["week", 604_800_000],
    ["month", 2_592_000_000],
  ] as const)("a %s is %d ms", (period, ms) => {
    expect(nominalLength(period)).toBe(ms);
  });
});

describe("isTimeZone", () => {
  test.each([
    ["UTC", true],
    ["Europe/London", true],
    ["america/new_york", true], // Intl reads zone names case-insensitively
    ["", false], // no zone is named
    ["Nowhere/Special", false],
  ])("%j: %s", (zone, known) => {
    expect(isTimeZone(zone)).toBe(known);
  });
});

describe("wallClock keeps the seconds and the ms of the local time", () => {
  test.each([
    ["Kathmandu (+5:45)", "Asia/Kathmandu", "2026-06-10T18:15:37.250Z", "2026-06-11T00:00:37.250Z"],
    ["New York (EDT, −4)", "America/New_York", "2026-07-04T16:59:59.999Z", "2026-07-04T12:59:59.999Z"],
  ])("%s", (_why, zone, t, wall) => {
    expect(wallClock(iso(t), zone)).toBe(iso(wall));
  });
});

describe("no instant: ±Infinity index and start as themselves, as windowIndex does", () => {
  const london: Calendar = { period: "day", timeZone: "Europe/London", anchor: 0 };
  test.each([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])("%d", (t) => {
    expect(periodIndex(t, london)).toBe(t);
    expect(periodStart(t, london)).toBe(t);
  });
});

describe("a day whose anchor hour is repeated by a half-hour-aligned change: the wall clock's first guess is a day early", () => {
  // Pacific/Chatham goes from +13:45 to +12:45 at 03:45 local on 5 April 2026: 02:45–03:45 happens
  // twice. A day anchored at 03:00 starts at the first 03:00 (13:15Z); at 14:00Z the clock reads
  // 02:45 again, before 03:00, yet the day has begun.
  const chatham: Calendar = { period: "day", timeZone: "Pacific/Chatham", anchor: 3 };
  test("14:00Z is in the day that began at 13:15Z, to the next 03:00 (+12:45)", () => {
    // An instant years away first, so the index isn't answered from the last one found.
    periodIndex(iso("2020-01-01T00:00:00Z"), chatham);
    const k = periodIndex(iso("2026-04-04T14:00:00Z"), chatham);
    expect(new Date(periodStart(k, chatham)).toISOString()).toBe("2026-04-04T13:15:00.000Z");
    expect(new Date(periodStart(k + 1, chatham)).toISOString()).toBe("2026-04-05T14:15:00.000Z");
    expect(periodIndex(iso("2026-04-04T13:14:59.999Z"), chatham)).toBe(k - 1);
  });
});

describe("instantOf in UTC is the instant itself, ±Infinity included", () => {
  test.each([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0, iso("2026-06-10T12:34:56.789Z")])("%d", (w) => {
    expect(instantOf(w, "UTC")).toBe(w);
  });
});

describe("a calendar of an unknown period throws (checkConfig refuses it first; the core never guesses a start)", () => {
  const year = { period: "year", timeZone: "UTC", anchor: 1 } as unknown as Calendar;
  test("periodStart", () => {
    expect(() => periodStart(0, year)).toThrow(new Error("unknown period year"));
  });
  test("periodIndex", () => {
    expect(() => periodIndex(0, year)).toThrow(new Error("unknown period year"));
  });
});

describe("week 0 starts on the first anchor weekday on or after Thursday 1 January 1970", () => {
  test.each([
    [0, "1970-01-04"],
    [1, "1970-01-05"],
    [2, "1970-01-06"],
    [3, "1970-01-07"],
    [4, "1970-01-01"],
    [5, "1970-01-02"],
    [6, "1970-01-03"],
  ])("weekday %d: %s", (anchor, day) => {
    const week: Calendar = { period: "week", timeZone: "UTC", anchor };
    expect(new Date(periodStart(0, week)).toISOString()).toBe(`${day}T00:00:00.000Z`);
    expect(periodIndex(iso(`${day}T00:00:00Z`), week)).toBe(0);
    expect(periodIndex(iso(`${day}T00:00:00Z`) - 1, week)).toBe(-1);
  });
});

describe("month starts hold to the end of the Date range", () => {
  test.each([
    [1, 275_000 * 12, "+275000-01-01T00:00:00.000Z"],
    [31, 275_000 * 12 + 1, "+275000-02-28T00:00:00.000Z"], // clamped to February's last day
    [15, -(271_000 * 12), "-271000-01-15T00:00:00.000Z"],
  ])("anchor %d, month %d: %s", (anchor, k, start) => {
    const month: Calendar = { period: "month", timeZone: "UTC", anchor };
    expect(new Date(periodStart(k, month)).toISOString()).toBe(start);
    expect(periodIndex(Date.parse(start), month)).toBe(k);
  });
});
