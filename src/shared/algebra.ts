// The rate-limit algebra: pure functions of (state, params, now, count). The decision code takes
// time as an argument and draws no random numbers; only the two public conveniences built on it
// (predict.ts: `calculateRateLimit` and `decideRateLimit`) default `now` to `Date.now()`. The
// server and the React hook call the same code.
import { kindOf, type RateLimitConfig } from "./validators.js";
import type { RowLayout } from "./stored.js";
import { minus } from "./split.js";
import { invalid } from "./validate.js";
import { math } from "./math.js";
import { appendedLog, carriedLog, decodeLog, encodeLog, freedAt, live, logTotal, scanLog, takenLog, trimmedLog, withGivenBack, withTaken, type Entry } from "./window-log.js";

/**
 * SECOND is one second in ms (1000), for configs: `{ rate: 10, period: SECOND }`. Periods, and
 * every other duration and instant in this package, are in ms.
 */
export const SECOND = 1000;
/** MINUTE is one minute in ms (60 000). */
export const MINUTE = 60 * SECOND;
/** HOUR is one hour in ms (3 600 000). */
export const HOUR = 60 * MINUTE;
/** DAY is one day in ms (86 400 000). */
export const DAY = 24 * HOUR;
/** WEEK is one week in ms (604 800 000). */
export const WEEK = 7 * DAY;

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
 */
export type Params = Pick<RowLayout, "kind" | "rate" | "period" | "capacity"> & {
  maxReserved: number;
  phase: number;
  terms?: string;
};

/** phaseOf normalizes an instant `start` (ms) into a phase in [0, `period`) (ms). */
export function phaseOf(start: number, period: number): number {
  const phase = start % period;
  // `+ 0` turns the -0 a negative multiple of the period leaves into 0.
  return phase < 0 ? phase + period : phase + 0;
}

/**
 * windowIndex returns the index of the fixed window containing `t` (ms): the largest whole k with
 * `phase + k * period <= t`, computed with the same float expression as {@link windowStart}, so a
 * stored window start always maps back to its own window (a plain `floor` of the quotient can
 * land one window early at a boundary, which would grant a refill mid-window).
 */
export function windowIndex(t: number, p: Pick<Params, "phase" | "period">): number {
  let k = math.floor((t - p.phase) / p.period);
  if (p.phase + (k + 1) * p.period <= t) k += 1;
  else if (p.phase + k * p.period > t) k -= 1;
  return k;
}

/** windowStart returns the start (ms) of the fixed window containing `t` (ms). */
export function windowStart(t: number, p: Pick<Params, "phase" | "period">): number {
  return p.phase + windowIndex(t, p) * p.period;
}

/**
 * `x` rounded to the nearest whole number when it is within float rounding error of one
 * (relative 1e-12; an operation or two of float error is about 1e-16), else `x` unchanged.
 */
function wholeIfClose(x: number): number {
  const whole = math.round(x);
  return math.abs(x - whole) <= 1e-12 * math.max(1, math.abs(x)) ? whole : x;
}

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
      const entries = entriesOf(state, p);
      const kept = live(entries, ts, p.period);
      const out: State = { value: roomFor(kept, p), ts };
      if (kept.length > 0) out.log = kept === entries && isLogOf(state, entries) ? state.log! : encodeLog(kept);
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
function entriesOf(state: State, p: Params): readonly Entry[] {
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
function roomFor(entries: readonly Entry[], p: Params): number {
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
  if (left >= 0) return rate;
  // Windows until nothing is owed: the least n with left + n × rate ≥ 0.
  let owing = math.ceil(-left / rate);
  while (owing > 1 && minus(left, -(owing - 1) * rate) >= 0) owing--;
  while (minus(left, -owing * rate) < 0) owing++;
  if (windows > owing) return rate;
  return minus(left, -windows * rate);
}

/**
 * leastDelay returns the least whole number of ms d ≥ 1 such that `ok(now + d)`, for a predicate
 * that turns true at some instant and stays true. `guess` is a float estimate of d (ms); it is
 * corrected by evaluating `ok` itself, so the answer agrees with the evaluation to the millisecond
 * whatever float rounding did to the estimate. `count` (default NaN) only names the request in the
 * error thrown when the wait doesn't fit in a number.
 */
export function leastDelay(
  ok: (t: number) => boolean,
  now: number,
  guess: number,
  count: number = NaN,
): number {
  let hi = Number.isFinite(guess) ? math.max(1, math.ceil(guess)) : 1;
  let lo = 0; // a d known to fail; 0 stands for "nothing below 1 is allowed"
  if (ok(now + hi)) {
    for (let step = 1; hi - step >= 1; step *= 2) {
      if (!ok(now + hi - step)) {
        lo = hi - step;
        break;
      }
      hi -= step;
    }
  } else {
    lo = hi;
    for (let step = 1; ; step *= 2) {
      const next = lo + step;
      if (!Number.isFinite(next)) {
        throw invalid("count", count, "can never succeed: the wait would not fit in a number of ms");
      }
      if (ok(now + next)) {
        hi = next;
        break;
      }
      lo = next;
    }
  }
  while (hi - lo > 1) {
    const mid = math.floor((lo + hi) / 2);
    if (mid <= lo || mid >= hi) break; // float granularity: nothing lies between
    if (ok(now + mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** A float estimate of how long until `state` holds `need` tokens (a guess for {@link leastDelay}). */
function guessDelay(cur: State, p: Params, now: number, need: number): number {
  const missing = need - cur.value;
  const from = math.max(cur.ts, now) - now;
  switch (p.kind) {
    case "token bucket":
      return from + (missing * p.period) / p.rate;
    case "fixed window": {
      const windows = math.ceil(missing / p.rate);
      return p.phase + (windowIndex(cur.ts, p) + windows) * p.period - now;
    }
    case "sliding window":
      // Within the window the value grows at prev / period per ms; past it, the rest follows.
      return from + (missing * p.period) / math.max(cur.prev ?? 0, p.rate / 2);
    case "exact sliding window": {
      // Exactly when the oldest takes that free enough leave the window.
      const at = freedAt(entriesOf(cur, p), cur.value, need, p.period);
      return at === undefined ? from + p.period : at - now;
    }
    default: {
      const never: never = p.kind;
      throw new Error(`unknown kind ${String(never)}`);
    }
  }
}

/**
 * delayUntil returns the least whole number of ms d ≥ 1 after which `state` holds at least `need`
 * tokens, with no other traffic. A full row must pass `test`, or the wait never ends (an error).
 * `test` is the exact condition on the value that the caller decides with (by default
 * `value >= need`); searching on it, rather than on `need`, keeps the answer right where float
 * rounding makes `value - count >= floor` and `value >= count + floor` disagree. `count` names the
 * request in errors (default `need`).
 */
export function delayUntil(
  state: State | null,
  p: Params,
  now: number,
  need: number,
  test: (value: number) => boolean = (value) => minus(value, need) >= 0,
  count: number = need,
): number {
  // A full row is the best there can ever be: if even it fails the test, the wait never ends.
  if (!test(p.capacity)) {
    throw invalid("count", count, `needs ${need} tokens but the capacity is ${p.capacity}`);
  }
  const cur = evaluate(state, p, now);
  return leastDelay((t) => test(valueAt(state, p, t)), now, guessDelay(cur, p, now, need), count);
}

/**
 * RowDecision is the outcome of a request against one row, before anything is written:
 * `retryAfter` is in ms, and `next` is the row to store, if any.
 */
export type RowDecision =
  | { ok: true; retryAfter?: number; next?: State }
  | { ok: false; retryAfter: number };

/**
 * decideRow decides a request of `count` tokens against one row at `now` (ms).
 * - `count` 0 is a peek: ok exactly when the value is ≥ 0; it never writes (`next` is unset).
 * - Without `reserve`: ok when `count` tokens are there; `next` is the row after taking them.
 * - With `reserve`: ok when taking them leaves a debt no deeper than `maxReserved`; then
 *   `retryAfter` (if set) is when the debt is repaid, i.e. when the reserved work may run.
 * - Refused: `retryAfter` is the least whole ms after which the same request succeeds.
 */
export function decideRow(
  state: State | null,
  p: Params,
  now: number,
  count: number,
  reserve: boolean,
): RowDecision {
  // An exact window's take: its log trimmed and taken from in one buffer (see `takenLog`).
  if (p.kind === "exact sliding window" && count > 0 && state !== null && state.log !== undefined) {
    const ts = now > state.ts ? now : state.ts;
    const scan = scanLog(state.log, ts - p.period);
    if (scan !== undefined && scan.live > 0 && minus(minus(p.capacity, scan.total), count) >= 0) {
      const log = takenLog(state.log, scan, ts, count);
      if (log !== undefined) return { ok: true, next: { value: minus(p.capacity, scan.total + count), ts, log } };
    }
  }
  const cur = evaluate(state, p, now);
  if (count === 0) {
    return cur.value >= 0 ? { ok: true } : { ok: false, retryAfter: delayUntil(state, p, now, 0) };
  }
  const floor = reserve ? -p.maxReserved : 0;
  if (minus(cur.value, count) >= floor) {
    const next = withValue(cur, p, minus(cur.value, count));
    if (next.value >= 0) return { ok: true, next };
    return { ok: true, next, retryAfter: delayUntil(next, p, now, 0, undefined, count) };
  }
  const accepts = (value: number) => minus(value, count) >= floor;
  return { ok: false, retryAfter: delayUntil(state, p, now, count + floor, accepts, count) };
}

/**
 * paramsOf returns the params of a whole config (or of one row, for a config that is one shard's
 * share), with fixed windows starting at `phase` (ms): `capacity` defaults to `rate`, and
 * `maxReserved` to `Infinity` (unlimited).
 */
export function paramsOf(config: RateLimitConfig, phase: number): Params {
  return {
    kind: kindOf(config),
    rate: config.rate,
    period: config.period,
    capacity: config.capacity ?? config.rate,
    maxReserved: config.maxReserved ?? Infinity,
    phase,
  };
}
