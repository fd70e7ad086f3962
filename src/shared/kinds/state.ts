// A row's state as of an instant: what one row stores (`State`), the params a layout gives its
// shards (`Params`), and the pure functions that carry a row to `now` (refill, slide, the exact
// window's log), or to a new value. algebra.ts decides requests and waits on them, and re-exports
// what it doesn't add.
import type { RowLayout } from "../shapes/stored.js";
import { minus, wholeIfClose } from "../core/split.js";
import { math } from "../core/math.js";
import type { Calendar } from "../core/calendar.js";
import { windowIndex, windowStart } from "./windows.js";
import { appendedLog, carriedLog, decodeLog, encodeLog, live, logTotal, scanLog, trimmedLog, withGivenBack, withTaken, type Entry } from "./window-log.js";

/**
 * State is what one row stores: `value` tokens available at `ts` (ms). `value` < 0 is reserved
 * debt. An approximate sliding window also stores `prev`: the tokens taken in the aligned window
 * before the one containing `ts` (absent or 0 for the other kinds). An exact sliding window stores
 * `log`: what it took in the window ending at `ts`, as `encodeLog` bytes; without one, its
 * `capacity - value` tokens are taken to have been taken at `ts` (see `carriedLog`).
 */
export type State = { value: number; ts: number; prev?: number; log?: ArrayBuffer };

/**
 * stateOf returns the `State` in a stored row or a reported one: `value` at `ts`, and a sliding
 * window's `prev` or `log` when it has one (no other field).
 */
export function stateOf(row: Pick<State, "value" | "ts" | "prev" | "log">): State {
  const state: State = row.prev === undefined ? { value: row.value, ts: row.ts } : { value: row.value, ts: row.ts, prev: row.prev };
  if (row.log !== undefined) state.log = row.log;
  return state;
}

/**
 * Params holds the numbers that govern one row: a whole unsharded limit, or one shard's share of a
 * sharded one. `rate` is tokens per `period` (ms); `capacity` and `maxReserved` are tokens, and
 * `maxReserved` is `Infinity` when unlimited. `phase` (ms) is where fixed windows (and a sliding
 * window's two counting windows) start (mod `period`); it is unused by token buckets. `terms`,
 * for a shard of a stored limit, are the whole limit's terms its rows record (see `shardParams`).
 * `cal`, for a calendar limit (kind `"fixed window"`), places the windows on the calendar instead:
 * `phase` is then 0 and `period` the nominal length (see `nominalLength`), for estimates only.
 */
export type Params = Pick<RowLayout, "kind" | "rate" | "period" | "capacity"> & {
  maxReserved: number;
  phase: number;
  terms?: string;
  cal?: Calendar;
};

/**
 * evaluate returns a row as of `now` (ms): the tokens available then, and the `ts` to store with
 * them.
 * A missing row (`null`) is a full one. Time never runs backwards: if `now` is before the row's
 * `ts` (clock skew between servers), no time has passed, so no tokens are gained or lost. A value
 * above `capacity` (the config was lowered) is clamped to it.
 */
export function evaluate(state: State | null, p: Params, now: number): State {
  switch (p.kind) {
    case "token bucket": {
      if (state === null) return { value: p.capacity, ts: now };
      if (!(now > state.ts)) return { value: math.min(state.value, p.capacity), ts: state.ts };
      return { value: math.min(refill(state.value, now - state.ts, p.rate, p.period), p.capacity), ts: now };
    }
    case "fixed window": {
      if (state === null) return { value: p.capacity, ts: windowStart(now, p) };
      // Boundaries crossed in (ts, now]. Negative (clock skew) or NaN means none.
      const crossed = windowIndex(now, p) - windowIndex(state.ts, p);
      if (!(crossed > 0)) return { value: math.min(state.value, p.capacity), ts: state.ts };
      return {
        value: math.min(state.value + crossed * p.rate, p.capacity),
        ts: windowStart(now, p),
      };
    }
    case "sliding window":
      return slide(state, p, now);
    case "exact sliding window": {
      if (state === null) return { value: p.capacity, ts: now };
      // Time never runs backwards: before the row's `ts`, it stands as it was.
      const ts = now > state.ts ? now : state.ts;
      // From the bytes, without building the entries: what every call does.
      const scan = state.log === undefined ? undefined : scanLog(state.log, ts - p.period);
      if (scan !== undefined) {
        if (scan.live === 0) return { value: p.capacity, ts };
        return { value: minus(p.capacity, scan.total), ts, log: trimmedLog(state.log!, scan) };
      }
      // No log, or bytes that aren't one (scanLog refuses exactly what decodeLog refuses): the
      // entries are carried (see `entriesOf`), so their bytes are new.
      const kept = live(entriesOf(state, p), ts, p.period);
      const out: State = { value: roomFor(kept, p), ts };
      if (kept.length > 0) out.log = encodeLog(kept);
      return out;
    }
    default: {
      const never: never = p.kind;
      throw new Error(`unknown kind ${String(never)}`);
    }
  }
}

/**
 * The entries of an exact sliding window's state: its log, or, for a state without one (or with
 * bytes that aren't a log), `capacity - value` tokens taken at its `ts` (see `carriedLog`).
 */
export function entriesOf(state: State, p: Params): readonly Entry[] {
  const decoded = state.log === undefined ? undefined : decodeLog(state.log);
  return decoded ?? carriedLog(minus(p.capacity, state.value), state.ts, p.rate, p.period);
}

/**
 * withValue returns a state evaluated at its `ts` (`evaluate`'s result) with `value` tokens
 * instead: tokens taken (a lower value) or given back (a higher one). An exact window's value is
 * then recomputed from its log, as the next read computes it. An exact sliding window logs
 * a take at the state's `ts` and gives back the oldest takes first (see `withGivenBack`); the
 * other kinds store the value alone.
 */
export function withValue(cur: State, p: Params, value: number): State {
  if (p.kind !== "exact sliding window") return { ...cur, value };
  const change = minus(cur.value, value);
  if (change > 0) {
    // A take at the end of the log: written onto its bytes (see `appendedLog`).
    const scan = cur.log === undefined ? (cur.value === p.capacity ? EMPTY_SCAN : undefined) : scanLog(cur.log, -Infinity);
    const log = scan === undefined ? undefined : appendedLog(cur.log ?? EMPTY_BYTES, scan, cur.ts, change);
    if (log !== undefined) return { value: minus(p.capacity, scan!.total + change), ts: cur.ts, log };
  }
  const entries = entriesOf(cur, p);
  const next = change > 0 ? withTaken(entries, cur.ts, change) : change < 0 ? withGivenBack(entries, -change) : entries;
  // The value the next read computes from the log (the caller's can differ from it by float noise).
  const out: State = { value: change === 0 ? cur.value : roomFor(next, p), ts: cur.ts };
  if (next.length > 0) out.log = next === entries && isLogOf(cur, entries) ? cur.log! : encodeLog(next);
  return out;
}

/** The bytes of an empty log, and what `scanLog` finds in them. */
const EMPTY_BYTES = new ArrayBuffer(0);
const EMPTY_SCAN = scanLog(EMPTY_BYTES, -Infinity)!;

/** Whether `entries` are the decoded bytes of `state.log` (not rebuilt from its value). */
function isLogOf(state: State, entries: readonly Entry[]): boolean {
  return state.log !== undefined && decodeLog(state.log) === entries;
}

/**
 * valueAt returns `evaluate(state, p, t).value`, the tokens a row holds at `t` (ms), without
 * building the state: a wait's search asks it at many instants.
 */
export function valueAt(state: State | null, p: Params, t: number): number {
  if (p.kind !== "exact sliding window" || state === null) return evaluate(state, p, t).value;
  return roomFor(live(entriesOf(state, p), t > state.ts ? t : state.ts, p.period), p);
}

/**
 * The tokens an exact window holds with `entries` in its window: its capacity less their sum, and
 * the capacity itself, exactly, with none (`minus` would snap a capacity like 3.7 − 2 =
 * 1.7000000000000002 to 1.7, which a full row's value, the capacity, is not).
 */
export function roomFor(entries: readonly Entry[], p: Params): number {
  return entries.length === 0 ? p.capacity : minus(p.capacity, logTotal(entries));
}

/**
 * `value` plus what `rate` per `period` (ms) adds over `elapsed` ms. It works in tokens × ms
 * ("scaled"), where whole-number configs and timestamps keep every quantity whole, so a third of
 * a token plus two thirds is exactly one token, not 0.9999999999999999: the stored value is the
 * scaled one divided by the period, and the whole number it came from is recovered when it is one
 * up to float rounding.
 */
function refill(value: number, elapsed: number, rate: number, period: number): number {
  // Nothing added (a sliding window with nothing behind it): the value exactly as it was.
  if (elapsed * rate === 0) return value;
  return (wholeIfClose(value * period) + elapsed * rate) / period;
}

/**
 * A sliding window row as of `now` (see {@link evaluate}). The sliding window counts `taken` in
 * the current aligned window and `prev` in the one before, and admits while
 * `rate - taken - prev * (1 - f) >= count`, where f is the fraction of the current window elapsed:
 * the previous window's count weighted by how much of it the sliding window still overlaps. The
 * row stores the tokens that leaves, `value`, at `ts`, and `prev`; so within a window `value`
 * grows at `prev / period` per ms (the previous window sliding out), and at a boundary the window
 * just ended becomes `prev` (`rate - value` at its end), growing `value` back to `rate` over the
 * next window. Continuous at boundaries, so a wait found by searching it is exact. A negative
 * value (a debt carried in from another kind: a sliding window can't reserve) is repaid at the
 * rate, a window's worth per window.
 */
function slide(state: State | null, p: Params, now: number): State {
  if (state === null) return { value: p.capacity, ts: now, prev: 0 };
  const prev = state.prev ?? 0;
  if (!(now > state.ts)) return { value: math.min(state.value, p.capacity), ts: state.ts, prev };
  const k = windowIndex(state.ts, p);
  const crossed = windowIndex(now, p) - k;
  if (!(crossed > 0)) {
    return { value: math.min(refill(state.value, now - state.ts, prev, p.period), p.capacity), ts: now, prev };
  }
  // What the row's window left at its end, then at the end of each whole window since.
  const end = p.phase + (k + 1) * p.period;
  const atEnd = math.min(refill(state.value, end - state.ts, prev, p.period), p.capacity);
  const left = leftAfter(atEnd, crossed - 1, p.rate);
  // What the window just ended took becomes the previous window's count and slides out over the
  // current one. A window that ended owing (a debt carried in from another kind) took its whole
  // rate, and the rest stays owed: a debt is repaid at the rate, never forgotten.
  const taken = minus(p.rate, math.max(0, left));
  const start = p.phase + (k + crossed) * p.period;
  return { value: math.min(refill(left, now - start, taken, p.period), p.capacity), ts: now, prev: taken };
}

/**
 * What a sliding window holds at the end of `windows` whole windows with no traffic, from `left`
 * at the start of the first: its rate once it owes nothing; while it owes, `rate` more per window.
 */
function leftAfter(left: number, windows: number, rate: number): number {
  if (windows <= 0) return left;
  // Owing nothing after all but the last window, the last kept its whole rate. One test at that
  // window (whether `left + n × rate ≥ 0`, which once true stays true as n grows), not a count of
  // the windows owed: a debt can be more windows deep than a float counts (past 2^53, n - 1 is n).
  if (minus(left, -(windows - 1) * rate) >= 0) return rate;
  return minus(left, -windows * rate);
}
