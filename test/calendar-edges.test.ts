// Calendar edges that calendar-algebra.test.ts leaves open (src/shared/core/calendar.ts, pure, explicit values): each period's nominal length, which zone names are known, wallClock's seconds in a zone with an offset, and ±Infinity (no instant).
import { describe, expect, test } from "vitest";
import { isTimeZone, nominalLength, periodIndex, periodStart, wallClock, type Calendar } from "../src/shared/core/calendar.js";

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
