// Calendar periods in a time zone: which day, week or month contains an instant, and the instant
// each one starts. A calendar quota is a fixed window whose boundaries come from here instead of
// `phase + k * period`. Local wall time comes from the runtime's `Intl.DateTimeFormat` with an IANA
// `timeZone` (V8's ICU carries the zone data, in Convex's runtime as in Node and browsers); no zone
// table is written here. Pure: no clock, no randomness (a memo of period starts is a cache only).
import { math } from "./math.js";

/** The calendar periods a `kind: "calendar"` limit counts in. */
export type CalendarPeriod = "day" | "week" | "month";

/**
 * Calendar says where a calendar limit's periods start: `period`, the IANA `timeZone` its local
 * times are read in, and `anchor` (resolved, see {@link calendarOf}): for a day the local hour
 * (0–23) it starts at, for a week the weekday (0 Sunday … 6 Saturday) whose local midnight starts
 * it, for a month the day of the month (1–31, clamped to the month's last day) whose local
 * midnight starts it.
 */
export type Calendar = { period: CalendarPeriod; timeZone: string; anchor: number };

/** The default `anchor` of each period: midnight, Monday (an ISO week), the 1st. */
export const DEFAULT_ANCHOR: Record<CalendarPeriod, number> = { day: 0, week: 1, month: 1 };

/** The bounds of each period's `anchor`, inclusive. */
export const ANCHOR_RANGE: Record<CalendarPeriod, readonly [number, number]> = { day: [0, 23], week: [0, 6], month: [1, 31] };

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * nominalLength returns a period's usual length in ms (a day 86 400 000, a week 604 800 000, a
 * month 30 days), for estimates only (a pair's refill rate when balancing shards): every boundary
 * is computed from the calendar.
 */
export function nominalLength(period: CalendarPeriod): number {
  return period === "day" ? DAY : period === "week" ? 7 * DAY : 30 * DAY;
}

/**
 * calendarOf returns a calendar config's periods with its defaults filled in: `timeZone` "UTC",
 * `anchor` {@link DEFAULT_ANCHOR}.
 */
export function calendarOf(config: { period: CalendarPeriod; timeZone?: string; anchor?: number }): Calendar {
  return { period: config.period, timeZone: config.timeZone ?? "UTC", anchor: config.anchor ?? DEFAULT_ANCHOR[config.period] };
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/**
 * isTimeZone reports whether the runtime knows `timeZone` as an IANA zone name (what
 * `Intl.DateTimeFormat` accepts, e.g. "Europe/London"; case-insensitive, as Intl is).
 */
export function isTimeZone(timeZone: string): boolean {
  if (timeZone.length === 0) return false;
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/**
 * wallClock returns the local wall-clock time in `timeZone` at instant `t` (UTC ms), as the ms
 * since 1970-01-01T00:00 of that wall clock: `Date.UTC` of the local date and time.
 */
export function wallClock(t: number, timeZone: string): number {
  if (timeZone === "UTC") return t;
  const second = math.floor(t / 1000) * 1000;
  let y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  for (const part of formatter(timeZone).formatToParts(second)) {
    switch (part.type) {
      case "year": y = Number(part.value); break;
      case "month": mo = Number(part.value); break;
      case "day": d = Number(part.value); break;
      // Some engines write midnight as 24 even with h23.
      case "hour": h = Number(part.value) % 24; break;
      case "minute": mi = Number(part.value); break;
      case "second": s = Number(part.value); break;
    }
  }
  return Date.UTC(y, mo - 1, d, h, mi, s) + (t - second);
}

/** The days in month `m` (0–11) of year `y`. */
function daysIn(y: number, m: number): number {
  return new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
}

/** The local day number (days since 1970-01-01, a Thursday) of the first weekday `anchor` on or after it. */
function weekOffset(anchor: number): number {
  return (((anchor - 4) % 7) + 7) % 7;
}

/** The wall-clock time (see {@link wallClock}) at which period `k` starts. */
function localStart(k: number, cal: Calendar): number {
  switch (cal.period) {
    case "day":
      return k * DAY + cal.anchor * HOUR;
    case "week":
      return (7 * k + weekOffset(cal.anchor)) * DAY;
    case "month": {
      const y = math.floor(k / 12);
      const m = k - 12 * y;
      return Date.UTC(y, m, math.min(cal.anchor, daysIn(y, m)));
    }
    default: {
      const never: never = cal.period;
      throw new Error(`unknown period ${String(never)}`);
    }
  }
}

/** The index of the period whose local start is the last at or before wall-clock time `w`. */
function localIndex(w: number, cal: Calendar): number {
  switch (cal.period) {
    case "day":
      return math.floor((w - cal.anchor * HOUR) / DAY);
    case "week":
      return math.floor((math.floor(w / DAY) - weekOffset(cal.anchor)) / 7);
    case "month": {
      const date = new Date(w);
      const k = date.getUTCFullYear() * 12 + date.getUTCMonth();
      return w < localStart(k, cal) ? k - 1 : k;
    }
    default: {
      const never: never = cal.period;
      throw new Error(`unknown period ${String(never)}`);
    }
  }
}

/**
 * instantOf returns the first instant (UTC ms) at which the wall clock in `timeZone` reads `w` (a
 * {@link wallClock} time). A local time that happens twice (clocks set back) is its first
 * occurrence; one that never happens (clocks set forward over it) is the instant the gap ends, the
 * first instant whose local time is later than it.
 */
export function instantOf(w: number, timeZone: string): number {
  if (timeZone === "UTC") return w;
  // The offsets in force around w: a day either side covers every zone's offset (at most ±14 h).
  const offsets = new Set<number>();
  for (const probe of [w - DAY, w + DAY]) {
    const o = wallClock(probe, timeZone) - probe;
    offsets.add(o);
    offsets.add(wallClock(w - o, timeZone) - (w - o));
  }
  let first = Infinity;
  for (const o of offsets) if (wallClock(w - o, timeZone) === w && w - o < first) first = w - o;
  if (first !== Infinity) return first;
  // A gap: before it the clock reads earlier than w, after it later; the end of the gap is the
  // first instant it reads later, found by bisection between the two offsets' readings.
  let lo = w - math.max(...offsets);
  let hi = w - math.min(...offsets);
  while (hi - lo > 1) {
    const mid = math.floor((lo + hi) / 2);
    if (wallClock(mid, timeZone) >= w) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** Period starts already computed, by zone, period, anchor and index (bounded: a cache, not state). */
const starts = new Map<string, number>();
const MAX_MEMO = 4096;

/**
 * periodStart returns the instant (UTC ms) period `k` starts: the local start (see
 * {@link Calendar}) as {@link instantOf} places it. Consecutive periods never start out of order;
 * a period whose local start falls in a gap with the next one's is empty.
 */
export function periodStart(k: number, cal: Calendar): number {
  if (!Number.isFinite(k)) return k;
  const id = `${cal.timeZone}\u0000${cal.period}\u0000${cal.anchor}\u0000${k}`;
  let start = starts.get(id);
  if (start === undefined) {
    start = instantOf(localStart(k, cal), cal.timeZone);
    if (starts.size >= MAX_MEMO) starts.clear();
    starts.set(id, start);
  }
  return start;
}

/**
 * periodIndex returns the index of the period containing instant `t` (UTC ms): the largest k with
 * `periodStart(k) <= t`. Indexes are consecutive whole numbers (days, weeks or months since 1970
 * in local time), so `periodIndex(t2) - periodIndex(t1)` counts the boundaries crossed between.
 */
export function periodIndex(t: number, cal: Calendar): number {
  // NaN and ±Infinity (no instant) index as themselves, as `windowIndex` does.
  if (!Number.isFinite(t)) return t;
  // Most calls ask about the period the last one found (a key's row and now): its memoized
  // bounds answer without reading the zone's clock.
  const id = `${cal.timeZone}\u0000${cal.period}\u0000${cal.anchor}`;
  const last = lastIndex.get(id);
  if (last !== undefined) {
    // That period or a neighbour (a wait's search asks just before and at a period's end).
    for (const k of [last, last + 1, last - 1]) if (periodStart(k, cal) <= t && t < periodStart(k + 1, cal)) return k;
  }
  let k = localIndex(wallClock(t, cal.timeZone), cal);
  while (periodStart(k, cal) > t) k--;
  while (periodStart(k + 1, cal) <= t) k++;
  if (lastIndex.size >= MAX_MEMO) lastIndex.clear();
  lastIndex.set(id, k);
  return k;
}

/** The period each calendar's last {@link periodIndex} found (a cache, not state). */
const lastIndex = new Map<string, number>();

/** periodEnd returns the instant (UTC ms) the period containing `t` ends: the next one's start. */
export function periodEnd(t: number, cal: Calendar): number {
  return periodStart(periodIndex(t, cal) + 1, cal);
}
