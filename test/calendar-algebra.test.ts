// Calendar quotas' periods and algebra (src/shared/core/calendar.ts, algebra.ts), as tables of explicit instants: days, weeks and months across daylight-saving changes (New York in March and November, London, Lord Howe's half hour), Kathmandu's +5:45, leap years, month anchors 29–31 in short months; local times skipped or repeated; and a fixed window's evaluation, refusal and retry on those periods.
import { describe, expect, test } from "vitest";
import { decideRow, evaluate, paramsOf } from "../src/shared/kinds/algebra.js";
import { instantOf, periodEnd, periodIndex, periodStart, wallClock, type Calendar } from "../src/shared/core/calendar.js";
import { calendarWindow, checkConfig } from "../src/shared/validation/validate-config.js";
import { isIdleKey } from "../src/shared/admin/idle.js";
import { configHash, relayout } from "../src/shared/shards/layout.js";
import type { StoredRow } from "../src/shared/shapes/stored.js";
import type { CalendarConfig } from "../src/shared/shapes/calendar-validators.js";

const iso = (s: string) => Date.parse(s);
const H = 3_600_000;

/** [why, zone, period, anchor, an instant, the start of its period, its end] */
type Row = [string, string, Calendar["period"], number, string, string, string];

const rows: Row[] = [
  // America/New_York: EST −5, EDT −4 from 2026-03-08 02:00 local, back to EST 2026-11-01 02:00 local.
  ["a plain day in New York (EST)", "America/New_York", "day", 0, "2026-01-15T12:00:00Z", "2026-01-15T05:00:00Z", "2026-01-16T05:00:00Z"],
  ["March's change: the day is 23 hours (EST midnight to EDT midnight)", "America/New_York", "day", 0, "2026-03-08T12:00:00Z", "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"],
  ["a day anchored at 02:00, skipped on 8 March: it starts when the gap ends, 03:00 EDT", "America/New_York", "day", 2, "2026-03-08T12:00:00Z", "2026-03-08T07:00:00Z", "2026-03-09T06:00:00Z"],
  ["the instant before the gap ends is still 7 March's day (anchored at 02:00)", "America/New_York", "day", 2, "2026-03-08T06:59:59.999Z", "2026-03-07T07:00:00Z", "2026-03-08T07:00:00Z"],
  ["November's change: the day is 25 hours", "America/New_York", "day", 0, "2026-11-01T12:00:00Z", "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"],
  ["a day anchored at 01:00, which happens twice on 1 November: it starts at the first (EDT)", "America/New_York", "day", 1, "2026-11-01T05:30:00Z", "2026-11-01T05:00:00Z", "2026-11-02T06:00:00Z"],
  ["the second 01:30 (EST) is in the same day, not a new one", "America/New_York", "day", 1, "2026-11-01T06:30:00Z", "2026-11-01T05:00:00Z", "2026-11-02T06:00:00Z"],
  ["the week (from Monday) holding March's change is 167 hours", "America/New_York", "week", 1, "2026-03-08T12:00:00Z", "2026-03-02T05:00:00Z", "2026-03-09T04:00:00Z"],
  ["a month from the 1st holding November's change: from EDT midnight to EST midnight", "America/New_York", "month", 1, "2026-11-15T00:00:00Z", "2026-11-01T04:00:00Z", "2026-12-01T05:00:00Z"],
  ["a month from the 8th, which starts on March's changing day at local midnight (before the gap)", "America/New_York", "month", 8, "2026-03-20T00:00:00Z", "2026-03-08T05:00:00Z", "2026-04-08T04:00:00Z"],
  // Europe/London: GMT, BST +1 from 2026-03-29 01:00 GMT, back 2026-10-25 02:00 BST.
  ["London's March change: the day is 23 hours", "Europe/London", "day", 0, "2026-03-29T12:00:00Z", "2026-03-29T00:00:00Z", "2026-03-29T23:00:00Z"],
  ["a day anchored at 01:00, skipped in London on 29 March: it starts at 02:00 BST", "Europe/London", "day", 1, "2026-03-29T12:00:00Z", "2026-03-29T01:00:00Z", "2026-03-30T00:00:00Z"],
  ["London's October change: the day is 25 hours", "Europe/London", "day", 0, "2026-10-25T12:00:00Z", "2026-10-24T23:00:00Z", "2026-10-26T00:00:00Z"],
  ["a week from Sunday holding London's March change", "Europe/London", "week", 0, "2026-04-01T12:00:00Z", "2026-03-29T00:00:00Z", "2026-04-04T23:00:00Z"],
  // Australia/Lord_Howe: +11 in summer, +10:30 from 2026-04-05 02:00 local, +11 again from 2026-10-04 02:00 local.
  ["Lord Howe's April change (half an hour back): the day is 24.5 hours", "Australia/Lord_Howe", "day", 0, "2026-04-05T02:00:00Z", "2026-04-04T13:00:00Z", "2026-04-05T13:30:00Z"],
  ["Lord Howe's October change (half an hour forward): the day is 23.5 hours", "Australia/Lord_Howe", "day", 0, "2026-10-04T02:00:00Z", "2026-10-03T13:30:00Z", "2026-10-04T13:00:00Z"],
  ["a day anchored at 02:00, skipped on Lord Howe's October change: it starts at 02:30", "Australia/Lord_Howe", "day", 2, "2026-10-04T02:00:00Z", "2026-10-03T15:30:00Z", "2026-10-04T15:00:00Z"],
  ["01:45 happens twice on Lord Howe's April change; the second is in the same day (anchored at 01:00)", "Australia/Lord_Howe", "day", 1, "2026-04-04T15:15:00Z", "2026-04-04T14:00:00Z", "2026-04-05T14:30:00Z"],
  // Asia/Kathmandu: +5:45 all year.
  ["a Kathmandu day starts at 18:15 UTC", "Asia/Kathmandu", "day", 0, "2026-06-10T20:00:00Z", "2026-06-10T18:15:00Z", "2026-06-11T18:15:00Z"],
  ["a Kathmandu month from the 1st", "Asia/Kathmandu", "month", 1, "2026-01-01T00:00:00Z", "2025-12-31T18:15:00Z", "2026-01-31T18:15:00Z"],
  ["a Kathmandu week from Monday, at 09:00 UTC on a Monday (14:45 local)", "Asia/Kathmandu", "week", 1, "2026-06-08T09:00:00Z", "2026-06-07T18:15:00Z", "2026-06-14T18:15:00Z"],
  // Leap years and anchors in short months (UTC).
  ["anchor 29 in a leap February: the 29th", "UTC", "month", 29, "2028-03-01T00:00:00Z", "2028-02-29T00:00:00Z", "2028-03-29T00:00:00Z"],
  ["anchor 29 in a common February: clamped to the 28th", "UTC", "month", 29, "2027-03-01T00:00:00Z", "2027-02-28T00:00:00Z", "2027-03-29T00:00:00Z"],
  ["anchor 29 in 2100 (not a leap year): the 28th", "UTC", "month", 29, "2100-03-01T00:00:00Z", "2100-02-28T00:00:00Z", "2100-03-29T00:00:00Z"],
  ["anchor 29 in 2000 (a leap year): the 29th", "UTC", "month", 29, "2000-03-01T00:00:00Z", "2000-02-29T00:00:00Z", "2000-03-29T00:00:00Z"],
  ["anchor 30 in February: its last day, then 30 March", "UTC", "month", 30, "2027-03-15T00:00:00Z", "2027-02-28T00:00:00Z", "2027-03-30T00:00:00Z"],
  ["anchor 31 in April: the 30th, then 31 May", "UTC", "month", 31, "2026-05-10T00:00:00Z", "2026-04-30T00:00:00Z", "2026-05-31T00:00:00Z"],
  ["anchor 31 from 31 January: to the last day of February", "UTC", "month", 31, "2026-02-01T00:00:00Z", "2026-01-31T00:00:00Z", "2026-02-28T00:00:00Z"],
  ["anchor 31 in a leap February: the 29th", "UTC", "month", 31, "2028-03-01T00:00:00Z", "2028-02-29T00:00:00Z", "2028-03-31T00:00:00Z"],
  ["a leap day is a day of its own", "UTC", "day", 0, "2028-02-29T12:00:00Z", "2028-02-29T00:00:00Z", "2028-03-01T00:00:00Z"],
  ["anchor 31 in New York's November: from 31 October (EDT) to 30 November (EST)", "America/New_York", "month", 31, "2026-11-10T00:00:00Z", "2026-10-31T04:00:00Z", "2026-11-30T05:00:00Z"],
  ["a period starts exactly at its start: that instant is in it", "UTC", "month", 1, "2026-02-01T00:00:00Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"],
  ["the last ms of a period is in it", "UTC", "month", 1, "2026-02-28T23:59:59.999Z", "2026-02-01T00:00:00Z", "2026-03-01T00:00:00Z"],
];

describe("periodIndex, periodStart and periodEnd: the period holding an instant", () => {
  test.each(rows)("%s", (_why, timeZone, period, anchor, t, start, end) => {
    const cal: Calendar = { period, timeZone, anchor };
    const k = periodIndex(iso(t), cal);
    expect(new Date(periodStart(k, cal)).toISOString()).toBe(new Date(iso(start)).toISOString());
    expect(new Date(periodEnd(iso(t), cal)).toISOString()).toBe(new Date(iso(end)).toISOString());
    // The neighbours: the period before ends where this one starts, the next starts where it ends.
    expect(periodIndex(iso(start) - 1, cal)).toBe(k - 1);
    expect(periodIndex(iso(end), cal)).toBe(k + 1);
    expect(periodIndex(iso(end) - 1, cal)).toBe(k);
  });
});

describe("instantOf: a local time's instant; skipped ones where the gap ends, repeated ones at their first", () => {
  test.each([
    ["New York 2026-03-08 02:30 (skipped): 03:00 EDT", "America/New_York", "2026-03-08T02:30:00Z", "2026-03-08T07:00:00Z"],
    ["New York 2026-11-01 01:30 (twice): the EDT one", "America/New_York", "2026-11-01T01:30:00Z", "2026-11-01T05:30:00Z"],
    ["London 2026-03-29 01:30 (skipped): 02:00 BST", "Europe/London", "2026-03-29T01:30:00Z", "2026-03-29T01:00:00Z"],
    ["London 2026-10-25 01:30 (twice): the BST one", "Europe/London", "2026-10-25T01:30:00Z", "2026-10-25T00:30:00Z"],
    ["Lord Howe 2026-10-04 02:15 (skipped): 02:30 (+11)", "Australia/Lord_Howe", "2026-10-04T02:15:00Z", "2026-10-03T15:30:00Z"],
    ["Lord Howe 2026-04-05 01:45 (twice): the +11 one", "Australia/Lord_Howe", "2026-04-05T01:45:00Z", "2026-04-04T14:45:00Z"],
    ["Kathmandu 2026-06-10 00:00", "Asia/Kathmandu", "2026-06-10T00:00:00Z", "2026-06-09T18:15:00Z"],
  ])("%s", (_why, zone, wall, instant) => {
    expect(new Date(instantOf(iso(wall), zone)).toISOString()).toBe(new Date(iso(instant)).toISOString());
  });

  test("wallClock keeps the ms and reads the zone's offset", () => {
    expect(wallClock(iso("2026-06-10T18:15:00.123Z"), "Asia/Kathmandu")).toBe(iso("2026-06-11T00:00:00.123Z"));
    expect(wallClock(iso("2026-01-01T00:00:00.5Z"), "UTC")).toBe(iso("2026-01-01T00:00:00.5Z"));
  });
});

describe("a calendar quota's algebra: a fixed window on the calendar's periods", () => {
  const config: CalendarConfig = { kind: "calendar", rate: 3, period: "day", timeZone: "America/New_York" };
  const p = paramsOf(calendarWindow(config), 0);
  const dayStart = iso("2026-03-08T05:00:00Z");
  const dayEnd = iso("2026-03-09T04:00:00Z"); // 23 hours later

  test("a missing row is full, stamped at its period's start", () => {
    expect(evaluate(null, p, iso("2026-03-08T12:00:00Z"))).toEqual({ value: 3, ts: dayStart });
  });

  test("used up: refused until the period ends, retryAfter running exactly to it; full at it, not a ms before", () => {
    const now = iso("2026-03-08T12:00:00Z");
    const used = { value: 0, ts: dayStart };
    const d = decideRow(used, p, now, 1, false);
    expect(d).toEqual({ ok: false, retryAfter: dayEnd - now });
    expect(evaluate(used, p, dayEnd - 1)).toEqual({ value: 0, ts: dayStart });
    expect(evaluate(used, p, dayEnd)).toEqual({ value: 3, ts: dayEnd });
    expect(decideRow(used, p, dayEnd, 1, false)).toMatchObject({ ok: true, next: { value: 2, ts: dayEnd } });
  });

  test("no rollover: a period unused grants its rate, not more", () => {
    expect(evaluate({ value: 3, ts: dayStart }, p, dayEnd + 5 * 24 * H).value).toBe(3);
  });

  test("reserve borrows nothing: a used-up period refuses it to the period's end", () => {
    const now = iso("2026-03-08T12:00:00Z");
    expect(p.maxReserved).toBe(0);
    expect(decideRow({ value: 0, ts: dayStart }, p, now, 1, true)).toEqual({ ok: false, retryAfter: dayEnd - now });
    expect(decideRow({ value: 1, ts: dayStart }, p, now, 1, true)).toEqual({ ok: true, next: { value: 0, ts: dayStart } });
  });

  test("a count above the rate can never succeed (the capacity is the rate)", () => {
    expect(() => decideRow(null, p, dayStart, 4, false)).toThrow(/count = 4: needs 4 tokens but the capacity is 3/);
  });

  test("a clock that runs backwards (pure layer only: convex-test's clock can't) gains nothing", () => {
    const row = { value: 1, ts: dayEnd };
    expect(evaluate(row, p, dayEnd - 10 * H)).toEqual({ value: 1, ts: dayEnd });
  });

  test("a month from the 31st refuses a used-up customer until the last day of February, local midnight", () => {
    const month = paramsOf(calendarWindow({ kind: "calendar", rate: 1000, period: "month", anchor: 31, timeZone: "Europe/London" }), 0);
    const now = iso("2026-02-10T09:00:00Z");
    const start = iso("2026-01-31T00:00:00Z");
    expect(evaluate(null, month, now)).toEqual({ value: 1000, ts: start });
    const d = decideRow({ value: 0, ts: start }, month, now, 1, false);
    expect(d).toEqual({ ok: false, retryAfter: iso("2026-02-28T00:00:00Z") - now });
  });
});

describe("clean-up: a calendar quota's key is idle once the period it took in has ended", () => {
  const config = calendarWindow({ kind: "calendar", rate: 3, period: "month", timeZone: "America/New_York" });
  const march = iso("2026-03-01T05:00:00Z");
  const april = iso("2026-04-01T04:00:00Z");
  const row: StoredRow = { shard: 0, value: 1, ts: march, h: configHash(config) };
  test.each([
    ["in March, with 2 taken: not idle", april - 1, false],
    ["at April's start: full again, idle", april, true],
  ])("%s", (_why, now, idle) => {
    expect(isIdleKey({ rows: [row], pending: [] }, config, 0, now)).toBe(idle);
  });
});

describe("changes never grant: a row of other calendar terms, carried over (pure: explicit instants)", () => {
  // The key used its whole allowance in a UTC month from the 1st; each row below is the state the
  // change leaves, and when the allowance comes back.
  const utc = calendarWindow({ kind: "calendar", rate: 10, period: "month" });
  const used: StoredRow = { shard: 0, value: 0, ts: iso("2026-03-01T00:00:00Z"), shards: 1, kind: "fixed window", rate: 10, period: utc.period, capacity: 10, terms: JSON.stringify(["fixed window", 10, utc.period, 10, 1, null, ["month", "UTC", 1]]) };
  test.each<[string, Parameters<typeof calendarWindow>[0], string]>([
    ["anchor 1 → 15: held to 1 April (the old month's end), back at the first 15th on or after it", { kind: "calendar", rate: 10, period: "month", anchor: 15 }, "2026-04-15T00:00:00Z"],
    ["anchor 1 → 31: not at 31 March (the old month runs to 1 April), at 30 April", { kind: "calendar", rate: 10, period: "month", anchor: 31 }, "2026-04-30T00:00:00Z"],
    ["month → week (Mondays): back at the first Monday on or after 1 April", { kind: "calendar", rate: 10, period: "week" }, "2026-04-06T00:00:00Z"],
    ["month → day: back at 1 April's midnight, where a day starts", { kind: "calendar", rate: 10, period: "day" }, "2026-04-01T00:00:00Z"],
    ["UTC → New York: back at New York's first month start on or after 1 April UTC", { kind: "calendar", rate: 10, period: "month", timeZone: "America/New_York" }, "2026-04-01T04:00:00Z"],
    ["UTC → Tokyo: 1 April in Tokyo began before the old month ended: back on 1 May, Tokyo", { kind: "calendar", rate: 10, period: "month", timeZone: "Asia/Tokyo" }, "2026-04-30T15:00:00Z"],
  ])("%s", (_why, next, back) => {
    const config = calendarWindow(next);
    const p = paramsOf(config, 0);
    const [state] = relayout([used], config, 0, iso("2026-03-20T00:00:00Z"));
    expect(decideRow(state!, p, iso(back) - 1, 1, false).ok).toBe(false);
    expect(decideRow(state!, p, iso(back), 1, false).ok).toBe(true);
  });
});

describe("the fixed window a quota runs as, as the component's functions take it: checked, naming the field", () => {
  const window = calendarWindow({ kind: "calendar", rate: 10, period: "month" });
  const calendar = { period: "month" as const, timeZone: "UTC", anchor: 1 };
  test.each<[string, object, string, string]>([
    ["a capacity", { capacity: 20 }, "config.capacity", "20"],
    ["a maxReserved", { maxReserved: 1 }, "config.maxReserved", "1"],
    ["a start", { start: 0 }, "config.start", "0"],
    ["an unknown zone", { calendar: { ...calendar, timeZone: "Nowhere/Special" } }, "config.calendar.timeZone", '"Nowhere/Special"'],
    ["anchor 0", { calendar: { ...calendar, anchor: 0 } }, "config.calendar.anchor", "0"],
    ["anchor 32", { calendar: { ...calendar, anchor: 32 } }, "config.calendar.anchor", "32"],
    ['period "year"', { calendar: { ...calendar, period: "year" } }, "config.calendar.period", '"year"'],
  ])("%s", (_why, change, field, value) => {
    let data: unknown;
    try {
      checkConfig({ ...window, ...change } as never);
    } catch (error) {
      data = (error as { data?: unknown }).data;
    }
    expect(data).toMatchObject({ kind: "InvalidRateLimit", field, value });
  });

  test("a calendar quota's own kind sent to the component is refused, saying the RateLimiter runs it", () => {
    expect(() => checkConfig({ kind: "calendar", rate: 1, period: "day" } as never)).toThrow(/calendar quota's kind/);
  });
});
